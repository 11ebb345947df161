// Every compile-time limit of the library, in one place.
#pragma once

#include <cstdint>

namespace tessera {

// Largest supported array rank (Zarr allows more; fixed-size coordinate arrays make the index
// math usable in CUDA kernels without allocation).
inline constexpr int kMaxRank = 16;
// HDF5's own limit on a dataspace's rank; the HDF5 reader's chunk grids hold that many dimensions.
inline constexpr int kMaxHdf5Rank = 32;
// Rank of a lifted coordinate: (tile, within-tile) pairs, or (shard, within-shard) pairs.
inline constexpr int kMaxLiftedRank = 2 * kMaxRank;
// Upper bound on a single chunk's decoded size; larger chunks are rejected as unsupported.
inline constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 34;

}  // namespace tessera
