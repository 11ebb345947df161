// The streaming backend's kernels: scatter an epoch into its tiles, test tiles for the fill
// value, permute encoded sizes into shard order and gather the encoded bytes. Index math comes
// from tessera/index/ (chunk_grid.h, index.h), compiled for the device. Included by
// cuda_backend.cu only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tessera/index/chunk_grid.h"
#include "tessera/index/index.h"

namespace tessera::stream::cuda_internal {

constexpr int kMaxItemBytes = 16;                       // complex128
constexpr int kThreads = 256;

// Plain data for the scatter kernel, passed by value.
struct ScatterParams {
  int rank = 0;
  index::ChunkGrid tile_grid;                 // the epoch's tiles: one tile row, the array's width
  int64_t padded_shape[kMaxRank] = {};        // tile_grid.PaddedExtent(d), precomputed for the kernel
  int64_t limit[kMaxRank] = {};               // valid extent: `rows` for d = 0, shape[d] otherwise
  int64_t src_strides[kMaxRank] = {};         // element strides of the epoch buffer
  int64_t tile_index_strides[kMaxRank] = {};  // tile coordinate -> tile index in the epoch
  int64_t within_strides[kMaxRank] = {};      // coordinate inside the tile -> element offset
  int64_t tile_stride_bytes = 0;              // tile_bytes rounded up to the codec's alignment
  int64_t first_tile = 0;                     // pool slot of the epoch's tile 0 (batch slot * M)
  uint8_t fill[kMaxItemBytes] = {};
};

// An element of 16 bytes (complex128), copied and compared as two words.
struct Item16 {
  uint64_t lo, hi;
};
__device__ inline bool SameBits(uint8_t a, uint8_t b) { return a == b; }
__device__ inline bool SameBits(uint16_t a, uint16_t b) { return a == b; }
__device__ inline bool SameBits(uint32_t a, uint32_t b) { return a == b; }
__device__ inline bool SameBits(uint64_t a, uint64_t b) { return a == b; }
__device__ inline bool SameBits(const Item16& a, const Item16& b) { return a.lo == b.lo && a.hi == b.hi; }

template <typename T>
__device__ inline T FillOf(const ScatterParams& p) {
  T v;
  memcpy(&v, p.fill, sizeof(T));
  return v;
}

// One thread per element of the padded epoch (row-major over padded_shape, so reads coalesce):
// the input element, or the fill value for padding, goes to its tile and place in the tile. T
// is an unsigned word of the element's size (pool tiles are 8-byte aligned); I is the index
// type, 32-bit when the padded epoch has fewer than 2^31 elements (much cheaper divisions).
template <typename T, typename I>
__global__ void ScatterKernel(const T* epoch, uint8_t* tiles, ScatterParams p, I total) {
  const T fill = FillOf<T>(p);
  for (I j = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; j < total;
       j += static_cast<I>(gridDim.x) * blockDim.x) {
    I rem = j, src = 0, tile = 0, within = 0;
    bool inside = true;
    for (int d = p.rank - 1; d >= 0; --d) {
      const I ext = static_cast<I>(p.padded_shape[d]);
      const I q = rem / ext, c = rem - q * ext;
      rem = q;
      inside = inside && c < static_cast<I>(p.limit[d]);
      src += c * static_cast<I>(p.src_strides[d]);
      I offset;
      const I t = p.tile_grid.ChunkOf<I>(d, c, &offset);
      tile += t * static_cast<I>(p.tile_index_strides[d]);
      within += offset * static_cast<I>(p.within_strides[d]);
    }
    T* dst = reinterpret_cast<T*>(tiles + (p.first_tile + static_cast<int64_t>(tile)) * p.tile_stride_bytes) + within;
    *dst = inside ? epoch[src] : fill;
  }
}

// One block per tile: present[t] = 1 unless every element equals the fill value (bitwise, as
// the CPU backend decides).
template <typename T>
__global__ void PresentKernel(const uint8_t* tiles, int64_t tile_elements, int64_t tile_stride_bytes, ScatterParams p,
                              uint8_t* present) {
  const T* tile = reinterpret_cast<const T*>(tiles + blockIdx.x * tile_stride_bytes);
  const T fill = FillOf<T>(p);
  int differs = 0;
  for (int64_t e = threadIdx.x; e < tile_elements && !differs; e += blockDim.x) differs = !SameBits(tile[e], fill);
  differs = __syncthreads_or(differs);
  if (threadIdx.x == 0) present[blockIdx.x] = differs ? 1 : 0;
}

// Shard-major position of tile t of a batch: epoch t / M's positions come after those of the
// epochs before it.
__device__ inline int64_t BatchPosition(const index::ShardPermutation& perm, int64_t M, int64_t P, int64_t t) {
  const int64_t e = t / M;
  return e * P + perm.Map(t - e * M);
}

// Pass 1 of the aggregation: sizes in shard-major position order (absent tiles and unused
// positions of edge shards are 0).
__global__ void PermuteSizesKernel(const size_t* sizes, const uint8_t* present, index::ShardPermutation perm,
                                   int64_t M, int64_t P, int64_t n, size_t* permuted) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t < n) permuted[BatchPosition(perm, M, P, t)] = present[t] ? sizes[t] : 0;
}

// Pass 3: block (tile, piece) copies pieces piece, piece + gridDim.y, ... (kGatherPiece bytes
// each) of the tile's encoded bytes to their shard-major offset; 16-byte words where source and
// destination are both aligned (codec none), bytes otherwise.
constexpr size_t kGatherPiece = size_t{64} << 10;
__global__ void GatherKernel(const uint8_t* encoded, int64_t encoded_stride, const size_t* permuted,
                             const size_t* offsets, index::ShardPermutation perm, int64_t M, int64_t P,
                             uint8_t* aggregated) {
  const int64_t pos = BatchPosition(perm, M, P, blockIdx.x);
  const size_t n = permuted[pos];
  const uint8_t* src = encoded + blockIdx.x * encoded_stride;
  uint8_t* dst = aggregated + offsets[pos];
  const bool aligned = ((reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) & 15) == 0;
  for (size_t begin = blockIdx.y * kGatherPiece; begin < n; begin += gridDim.y * kGatherPiece) {
    const size_t end = min(n, begin + kGatherPiece);
    size_t b = begin;
    if (aligned) {
      const size_t words = (end - begin) / 16;
      const uint4* s4 = reinterpret_cast<const uint4*>(src + begin);
      uint4* d4 = reinterpret_cast<uint4*>(dst + begin);
      for (size_t w = threadIdx.x; w < words; w += blockDim.x) d4[w] = s4[w];
      b = begin + words * 16;
    }
#pragma unroll 4
    for (size_t k = b + threadIdx.x; k < end; k += blockDim.x) dst[k] = src[k];
  }
}

__global__ void FillSizesKernel(size_t* sizes, int64_t n, size_t value) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) sizes[i] = value;
}

}  // namespace tessera::stream::cuda_internal
