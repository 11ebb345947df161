// Index math shared by every layer, host and device.
//
// Conventions: dimension 0 is the slowest-varying (C order) everywhere. A shape is an array of
// extents; the row-major ("ravel") index of coordinate c in shape s is
//     sum_d c[d] * stride[d],  stride[D-1] = 1,  stride[d] = stride[d+1] * s[d+1].
//
// Lifting. Chunking an array of shape S with chunk shape C splits each coordinate x_d into a chunk
// index t_d = x_d / C_d and a within-chunk index n_d = x_d % C_d. The lifted shape interleaves
// them, (T_0, C_0, T_1, C_1, ...), T_d = ceil(S_d / C_d). Giving each lifted axis a stride in the
// destination turns "where does element x go" into one dot product:
//   * scatter into a tile pool (tiles in row-major order of t, elements row-major in the tile):
//       stride(t_d) = tile_elements * prod_{j>d} T_j,   stride(n_d) = prod_{j>d} C_j.
// The same trick applied to tiles, with tile coordinates lifted into (shard s_d, within-shard w_d),
// gives the tile -> shard-major permutation used to group compressed tiles by shard:
//       P(t) = ravel((s_1..s_{D-1}, w_1..w_{D-1}), (shard_count_1.., tiles_per_shard_1..)).
//
// Everything here is header-only, allocation-free and usable in CUDA kernels (TESSERA_HD).
#pragma once

#include <cstdint>

#include "tessera/core/limits.h"

#if defined(__CUDACC__)
#define TESSERA_HD __host__ __device__
#else
#define TESSERA_HD
#endif

namespace tessera::index {

// ceil(a / b) for a >= 0, b > 0, exact up to the type's limit (no a + b - 1 to overflow). Both
// operands have one type, so a mixed call is a compile error rather than a silent narrowing.
template <typename Int>
TESSERA_HD inline constexpr Int CeilDiv(Int a, Int b) {
  return static_cast<Int>(a / b + (a % b != 0 ? 1 : 0));
}
// Floor division for possibly negative numerators (b > 0).
TESSERA_HD inline constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

TESSERA_HD inline int64_t Product(int rank, const int64_t* shape) {
  int64_t p = 1;
  for (int d = 0; d < rank; ++d) p *= shape[d];
  return p;
}

// Row-major strides (in elements) of `shape`.
TESSERA_HD inline void RowMajorStrides(int rank, const int64_t* shape, int64_t* strides) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape[d];
  }
}

TESSERA_HD inline int64_t Ravel(int rank, const int64_t* shape, const int64_t* coords) {
  int64_t idx = 0;
  for (int d = 0; d < rank; ++d) idx = idx * shape[d] + coords[d];
  return idx;
}

TESSERA_HD inline void Unravel(int rank, const int64_t* shape, int64_t idx, int64_t* coords) {
  for (int d = rank - 1; d >= 0; --d) {
    coords[d] = idx % shape[d];
    idx /= shape[d];
  }
}

// sum_d coords[d] * strides[d]
TESSERA_HD inline int64_t Dot(int rank, const int64_t* coords, const int64_t* strides) {
  int64_t s = 0;
  for (int d = 0; d < rank; ++d) s += coords[d] * strides[d];
  return s;
}

// Maps a row-major index over `shape` to sum_d coord_d * strides[d], without materialising the
// coordinates. This is the core of the lifted-stride scatter and the shard permutation.
TESSERA_HD inline int64_t UnravelDot(int rank, const int64_t* shape, const int64_t* strides,
                                     int64_t idx) {
  int64_t out = 0;
  for (int d = rank - 1; d >= 0; --d) {
    int64_t q = idx / shape[d];
    out += (idx - q * shape[d]) * strides[d];
    idx = q;
  }
  return out;
}

// A lifted layout: `rank` axes with shape and destination strides, all plain data.
struct LiftedLayout {
  int rank = 0;
  int64_t shape[kMaxLiftedRank];
  int64_t strides[kMaxLiftedRank];

  // Destination offset of row-major source index `idx`.
  TESSERA_HD int64_t Map(int64_t idx) const { return UnravelDot(rank, shape, strides, idx); }
};

