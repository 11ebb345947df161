#include "tessera/precomputed/chunk_encoding.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "tessera/precomputed/compressed_segmentation.h"
#include "tessera/precomputed/compresso.h"
#include "tessera/precomputed/image_codecs.h"

namespace tessera::precomputed {
namespace {

bool IsImage(ChunkEncoding e) {
  return e == ChunkEncoding::kJpeg || e == ChunkEncoding::kPng || e == ChunkEncoding::kJxl;
}

// Between the chunk's planar voxels [c][z][y][x] and an image's interleaved pixels [z][y][x][c]
// (`pixels` voxels per channel, `item` bytes each: 1 or 2). One channel is the same bytes either
// way, so it is never copied.
template <typename T>
void Transpose(const uint8_t* src, int64_t rows, int64_t cols, uint8_t* dst) {
  const T* in = reinterpret_cast<const T*>(src);
  T* out = reinterpret_cast<T*>(dst);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

// `src` as a rows x cols matrix of `item`-byte elements, transposed into `dst`.
void TransposeItems(const uint8_t* src, int64_t rows, int64_t cols, size_t item, uint8_t* dst) {
  if (item == 2) {
    Transpose<uint16_t>(src, rows, cols, dst);
  } else {
    Transpose<uint8_t>(src, rows, cols, dst);
  }
}

Bytes Interleave(Bytes planar, int64_t channels, int64_t pixels, size_t item) {
  if (channels == 1) return planar;
  Bytes out(planar.size());
  TransposeItems(planar.data(), channels, pixels, item, out.data());  // [c][p] -> [p][c]
  return out;
}

Bytes Deinterleave(Bytes interleaved, int64_t channels, int64_t pixels, size_t item) {
  if (channels == 1) return interleaved;
  Bytes out(interleaved.size());
  TransposeItems(interleaved.data(), pixels, channels, item, out.data());  // [p][c] -> [c][p]
  return out;
}

Result<Bytes> EncodeImage(const ScaleInfo& scale, int64_t channels, DataType dtype,
                          const std::array<int64_t, 3>& extent_xyz, Bytes voxels) {
  const auto [ex, ey, ez] = extent_xyz;
  const size_t item = ItemSize(dtype);
  const Bytes pixels = Interleave(std::move(voxels), channels, ex * ey * ez, item);  // jpeg and png: 1 or 2 bytes
  const int components = static_cast<int>(channels);
  if (scale.encoding == ChunkEncoding::kJpeg)
    return EncodeJpeg(pixels.data(), ex, ey * ez, components, scale.jpeg_quality.value_or(kDefaultJpegQuality));
  return EncodePng(pixels.data(), ex, ey * ez, components, static_cast<int>(item),
                   scale.png_level.value_or(kDefaultPngLevel));
}

// A jpeg, png or jxl chunk: one image `extent x` wide and `extent y * z` high, or up to a whole chunk
// high along z (a continuation's edge chunk, cut to the extent as DecodeChunk describes).
Result<Bytes> DecodeImage(const ScaleInfo& scale, int64_t channels, DataType dtype,
                          const std::array<int64_t, 3>& extent_xyz, const Bytes& stored, const std::string& where) {
  const auto [ex, ey, ez] = extent_xyz;
  const size_t item = ItemSize(dtype);
  const int64_t max_z = std::max(ez, scale.chunk_size[2]);
  const int64_t max_samples = ex * ey * max_z * channels;
  Result<Image> image = scale.encoding == ChunkEncoding::kJpeg ? DecodeJpeg(stored, max_samples, where)
                       : scale.encoding == ChunkEncoding::kJxl ? DecodeJxl(stored, max_samples, where)
                                                               : DecodePng(stored, max_samples, where);
  TESSERA_RETURN_IF_ERROR(image.status());
  const int64_t rows = ey > 0 && image->height % ey == 0 ? image->height / ey : -1;
  if (image->width != ex || rows < ez || rows > max_z || image->components != channels ||
      static_cast<size_t>(image->sample_bytes) != item)
    return CorruptData(where + ": a " + std::to_string(image->width) + "x" + std::to_string(image->height) + " " +
                       ChunkEncodingName(scale.encoding) + " image of " + std::to_string(image->components) +
                       " component(s) of " + std::to_string(8 * image->sample_bytes) + " bits, expected " +
                       std::to_string(ex) + "x" + std::to_string(ey * ez) + " (chunk x by y*z) of " +
                       std::to_string(channels) + " of " + std::to_string(8 * item) + " bits");
  const int64_t pixels = ex * ey * ez;
  if (image->planar) {  // jxl: one plane per channel, each `rows` z rows high; keep the extent's
    const size_t plane = static_cast<size_t>(ex * ey * rows) * item, kept = static_cast<size_t>(pixels) * item;
    Bytes voxels(kept * static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c)
      std::memcpy(voxels.data() + c * kept, image->pixels.data() + c * plane, kept);
    return voxels;
  }
  image->pixels.resize(static_cast<size_t>(pixels * channels) * item);  // rows past the extent go
  return Deinterleave(std::move(image->pixels), channels, pixels, item);
}

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
  // jxl is read only: it falls through to the refusal below.
  if (IsImage(scale.encoding) && scale.encoding != ChunkEncoding::kJxl)
    return EncodeImage(scale, channels, dtype, extent_xyz, std::move(voxels));
  if (scale.encoding == ChunkEncoding::kCompressedSegmentation)
    return EncodeCompressedSegmentation(Geometry(scale, channels, dtype, extent_xyz), voxels);
  if (scale.encoding == ChunkEncoding::kCompresso) return EncodeCompresso(voxels, extent_xyz, dtype);  // one channel
  if (scale.encoding != ChunkEncoding::kRaw)
    return Unsupported(std::string("precomputed: ") + ChunkEncodingName(scale.encoding) +
                       " chunks are not written (tessera writes " + ChunkEncodingList(true) + ")");
  return voxels;
}

Result<Bytes> DecodeChunk(const ScaleInfo& scale, int64_t channels, DataType dtype,
                          const std::array<int64_t, 3>& extent_xyz, Bytes stored, const std::string& where) {
  const int64_t item = static_cast<int64_t>(ItemSize(dtype));
  const int64_t plane = extent_xyz[0] * extent_xyz[1] * item;  // one z row of one channel
  const uint64_t expected = static_cast<uint64_t>(channels * plane * extent_xyz[2]);
  if (IsImage(scale.encoding)) return DecodeImage(scale, channels, dtype, extent_xyz, stored, where);
  // The label encodings decode to a given extent (their streams record it).
  const bool segmentation = IsSegmentationEncoding(scale.encoding);
  auto decode_labels = [&](const std::array<int64_t, 3>& extent, Bytes* out) -> Status {
    if (scale.encoding == ChunkEncoding::kCompresso) {
      TESSERA_ASSIGN_OR_RETURN(*out, DecodeCompresso(stored, extent, dtype, where));
      return Status::Ok();
    }
    return DecodeCompressedSegmentation(Geometry(scale, channels, dtype, extent), stored, out, where);
  };
  Bytes voxels;
  Status decoded = Status::Ok();
  if (segmentation) {
    decoded = decode_labels(extent_xyz, &voxels);
  } else {
    voxels = std::move(stored);
  }
  if (decoded.ok() && voxels.size() == expected) return voxels;
  // An edge chunk along z holding more rows (up to the chunk's): a continuation's, cut to the extent.
  for (int64_t z = extent_xyz[2] + 1; z <= scale.chunk_size[2] && plane > 0; ++z) {
    Bytes longer;
    if (segmentation) {
      if (!decode_labels({extent_xyz[0], extent_xyz[1], z}, &longer).ok()) continue;
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
