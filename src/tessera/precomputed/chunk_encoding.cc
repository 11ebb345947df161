#include "tessera/precomputed/chunk_encoding.h"

#include <cstring>

#include "tessera/precomputed/compressed_segmentation.h"

namespace tessera::precomputed {
namespace {

SegmentationGeometry Geometry(const ScaleInfo& scale, int64_t channels, DataType dtype,
                              const std::array<int64_t, 3>& extent_xyz) {
  SegmentationGeometry g;
  g.volume_xyz = extent_xyz;
  g.block_xyz = scale.compressed_segmentation_block_size;
  g.num_channels = channels;
  g.label_bytes = static_cast<int>(ItemSize(dtype));
  return g;
}

}  // namespace

Result<Bytes> EncodeChunk(const ScaleInfo& scale, int64_t channels, DataType dtype,
                          const std::array<int64_t, 3>& extent_xyz, Bytes voxels) {
  if (scale.encoding != ChunkEncoding::kCompressedSegmentation) return voxels;
  return EncodeCompressedSegmentation(Geometry(scale, channels, dtype, extent_xyz), voxels);
}

Result<Bytes> DecodeChunk(const ScaleInfo& scale, int64_t channels, DataType dtype,
                          const std::array<int64_t, 3>& extent_xyz, Bytes stored, const std::string& where) {
  const int64_t item = static_cast<int64_t>(ItemSize(dtype));
  const int64_t plane = extent_xyz[0] * extent_xyz[1] * item;  // one z row of one channel
  const uint64_t expected = static_cast<uint64_t>(channels * plane * extent_xyz[2]);
  const bool segmentation = scale.encoding == ChunkEncoding::kCompressedSegmentation;
  Bytes voxels;
  Status decoded = Status::Ok();
  if (segmentation) {
    decoded = DecodeCompressedSegmentation(Geometry(scale, channels, dtype, extent_xyz), stored, &voxels, where);
  } else {
    voxels = std::move(stored);
  }
  if (decoded.ok() && voxels.size() == expected) return voxels;
  // An edge chunk along z holding more rows (up to the chunk's): a continuation's, cut to the extent.
  for (int64_t z = extent_xyz[2] + 1; z <= scale.chunk_size[2] && plane > 0; ++z) {
    Bytes longer;
    if (segmentation) {
      if (!DecodeCompressedSegmentation(Geometry(scale, channels, dtype, {extent_xyz[0], extent_xyz[1], z}), stored,
                                        &longer, where).ok())
        continue;
    } else if (voxels.size() == static_cast<uint64_t>(channels * plane * z)) {
      longer = std::move(voxels);
    }
    if (longer.size() != static_cast<uint64_t>(channels * plane * z)) continue;
    Bytes cut(static_cast<size_t>(expected));
    for (int64_t c = 0; c < channels; ++c)
      std::memcpy(cut.data() + c * plane * extent_xyz[2], longer.data() + c * plane * z,
                  static_cast<size_t>(plane * extent_xyz[2]));
    return cut;
  }
  TESSERA_RETURN_IF_ERROR(decoded);
  return CorruptData(where + ": chunk holds " + std::to_string(voxels.size()) + " bytes, expected " +
                     std::to_string(expected) + " for a " + std::to_string(extent_xyz[0]) + "x" +
                     std::to_string(extent_xyz[1]) + "x" + std::to_string(extent_xyz[2]) + "x" +
                     std::to_string(channels) + " " + std::string(DataTypeName(dtype)) + " chunk");
}

void CopyChunkCorner(const std::array<int64_t, 3>& extent_xyz, const std::array<int64_t, 3>& chunk_xyz,
                     int64_t channels, int64_t item, const uint8_t* src, uint8_t* dst, bool to_full) {
  const auto [ex, ey, ez] = extent_xyz;
  const auto [cx, cy, cz] = chunk_xyz;
  const size_t row = static_cast<size_t>(ex * item);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t z = 0; z < ez; ++z)
      for (int64_t y = 0; y < ey; ++y) {
        const int64_t dense = (((c * ez + z) * ey + y) * ex) * item;
        const int64_t full = (((c * cz + z) * cy + y) * cx) * item;
        if (to_full) {
          std::memcpy(dst + full, src + dense, row);
        } else {
          std::memcpy(dst + dense, src + full, row);
        }
      }
}

}  // namespace tessera::precomputed