// Scatter layout of one block of tiles: `tile_count[d]` tiles of `tile_shape[d]` elements per
// dimension, tiles stored row-major by tile coordinate, elements row-major inside each tile.
// The lifted shape is (T_0, C_0, T_1, C_1, ...); Map(i) takes a row-major index over that lifted
// shape to the tile-pool offset in elements, and ScatterOffset() takes array coordinates
// (relative to the block origin) to the same offset.
TESSERA_HD inline LiftedLayout MakeTileScatterLayout(int rank, const int64_t* tile_count,
                                                     const int64_t* tile_shape) {
  LiftedLayout L;
  L.rank = 2 * rank;
  int64_t tile_elements = Product(rank, tile_shape);
  int64_t tile_stride = tile_elements;   // stride of t_d in elements
  int64_t within_stride = 1;             // stride of n_d in elements
  for (int d = rank - 1; d >= 0; --d) {
    L.shape[2 * d] = tile_count[d];
    L.shape[2 * d + 1] = tile_shape[d];
    L.strides[2 * d] = tile_stride;
    L.strides[2 * d + 1] = within_stride;
    tile_stride *= tile_count[d];
    within_stride *= tile_shape[d];
  }
  return L;
}

// The scatter layout of the same tile pool for input whose dimensions arrive in another order:
// arriving dimension i is dimension order[i] of the block `stored` describes (a permutation of
// 0..rank-1). Each arriving dimension takes the tile extent and strides of the stored dimension it
// is, so ScatterOffset() and ScatterRunToTiles() take the arriving coordinates and row-major runs
// of the arriving block straight to their stored places (its Map() is not used: its lifted shape
// is no longer the pool's row-major order).
TESSERA_HD inline LiftedLayout PermuteScatterLayout(const LiftedLayout& stored, int rank, const int64_t* order) {
  LiftedLayout L;
  L.rank = 2 * rank;
  for (int i = 0; i < rank; ++i) {
    const int d = static_cast<int>(order[i]);
    for (int k = 0; k < 2; ++k) {
      L.shape[2 * i + k] = stored.shape[2 * d + k];
      L.strides[2 * i + k] = stored.strides[2 * d + k];
    }
  }
  return L;
}

// Tile-pool offset (elements) of the element at array coordinate `coords` (relative to the
// block origin), given the scatter layout's tile shape and strides. Handles any coordinate,
// including those in edge tiles, with one divmod per dimension.
TESSERA_HD inline int64_t ScatterOffset(int rank, const LiftedLayout& L, const int64_t* coords) {
  int64_t off = 0;
  for (int d = 0; d < rank; ++d) {
    int64_t c = L.shape[2 * d + 1];
    int64_t t = coords[d] / c;
    off += t * L.strides[2 * d] + (coords[d] - t * c) * L.strides[2 * d + 1];
  }
  return off;
}

// The tile -> shard-major permutation over `rank` dimensions (the dimensions of one epoch, i.e.
// dims 1..D-1 of the array). Tile i (row-major over tile_count) goes to position Map(i):
// lifted shape (tile_count_d split into shard_count_d x tiles_per_shard_d) with strides that
// ravel (s_0.., w_0..) row-major over (shard_count.., tiles_per_shard..).
//
// The split requires shard_count_d * tiles_per_shard_d to cover tile_count_d; edge shards have
// unused slots, so the permutation target space has prod(shard_count) * prod(tiles_per_shard)
// positions, of which M = prod(tile_count) are used. ShardSlot() gives the compact variant.
struct ShardPermutation {
  int rank = 0;
  int64_t tile_count[kMaxRank];
  int64_t tiles_per_shard[kMaxRank];
  int64_t shard_count[kMaxRank];
  int64_t shard_stride[kMaxRank];   // stride of s_d in the shard-major space (in tiles)
  int64_t within_stride[kMaxRank];  // stride of w_d

  // Shard-major position of tile `i` (row-major over tile_count), counting every slot of every
  // shard (edge shards included), so positions are shard * tiles_per_shard_total + slot.
  TESSERA_HD int64_t Map(int64_t i) const {
    int64_t out = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t q = i / tile_count[d];
      int64_t t = i - q * tile_count[d];
      i = q;
      int64_t s = t / tiles_per_shard[d];
      out += s * shard_stride[d] + (t - s * tiles_per_shard[d]) * within_stride[d];
    }
    return out;
  }
  TESSERA_HD int64_t TilesPerShard() const { return Product(rank, tiles_per_shard); }
  TESSERA_HD int64_t ShardCount() const { return Product(rank, shard_count); }
};

