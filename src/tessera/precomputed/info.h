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

enum class ChunkEncoding { kRaw, kCompressedSegmentation, kJpeg, kPng, kCompresso, kJxl };

// The chunk encodings of the format, in one list: the name a scale's "encoding" gives, and
// whether tessera writes it (it reads them all).
struct ChunkEncodingTraits {
  ChunkEncoding encoding;
  const char* name;
  bool written;
};
inline constexpr ChunkEncodingTraits kChunkEncodings[] = {
    {ChunkEncoding::kRaw, "raw", true},
    {ChunkEncoding::kCompressedSegmentation, "compressed_segmentation", true},
    {ChunkEncoding::kJpeg, "jpeg", true},
    {ChunkEncoding::kPng, "png", true},
    {ChunkEncoding::kCompresso, "compresso", true},
    // JPEG XL: cloud-volume writes it and Neuroglancer reads it; tessera reads it only.
    {ChunkEncoding::kJxl, "jxl", false},
};
// Labels, not intensities: a volume of type "segmentation", downsampled by mode.
inline bool IsSegmentationEncoding(ChunkEncoding e) {
  return e == ChunkEncoding::kCompressedSegmentation || e == ChunkEncoding::kCompresso;
}
const char* ChunkEncodingName(ChunkEncoding e);
// "raw, compressed_segmentation, ..." (those written only, when `written`).
std::string ChunkEncodingList(bool written);
// The encoding called `name` (case-insensitive); kUnsupported naming it, `where` and the
// encodings there are, for any other (for writing, `written`: one tessera does not write).
Result<ChunkEncoding> ParseChunkEncoding(const std::string& name, bool written, const std::string& where);
// kUnsupported naming `encoding`, `where` and the encodings tessera writes, when it does not write it.
Status CheckEncodingWritten(ChunkEncoding encoding, const std::string& where);
// kInvalidArgument, naming `where`, when `encoding` cannot hold `channels` channels of `dtype`:
// compressed_segmentation holds uint32/uint64; jpeg uint8 with 1 or 3 channels; png uint8/uint16
// with 1 to 4 channels; compresso unsigned integers, one channel; jxl uint8 with 1 or 3 channels.
Status CheckEncodingHolds(ChunkEncoding encoding, DataType dtype, int64_t channels, const std::string& where);

// Encoder settings a writer records in the scale, as tensorstore does ("jpeg_quality",
// "png_level"); the defaults when it does not.
inline constexpr int kDefaultJpegQuality = 75;
inline constexpr int kDefaultPngLevel = 6;

struct ScaleInfo {
  std::string key;
  std::array<int64_t, 3> size{};          // voxels (x, y, z)
  std::array<int64_t, 3> voxel_offset{};  // (x, y, z)
  std::array<int64_t, 3> chunk_size{};    // the first of "chunk_sizes"
  std::array<double, 3> resolution{};     // nm (x, y, z)
  ChunkEncoding encoding = ChunkEncoding::kRaw;
  std::array<int64_t, 3> compressed_segmentation_block_size{};
  std::optional<int> jpeg_quality;  // 1..100, jpeg scales
  std::optional<int> png_level;     // zlib level 0..9, png scales
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

// The info file of the volume in `store`, with the checks every reader and writer of scale
// `scale_index` makes: the file exists and parses, the scale exists, its key stays inside the
// volume, and a sharded scale's chunk grid fits 64-bit compressed Morton codes. Errors name the
// info file.
Result<VolumeInfo> ReadVolumeInfo(const ReadableStore& store, int scale_index);

}  // namespace tessera::precomputed
