// compressed_segmentation chunks: the first 8 bytes choose the geometry (chunk and block extents,
// channels, label width), the rest is the encoded chunk. Invariant: a chunk that decodes, encoded
// again, decodes to the same labels.
#include <cstddef>
#include <cstdint>

#include "fuzz_check.h"
#include "tessera/precomputed/compressed_segmentation.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  precomputed::SegmentationGeometry g;
  for (int i = 0; i < 3; ++i) {
    g.volume_xyz[i] = 1 + data[i] % 32;
    g.block_xyz[i] = 1 + data[3 + i] % 8;
  }
  g.num_channels = 1 + data[6] % 3;
  g.label_bytes = (data[7] & 1) ? 8 : 4;
  const ByteView encoded(data + 8, size - 8);
  Bytes labels;
  if (!precomputed::DecodeCompressedSegmentation(g, encoded, &labels, "fuzz").ok()) return 0;
  const uint64_t want = static_cast<uint64_t>(g.num_channels * g.volume_xyz[0] * g.volume_xyz[1] * g.volume_xyz[2]) *
                        static_cast<uint64_t>(g.label_bytes);
  FUZZ_CHECK(labels.size() == want, "decoded size");
  auto again = precomputed::EncodeCompressedSegmentation(g, labels);
  FUZZ_CHECK(again.ok(), "decoded labels encode");
  Bytes round;
  FUZZ_CHECK(precomputed::DecodeCompressedSegmentation(g, *again, &round, "fuzz (re-encoded)").ok(),
             "re-encoded chunk decodes");
  FUZZ_CHECK(round == labels, "decode(encode(labels)) == labels");
  return 0;
}
