// A whole Zarr array (v3 zarr.json, or v2 .zarray + .zattrs) with its chunks or shards, packed as
// fuzz_support.h describes: metadata, codec pipelines, the sharding index (start or end, crc32c),
// inner chunk decoding (bytes, transpose, gzip, zstd, blosc, lz4), partial shards and reads.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "tessera/zarr/array.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto store = fuzz::UnpackStore(data, size);
  auto array = zarr::ZarrArray::Open(store, "");
  if (array.ok()) fuzz::ReadSome(**array);
  return 0;
}
