// Neuroglancer's compressed Morton code of a chunk grid cell: the bits of x, y and z interleaved
// from the least significant up, skipping a dimension once its bits are used up, so a grid that is
// long in one dimension still fits in 64 bits:
//
//   j := 0
//   for i in [0, n):                      n = bits needed by the largest grid dimension
//     for dim in x, y, z:
//       if 2**i < grid_size[dim]: code bit j := bit i of g[dim]; j += 1
//
// Coordinates here are in Neuroglancer's (x, y, z) order; the format boundary converts from
// tessera's (z, y, x). Header-only and usable in CUDA kernels.
#pragma once

#include <cstdint>

#include "tessera/index/index.h"

namespace tessera::index {

// Number of bits i with 2**i < extent, i.e. the bits needed for coordinates in [0, extent).
TESSERA_HD inline int BitsForExtent(int64_t extent) {
  int bits = 0;
  while (bits < 63 && (int64_t{1} << bits) < extent) ++bits;
  return bits;
}

// Total bits of the compressed Morton code of a grid of `grid_size` (x, y, z) cells.
TESSERA_HD inline int CompressedMortonBits(const int64_t* grid_size) {
  return BitsForExtent(grid_size[0]) + BitsForExtent(grid_size[1]) + BitsForExtent(grid_size[2]);
}

// How many of the low `low_bits` bits of a compressed Morton code belong to each dimension
// (x, y, z), for a grid with bits[d] bits per dimension: the bits go to x, y, z in turn while
// each still has bits. The chunks sharing all other bits form a box of 2^out[d] along d.
TESSERA_HD inline void MortonLowBitsPerDimension(const int* bits, int low_bits, int* out) {
  out[0] = out[1] = out[2] = 0;
  for (int i = 0; low_bits > 0 && i < 64; ++i)
    for (int d = 0; d < 3 && low_bits > 0; ++d)
      if (i < bits[d]) ++out[d], --low_bits;
}

// Precondition: 0 <= g[d] < grid_size[d] and CompressedMortonBits(grid_size) <= 64.
TESSERA_HD inline uint64_t CompressedMortonCode(const int64_t* g, const int64_t* grid_size) {
  int bits[3];
  int n = 0;
  for (int d = 0; d < 3; ++d) {
    bits[d] = BitsForExtent(grid_size[d]);
    if (bits[d] > n) n = bits[d];
  }
  uint64_t code = 0;
  int j = 0;
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      if (i < bits[d]) code |= ((static_cast<uint64_t>(g[d]) >> i) & 1u) << j++;
  return code;
}

}  // namespace tessera::index