TESSERA_HD inline ShardPermutation MakeShardPermutation(int rank, const int64_t* tile_count,
                                                        const int64_t* tiles_per_shard) {
  ShardPermutation P;
  P.rank = rank;
  int64_t tiles_per_shard_total = 1;
  for (int d = 0; d < rank; ++d) {
    P.tile_count[d] = tile_count[d];
    P.tiles_per_shard[d] = tiles_per_shard[d];
    P.shard_count[d] = CeilDiv(tile_count[d], tiles_per_shard[d]);
    tiles_per_shard_total *= tiles_per_shard[d];
  }
  int64_t s = tiles_per_shard_total, w = 1;
  for (int d = rank - 1; d >= 0; --d) {
    P.shard_stride[d] = s;
    P.within_stride[d] = w;
    s *= P.shard_count[d];
    w *= P.tiles_per_shard[d];
  }
  return P;
}

// ---------------------------------------------------------------------------------------------
// Slices and per-dimension chunk projections (the hyperslab algorithm).

// A normalized numpy slice over one dimension: the selected positions are
// start + k * step for k in [0, count). step != 0; count >= 0.
struct DimSlice {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// Python's slice.indices() + len(range(...)): clamps start/stop like numpy for a dimension of
// `extent`. `has_start`/`has_stop` false mean the field was omitted. Precondition: step != 0.
TESSERA_HD inline DimSlice NormalizeSlice(int64_t extent, bool has_start, int64_t start,
                                          bool has_stop, int64_t stop, int64_t step) {
  DimSlice s;
  s.step = step;
  if (step > 0) {
    int64_t b = has_start ? (start < 0 ? start + extent : start) : 0;
    int64_t e = has_stop ? (stop < 0 ? stop + extent : stop) : extent;
    b = b < 0 ? 0 : (b > extent ? extent : b);
    e = e < 0 ? 0 : (e > extent ? extent : e);
    s.start = b;
    s.count = e > b ? (e - b - 1) / step + 1 : 0;  // no overflow for any step
  } else {
    int64_t b = has_start ? (start < 0 ? start + extent : start) : extent - 1;
    int64_t e = has_stop ? (stop < 0 ? stop + extent : stop) : -1;
    b = b < -1 ? -1 : (b > extent - 1 ? extent - 1 : b);
    if (has_stop) e = e < -1 ? -1 : (e > extent - 1 ? extent - 1 : e);
    s.start = b;
    const uint64_t magnitude = uint64_t{0} - static_cast<uint64_t>(step);  // |step|, also for INT64_MIN
    s.count = b > e ? static_cast<int64_t>((static_cast<uint64_t>(b - e) - 1) / magnitude + 1) : 0;
  }
  // At most one position: the step no longer matters, and +-1 keeps later arithmetic (|step|,
  // start + count * step) clear of overflow for steps near the int64 limits.
  if (s.count <= 1) s.step = step > 0 ? 1 : -1;
  return s;
}

// The part of a DimSlice that falls in one chunk. Selected positions inside the chunk are
// in_first + j * in_step (ascending, relative to the chunk origin) for j in [0, count); the
// j-th of them goes to output index out_first + j * out_step (out_step is +1 or -1).
struct ChunkProjection {
  int64_t chunk = 0;
  int64_t in_first = 0;
  int64_t in_step = 1;
  int64_t count = 0;
  int64_t out_first = 0;
  int64_t out_step = 1;
};

// Calls fn(ChunkProjection) for every chunk of size `chunk` that the slice touches, in ascending
// chunk order. Chunks the slice steps over entirely (step > chunk) are skipped.
template <typename Fn>
TESSERA_HD inline void ForEachChunkProjection(const DimSlice& s, int64_t chunk, Fn&& fn) {
  if (s.count <= 0) return;
  const int64_t n = s.count;
  const int64_t stride = s.step > 0 ? s.step : -s.step;
  const int64_t lo = s.step > 0 ? s.start : s.start + (n - 1) * s.step;  // smallest position
  const int64_t hi = lo + (n - 1) * stride;                             // largest position
  int64_t c = lo / chunk;
  const int64_t c_last = hi / chunk;
  while (c <= c_last) {
    const int64_t origin = c * chunk;
    int64_t j0 = origin > lo ? CeilDiv(origin - lo, stride) : 0;
    int64_t j1 = (origin + chunk - 1 - lo) / stride;
    if (j1 > n - 1) j1 = n - 1;
    if (j0 <= j1) {
      ChunkProjection p;
      p.chunk = c;
      p.in_first = lo + j0 * stride - origin;
      p.in_step = stride;
      p.count = j1 - j0 + 1;
      p.out_first = s.step > 0 ? j0 : n - 1 - j0;
      p.out_step = s.step > 0 ? 1 : -1;
      fn(p);
      // Jump straight to the chunk holding the next selected position.
      if (j1 + 1 >= n) break;
      c = (lo + (j1 + 1) * stride) / chunk;
    } else {
      ++c;
    }
  }
}

}  // namespace tessera::index
