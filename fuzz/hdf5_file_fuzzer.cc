// A whole HDF5 file: superblock (v0-v3) and its extension, object headers (v1, v2) and every
// message, symbol tables, v1/v2 B-tree nodes, local, fractal and global heaps, attributes, filter
// pipelines and every chunk index (B-tree v1, single chunk, implicit, fixed array, extensible
// array, B-tree v2), then a few reads of every dataset.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::fuzz::ReadHdf5File(data, size);
  return 0;
}
