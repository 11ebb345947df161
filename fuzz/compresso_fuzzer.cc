// compresso chunks: the first byte picks the volume's label width (1 << (byte & 3) bytes, at least
// the stream's own data width when that is valid), the rest is the stream; the chunk's extent is
// the one the stream's header gives (so that mutations get past the size check), volumes of more
// than 2^16 voxels skipped. Invariant: a stream that decodes gives extent x width bytes, and its
// labels, encoded again, decode to the same labels.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "fuzz_check.h"
#include "tessera/precomputed/compresso.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 + 12) return 0;
  const ByteView stored(data + 1, size - 1);
  std::array<int64_t, 3> extent{};
  for (int d = 0; d < 3; ++d) extent[d] = stored[6 + 2 * d] | (stored[7 + 2 * d] << 8);
  if (extent[0] * extent[1] * extent[2] > (1 << 16)) return 0;
  int width = 1 << (data[0] & 3);
  const int stream_width = stored[5];
  if (stream_width == 1 || stream_width == 2 || stream_width == 4 || stream_width == 8)
    width = std::max(width, stream_width);
  const DataType dtype = width == 1   ? DataType::kUInt8
                         : width == 2 ? DataType::kUInt16
                         : width == 4 ? DataType::kUInt32
                                      : DataType::kUInt64;
  auto labels = precomputed::DecodeCompresso(stored, extent, dtype, "fuzz");
  if (!labels.ok()) return 0;
  const uint64_t voxels = static_cast<uint64_t>(extent[0] * extent[1] * extent[2]);
  FUZZ_CHECK(labels->size() == voxels * static_cast<uint64_t>(width), "decoded size");
  auto again = precomputed::EncodeCompresso(*labels, extent, dtype);
  FUZZ_CHECK(again.ok(), "decoded labels encode");
  auto round = precomputed::DecodeCompresso(*again, extent, dtype, "fuzz (re-encoded)");
  FUZZ_CHECK(round.ok(), "re-encoded chunk decodes");
  FUZZ_CHECK(*round == *labels, "decode(encode(labels)) == labels");
  return 0;
}
