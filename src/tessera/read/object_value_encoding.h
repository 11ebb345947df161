// The nested forms of an object element's bytes (object_read.h, ObjectType): a record's slot
// values and a sequence's object values each travel as a u64 little-endian length followed by
// that many bytes. Writers append parts; readers take them back in order, checking every length
// against what is left, so a malformed element fails as corrupt data instead of reading past it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tessera/core/status.h"

namespace tessera {

inline constexpr size_t kObjectPartLengthBytes = 8;

// Appends `part` to *out as u64 LE length + bytes.
void AppendObjectPart(std::string_view part, std::string* out);
// Appends a u64 LE count (a sequence of objects' value count) to *out.
void AppendObjectCount(uint64_t count, std::string* out);

// Reads parts back from an element's bytes, front to back.
class ObjectPartReader {
 public:
  // `what` names the element in errors ("element 3 of the selection").
  ObjectPartReader(std::string_view bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}
  // The next `n` raw bytes (a record's fixed part).
  Result<std::string_view> Raw(size_t n);
  // The next u64 LE value (a count).
  Result<uint64_t> Count();
  // The next length-prefixed part.
  Result<std::string_view> Part();
  size_t left() const { return bytes_.size() - pos_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
  std::string what_;
};

}  // namespace tessera
