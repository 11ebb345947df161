#include "tessera/read/object_value_encoding.h"

namespace tessera {

void AppendObjectCount(uint64_t count, std::string* out) {
  for (size_t i = 0; i < kObjectPartLengthBytes; ++i) out->push_back(static_cast<char>(count >> (8 * i)));
}

void AppendObjectPart(std::string_view part, std::string* out) {
  AppendObjectCount(part.size(), out);
  out->append(part);
}

Result<std::string_view> ObjectPartReader::Raw(size_t n) {
  if (n > left()) {
    return CorruptData(what_ + ": needs " + std::to_string(n) + " more bytes at byte " + std::to_string(pos_) + ", " +
                       std::to_string(left()) + " left");
  }
  std::string_view out = bytes_.substr(pos_, n);
  pos_ += n;
  return out;
}

Result<uint64_t> ObjectPartReader::Count() {
  TESSERA_ASSIGN_OR_RETURN(std::string_view raw, Raw(kObjectPartLengthBytes));
  uint64_t v = 0;
  for (size_t i = kObjectPartLengthBytes; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(raw[i]);
  return v;
}

Result<std::string_view> ObjectPartReader::Part() {
  TESSERA_ASSIGN_OR_RETURN(uint64_t n, Count());
  if (n > left()) {
    return CorruptData(what_ + ": a part of " + std::to_string(n) + " bytes at byte " + std::to_string(pos_) + ", " +
                       std::to_string(left()) + " left");
  }
  return Raw(static_cast<size_t>(n));
}

}  // namespace tessera
