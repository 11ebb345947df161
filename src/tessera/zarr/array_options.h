// Builds Zarr v3 array metadata from the handful of choices a user makes (the CLI and the
// streaming writer share this): dtype, shape, chunk shape, chunks per shard, compressor.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/codec/sharding_codec.h"
#include "tessera/spec/array_spec.h"
#include "tessera/zarr/metadata.h"

namespace tessera::zarr {

struct ArrayOptions {
  DataType dtype = DataType::kUInt8;
  std::vector<int64_t> shape;
  std::vector<int64_t> chunk_shape;       // the (inner) chunk shape
  std::vector<int64_t> chunks_per_shard;  // empty = unsharded
  std::string codec = "zstd";             // none | zstd | gzip | blosc-lz4 | blosc-zstd | blosc
  std::optional<int> level;               // codec default when unset
  BloscSpecOptions blosc;                 // codec blosc's settings (zarr/blosc_settings.h); none for other codecs
  nlohmann::json chunk_codecs = nullptr;  // each chunk's codecs as given, in place of codec and level
  IndexLocation index_location = IndexLocation::kEnd;
  nlohmann::json fill_value = nullptr;     // null = the dtype's zero (false, 0, 0.0, [0, 0])
  std::optional<nlohmann::json> dimension_names;
  nlohmann::json attributes = nlohmann::json::object();
};

// The bytes->bytes codec JSON list for a compressor name (empty for "none"); `blosc`: codec
// blosc's settings, an error with any other codec (CheckBloscSettings).
Result<nlohmann::json> CompressorCodecs(const std::string& codec, std::optional<int> level, DataType dtype,
                                        const BloscSpecOptions& blosc = {});

Result<ArrayMetadata> BuildArrayMetadata(const ArrayOptions& options);

}  // namespace tessera::zarr
