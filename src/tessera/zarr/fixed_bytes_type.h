// Zarr's fixed-size bytes and string data types: numpy's "S" (zero-padded bytes), "U" (UTF-32
// code units) and "V" (raw bytes) elements of a fixed length.
//   v3: {"name": "null_terminated_bytes" | "fixed_length_utf32" | "raw_bytes", "configuration": {"length_bytes": n}}
//   v2: "|S5", "<U7" / ">U7", "|V8"
// tessera reads such an array as an array of code units (uint8; uint32 for "U", whose units the
// `bytes` codec's endian swaps as zarr-python does) with one more, trailing dimension of the
// element's units, left out of chunk keys; readers see numpy's "|S5" / "<U7" / "|V8" elements.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/core/status.h"

namespace tessera::zarr {

struct FixedBytesType {
  char kind = 'S';        // numpy's kind: 'S', 'U' or 'V' (structured types too: zarr/structured_type.h)
  size_t item_bytes = 1;  // numpy's itemsize (4 per character for 'U')
  // A structured type: numpy's dtype in core/element_type.h's JSON form, its description, and the
  // data_type as the document spells it; null / empty otherwise.
  nlohmann::json structure;
  std::string structure_description;
  nlohmann::json structure_data_type;
  // Whether a structured type's bytes depend on the `bytes` codec's endian (a multi-byte field
  // named without a byte order): the record's bytes are taken as stored, so only "little" is read.
  bool endian_fields = false;

  nlohmann::json NumpyJson() const { return structure.is_null() ? nlohmann::json(Numpy()) : structure; }

  DataType unit() const { return kind == 'U' ? DataType::kUInt32 : DataType::kUInt8; }
  int64_t units() const { return static_cast<int64_t>(item_bytes / ItemSize(unit())); }
  std::string Numpy() const;        // "|S5", "<U7", "|V8"
  std::string Description() const;  // "bytes[5]", "UTF-32 string[7]", "raw bytes[8]"
  nlohmann::json ToJson() const;    // the v3 data_type object
  // The v3 data_type `j`: nullopt when it names no such type, an error when it does but is malformed.
  static Result<std::optional<FixedBytesType>> FromJson(const nlohmann::json& j);
  // A numpy/v2 dtype without its byte-order character: "S5", "U7", "V8"; nullopt if no such type.
  static std::optional<FixedBytesType> FromNumpy(std::string_view t);
};

// One element (item_bytes, numpy's little-endian layout) from fill_value: base64 text for S and V
// (zarr-python's form; shorter values zero-padded), text for U; null or 0 is all zeros.
Result<Bytes> ParseFixedBytesFill(const FixedBytesType& type, const nlohmann::json& j);

// `codecs` of an array of `rank` dimensions, for the same array with a trailing dimension of
// `units` code units: sharding's chunk_shape and transpose's order grow by that dimension
// (recursively); other array -> array codecs are refused, naming them.
Result<nlohmann::json> CodecsWithUnitDimension(const nlohmann::json& codecs, size_t rank, int64_t units);

}  // namespace tessera::zarr
