// Zarr v3 `zarr.json` documents for arrays and groups: pure parse/encode, no I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/dtype.h"
#include "tessera/core/status.h"
#include "tessera/zarr/fixed_bytes_type.h"
#include "tessera/zarr/time_data_type.h"

namespace tessera::zarr {

// How chunk grid coordinates become store keys.
struct ChunkKeyEncoding {
  enum class Kind { kDefault, kV2 };
  Kind kind = Kind::kDefault;
  char separator = '/';
  // Trailing coordinates left out of keys: the code-unit dimension of a fixed-size bytes or
  // string array (zarr/fixed_bytes_type.h), always chunk 0; not part of the document.
  size_t unit_dims = 0;

  // default: "c/1/2" ("c" for a rank-0 array); v2: "1.2" ("0" for rank 0).
  std::string Key(const std::vector<int64_t>& chunk_coords) const;
  nlohmann::json ToJson() const;
  static Result<ChunkKeyEncoding> FromJson(const nlohmann::json& j);
};

struct ArrayMetadata {
  std::vector<int64_t> shape;
  DataType dtype = DataType::kUInt8;
  // data_type "bfloat16": dtype is then kUInt16 (its bit patterns, read through the same codecs)
  // and fill_value those bits (zarr/bfloat16_fill.h); readers present the elements as bfloat16.
  bool bfloat16 = false;
  // data_type numpy.datetime64 / numpy.timedelta64 (zarr/time_data_type.h): dtype is then kInt64
  // (the counts, read through the same codecs); readers present the elements as time->Numpy().
  std::optional<TimeDataType> time;
  // data_type null_terminated_bytes / fixed_length_utf32 / raw_bytes (zarr/fixed_bytes_type.h):
  // shape and chunk_shape then end with the element's code units, dtype is the unit (uint8, or
  // uint32 for UTF-32), codecs are rewritten to match (CodecsWithUnitDimension), fill_value is
  // one unit (all zeros when the element's fill is no repetition of one unit: only sharded arrays
  // need it, for inner chunks left out of a shard, and they are refused then), and element_fill
  // is the whole element's fill; stored_codecs and stored_fill_value are the document's.
  std::optional<FixedBytesType> fixed;
  Bytes element_fill;
  nlohmann::json stored_codecs;
  nlohmann::json stored_fill_value;
  std::vector<int64_t> chunk_shape;  // the regular grid's chunk shape (the shard shape if sharded)
  ChunkKeyEncoding chunk_key_encoding;
  FillValue fill_value;
  nlohmann::json codecs = nlohmann::json::array();
  // One entry per dimension, null entries allowed; absent when the document has none.
  std::optional<nlohmann::json> dimension_names;
  nlohmann::json attributes = nlohmann::json::object();

  int rank() const { return static_cast<int>(shape.size()); }
  nlohmann::json ToJson() const;
  // Validates everything that does not need the codec registry (shapes, dtype, fill value,
  // chunk grid, key encoding, unknown must-understand fields).
  static Result<ArrayMetadata> FromJson(const nlohmann::json& j);
};

// Parses zarr.json text; malformed JSON is kCorruptData naming `where` (the file) and the offset.
Result<nlohmann::json> ParseJsonDocument(const std::string& text, const std::string& where);

nlohmann::json GroupMetadataJson(const nlohmann::json& attributes);

}  // namespace tessera::zarr
