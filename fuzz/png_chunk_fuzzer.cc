// Precomputed png chunks through the chunk layer (DecodeChunk): the first 5 bytes choose the
// chunk's extent (x, y, z up to 32), how much longer along z the scale's chunk is, the channel
// count and (png) the sample width; the rest is the stored chunk. Invariants: a chunk that decodes
// has exactly the extent's voxels, and (png, lossless) encoding them again decodes to the same.
#include <cstddef>
#include <cstdint>

#include "fuzz_check.h"
#include "image_chunk_input.h"
#include "tessera/precomputed/chunk_encoding.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto in = fuzz::ParseImageChunkInput(data, size, precomputed::ChunkEncoding::kPng);
  if (!in) return 0;
  const precomputed::ScaleInfo& scale = in->scale;
  const std::array<int64_t, 3>& extent = in->extent;
  const int64_t channels = 1 + in->kind % 4;
  const DataType dtype = (in->kind & 4) ? DataType::kUInt16 : DataType::kUInt8;
  auto voxels = precomputed::DecodeChunk(scale, channels, dtype, extent, std::move(in->stored), "fuzz");
  if (!voxels.ok()) return 0;
  FUZZ_CHECK(voxels->size() == static_cast<size_t>(channels * extent[0] * extent[1] * extent[2]) * ItemSize(dtype),
             "decoded size");
  auto again = precomputed::EncodeChunk(scale, channels, dtype, extent, *voxels);
  FUZZ_CHECK(again.ok(), "decoded voxels encode");
  auto round = precomputed::DecodeChunk(scale, channels, dtype, extent, *again, "fuzz (re-encoded)");
  FUZZ_CHECK(round.ok() && *round == *voxels, "decode(encode(voxels)) == voxels");
  return 0;
}
