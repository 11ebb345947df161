// A whole precomputed volume (info plus chunk files or shard files), packed as fuzz_support.h
// describes: every scale's chunks read through the unsharded or sharded layout (shard index,
// minishard index, raw/gzip encodings), chunk encodings raw, compressed_segmentation, jpeg/png
// refusal.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "tessera/precomputed/volume.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto store = fuzz::UnpackStore(data, size);
  for (int scale = 0; scale < 3; ++scale) {
    auto volume = precomputed::PrecomputedVolume::Open(store, scale);
    if (!volume.ok()) break;
    fuzz::ReadSome(**volume);
  }
  return 0;
}
