// The Neuroglancer precomputed `info` JSON (pure parse / serialise). Vectors stay in the format's
// (x, y, z) order here; the volume driver converts to tessera's C order once.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/dtype.h"
#include "tessera/core/status.h"
#include "tessera/index/chunk_grid.h"
#include "tessera/precomputed/sharding_spec.h"
#include "tessera/store/store.h"

namespace tessera::precomputed {

enum class ChunkEncoding { kRaw, kCompressedSegmentation, kJpeg };

struct ScaleInfo {
  std::string key;
  std::array<int64_t, 3> size{};          // voxels (x, y, z)
  std::array<int64_t, 3> voxel_offset{};  // (x, y, z)
  std::array<int64_t, 3> chunk_size{};    // the first of "chunk_sizes"
  std::array<double, 3> resolution{};     // nm (x, y, z)
  ChunkEncoding encoding = ChunkEncoding::kRaw;
  std::array<int64_t, 3> compressed_segmentation_block_size{};
  std::optional<ShardingSpec> sharding;
  nlohmann::json extra = nlohmann::json::object();  // members we do not interpret, kept on rewrite

  // The scale's chunk grid with dimensions in (x, y, z) order like the fields above: for chunk
  // counts, boxes and Morton codes (its Ravel would make x the slowest dimension).
  index::ChunkGrid GridXyz() const { return index::ChunkGrid(3, size.data(), chunk_size.data()); }
};

struct VolumeInfo {
  std::string type = "image";  // "image" or "segmentation"
  DataType dtype = DataType::kUInt8;
  int64_t num_channels = 1;
  std::vector<ScaleInfo> scales;
  nlohmann::json extra = nlohmann::json::object();

  // Errors (kInvalidArgument / kUnsupported) name the member, e.g. "scales[1].chunk_sizes".
  static Result<VolumeInfo> FromJson(const nlohmann::json& j);
  nlohmann::json ToJson() const;
};

const char* ChunkEncodingName(ChunkEncoding e);

// The info file of the volume in `store`, with the checks every reader and writer of scale
// `scale_index` makes: the file exists and parses, the scale exists, its key stays inside the
// volume, and a sharded scale's chunk grid fits 64-bit compressed Morton codes. Errors name the
// info file.
Result<VolumeInfo> ReadVolumeInfo(const ReadableStore& store, int scale_index);

}  // namespace tessera::precomputed
