// Fractal heaps ("FRHP" header, "FHIB" indirect and "FHDB" direct blocks): where dense groups
// keep their link messages. Only what reading links needs: managed objects in unfiltered heaps.
#pragma once

#include <cstdint>

#include "tessera/hdf5/h5_raw_file.h"

namespace tessera::hdf5 {

struct FractalHeap {
  uint64_t addr = 0;
  uint16_t id_length = 0;
  uint16_t table_width = 0;
  uint64_t start_block_size = 0;
  uint64_t max_direct_block_size = 0;
  uint16_t max_heap_bits = 0;
  uint64_t root_addr = kUndefinedAddress;
  uint16_t root_rows = 0;  // 0: the root is a direct block
  size_t offset_size = 0;  // bytes of a heap offset (in IDs and block headers)
  size_t length_size = 0;  // bytes of an object length in managed IDs
};

Result<FractalHeap> ReadFractalHeapHeader(const RawFile& file, uint64_t addr);

// The bytes of the object a heap ID names (managed objects only; others are kUnsupported).
Result<Bytes> ReadHeapObject(const RawFile& file, const FractalHeap& heap, ByteView id);

}  // namespace tessera::hdf5
