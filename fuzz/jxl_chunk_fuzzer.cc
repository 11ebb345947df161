// Precomputed jxl chunks through the chunk layer (DecodeChunk): the first 5 bytes choose the
// chunk's extent (x, y, z up to 32), how much longer along z the scale's chunk is, and the channel
// count (1 or 3, what a jxl scale holds); the rest is the stored chunk. Invariants: a chunk that
// decodes has exactly the extent's voxels; libjxl is never asked to decode a frame larger than
// the chunk (ASan's allocation limit and the RSS limit would catch it); jxl is never written.
#include <cstddef>
#include <cstdint>

#include "fuzz_check.h"
#include "image_chunk_input.h"
#include "tessera/precomputed/chunk_encoding.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto in = fuzz::ParseImageChunkInput(data, size, precomputed::ChunkEncoding::kJxl);
  if (!in) return 0;
  const precomputed::ScaleInfo& scale = in->scale;
  const std::array<int64_t, 3>& extent = in->extent;
  const int64_t channels = (in->kind & 1) ? 3 : 1;
  auto voxels = precomputed::DecodeChunk(scale, channels, DataType::kUInt8, extent, std::move(in->stored), "fuzz");
  if (!voxels.ok()) {
    FUZZ_CHECK(voxels.status().kind() == ErrorKind::kCorruptData, "a bad jxl chunk is corrupt data");
    return 0;
  }
  FUZZ_CHECK(voxels->size() == static_cast<size_t>(channels * extent[0] * extent[1] * extent[2]), "decoded size");
  FUZZ_CHECK(!precomputed::EncodeChunk(scale, channels, DataType::kUInt8, extent, *voxels).ok(),
             "jxl chunks are not written");
  return 0;
}
