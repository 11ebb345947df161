// Host-side N-d copies between strided views, walked as contiguous runs.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tessera/core/limits.h"
#include "tessera/index/index.h"

namespace tessera::index {

// A strided N-d view: element (i_0, ..., i_{R-1}) of the view lives at
// base + sum_d i_d * byte_strides[d]. Strides may be negative or zero.
struct StridedView {
  int64_t byte_strides[kMaxRank];
};

// Merges adjacent dimensions that are contiguous with each other in both views, so the innermost
// loop is as long as possible. Returns the new rank; rewrites count/strides in place.
inline int CoalesceDims(int rank, int64_t* count, int64_t* src_strides, int64_t* dst_strides) {
  // Drop extent-1 dimensions (except keep at least one).
  int r = 0;
  for (int d = 0; d < rank; ++d) {
    if (count[d] == 1) continue;
    count[r] = count[d];
    src_strides[r] = src_strides[d];
    dst_strides[r] = dst_strides[d];
    ++r;
  }
  if (r == 0) {
    count[0] = 1;
    return 1;
  }
  int out = 0;
  for (int d = 1; d < r; ++d) {
    if (src_strides[out] == src_strides[d] * count[d] && dst_strides[out] == dst_strides[d] * count[d]) {
      src_strides[out] = src_strides[d];
      dst_strides[out] = dst_strides[d];
      count[out] *= count[d];
    } else {
      ++out;
      count[out] = count[d];
      src_strides[out] = src_strides[d];
      dst_strides[out] = dst_strides[d];
    }
  }
  return out + 1;
}

// Destinations of at least this many bytes (several times the last-level cache) are written with
// non-temporal stores where the copies below offer it: the data would leave the cache before
// anyone reads it anyway.
inline constexpr int64_t kStreamingStoreMinBytes = int64_t{32} << 20;

namespace detail {

// memcpy with non-temporal (cache-bypassing) stores for the 16-byte-aligned body: for output far
// larger than the caches, it saves reading each destination line before writing it and keeps the
// source in cache. The caller issues StoreFence() before others read the destination.
inline void StreamingCopy(uint8_t* dst, const uint8_t* src, size_t n) {
#if defined(__SSE2__)
  size_t head = (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16;
  if (head > n) head = n;
  std::memcpy(dst, src, head);
  dst += head, src += head, n -= head;
  for (; n >= 64; n -= 64, dst += 64, src += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), d);
  }
  for (; n >= 16; n -= 16, dst += 16, src += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
#endif
  std::memcpy(dst, src, n);
}

inline void StoreFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

template <typename T>
inline void CopyElements(int64_t n, const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * ss, sizeof(T));
    std::memcpy(dst + i * ds, &v, sizeof(T));
  }
}
// ScatterRunToTiles' copy of `g` whole consecutive lines of `line` elements (src, contiguous) whose
// starts lie `line_stride` apart in the pool (dst: the first line's start): along a line, pieces
// of `tile_line` elements `tile_step` apart, neighbours `within` apart (all in elements).
template <typename T>
inline void ScatterLineGroupOf(int64_t g, int64_t line, const uint8_t* src, uint8_t* dst, int64_t line_stride,
                               int64_t tile_line, int64_t tile_step, int64_t within) {
  for (int64_t t0 = 0; t0 < line; t0 += tile_line) {
    const int64_t n = tile_line < line - t0 ? tile_line : line - t0;
    uint8_t* tile = dst + (t0 / tile_line) * tile_step * static_cast<int64_t>(sizeof(T));
    for (int64_t i = 0; i < n; ++i) {
      uint8_t* out = tile + i * within * static_cast<int64_t>(sizeof(T));
      const uint8_t* in = src + (t0 + i) * static_cast<int64_t>(sizeof(T));
      for (int64_t j = 0; j < g; ++j) {
        T v;
        std::memcpy(&v, in + j * line * static_cast<int64_t>(sizeof(T)), sizeof(T));
        std::memcpy(out + j * line_stride * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
      }
    }
  }
}

inline void ScatterLineGroup(int64_t g, int64_t line, const uint8_t* src, uint8_t* dst, int64_t line_stride,
                             int64_t tile_line, int64_t tile_step, int64_t within, size_t item_bytes) {
  switch (item_bytes) {
    case 1: return ScatterLineGroupOf<uint8_t>(g, line, src, dst, line_stride, tile_line, tile_step, within);
    case 2: return ScatterLineGroupOf<uint16_t>(g, line, src, dst, line_stride, tile_line, tile_step, within);
    case 4: return ScatterLineGroupOf<uint32_t>(g, line, src, dst, line_stride, tile_line, tile_step, within);
    case 8: return ScatterLineGroupOf<uint64_t>(g, line, src, dst, line_stride, tile_line, tile_step, within);
  }
  const int64_t item = static_cast<int64_t>(item_bytes);
  for (int64_t j = 0; j < g; ++j)
    for (int64_t x = 0; x < line; ++x)
      std::memcpy(dst + (j * line_stride + (x / tile_line) * tile_step + (x % tile_line) * within) * item,
                  src + (j * line + x) * item, item_bytes);
}

}  // namespace detail

// Copies a box of `count[d]` elements per dimension from `src` to `dst`, each element
// `item_bytes` long, with per-dimension byte strides. src/dst point at element (0, ..., 0).
// `streaming_stores`: write contiguous runs with non-temporal stores (for a destination much
// larger than the caches that is not read again soon); the copy is fenced before returning.
inline void CopyStrided(int rank, const int64_t* count_in, const uint8_t* src,
                        const int64_t* src_strides_in, uint8_t* dst, const int64_t* dst_strides_in,
                        size_t item_bytes, bool streaming_stores = false) {
  if (rank == 0) {
    std::memcpy(dst, src, item_bytes);
    return;
  }
  int64_t count[kMaxRank], ss[kMaxRank], ds[kMaxRank];
  for (int d = 0; d < rank; ++d) {
    if (count_in[d] <= 0) return;
    count[d] = count_in[d];
    ss[d] = src_strides_in[d];
    ds[d] = dst_strides_in[d];
  }
  const int64_t item = static_cast<int64_t>(item_bytes);
  rank = CoalesceDims(rank, count, ss, ds);
  const int inner = rank - 1;
  const int64_t n = count[inner];
  const bool contiguous = ss[inner] == item && ds[inner] == item;
  int64_t idx[kMaxRank] = {0};
  const uint8_t* s = src;
  uint8_t* t = dst;
  for (;;) {
    if (contiguous && streaming_stores) {
      detail::StreamingCopy(t, s, static_cast<size_t>(n * item));
    } else if (contiguous) {
      std::memcpy(t, s, static_cast<size_t>(n * item));
    } else {
      switch (item_bytes) {
        case 1: detail::CopyElements<uint8_t>(n, s, ss[inner], t, ds[inner]); break;
        case 2: detail::CopyElements<uint16_t>(n, s, ss[inner], t, ds[inner]); break;
        case 4: detail::CopyElements<uint32_t>(n, s, ss[inner], t, ds[inner]); break;
        case 8: detail::CopyElements<uint64_t>(n, s, ss[inner], t, ds[inner]); break;
        default:
          for (int64_t i = 0; i < n; ++i) std::memcpy(t + i * ds[inner], s + i * ss[inner], item_bytes);
      }
    }
    int d = inner - 1;
    for (; d >= 0; --d) {
      s += ss[d];
      t += ds[d];
      if (++idx[d] < count[d]) break;
      s -= ss[d] * count[d];
      t -= ds[d] * count[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  if (streaming_stores) detail::StoreFence();
}

// Calls fn(offset, length) (in elements, into a row-major array of `shape`) for each maximal
// contiguous run of the box [origin, origin + extent), in ascending order.
template <typename Fn>
inline void ForEachContiguousRun(int rank, const int64_t* shape, const int64_t* origin,
                                 const int64_t* extent, Fn&& fn) {
  for (int d = 0; d < rank; ++d)
    if (extent[d] <= 0) return;
  // The innermost dims that are taken whole merge into the run.
  int inner = rank - 1;
  int64_t run = extent[inner];
  while (inner > 0 && extent[inner] == shape[inner]) {
    --inner;
    run *= extent[inner];
  }
  int64_t strides[kMaxRank];
  int64_t st = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = st;
    st *= shape[d];
  }
  int64_t idx[kMaxRank] = {0};
  for (;;) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += (origin[d] + (d < inner ? idx[d] : 0)) * strides[d];
    fn(off, run);
    int d = inner - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < extent[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Copies `count` consecutive elements of a row-major block of `shape` (rank dimensions), starting
// at row-major element `first`, from `src` (those elements, contiguous) into the tile pool
// described by `tiles` (MakeTileScatterLayout over the same block: tiles row-major by tile
// coordinate, elements row-major inside each tile; or PermuteScatterLayout of one, for a block
// whose dimensions arrive in another order than the pool stores them). The run may start and end
// anywhere; it is copied as pieces along the last dimension, one per tile each line crosses
// (trailing dimensions that tiles span whole merge into longer lines): a memcpy when the last
// dimension is the pool's last (contiguous in a tile), else an element-wise copy at its stride.
// Elements of edge tiles that lie past `shape` are not touched.
inline void ScatterRunToTiles(int rank, const int64_t* shape_in, const LiftedLayout& tiles_in, int64_t first,
                              int64_t count, const uint8_t* src, uint8_t* pool, size_t item_bytes,
                              bool streaming_stores = false) {
  if (count <= 0) return;
  // A trailing dimension that one tile spans whole is contiguous with the one before it in the
  // input; inside each tile too when the outer one's within-tile stride is the inner one's times
  // its extent (always so in stored order). Merge the two (extent, tile extent and tile stride of
  // the outer one, the inner one's within-tile stride).
  int64_t shape[kMaxRank] = {};
  LiftedLayout tiles = tiles_in;
  for (int d = 0; d < rank; ++d) shape[d] = shape_in[d];
  while (rank > 1) {
    const int outer = rank - 2, inner = rank - 1;
    if (tiles.shape[2 * inner + 1] != shape[inner] ||
        tiles.strides[2 * outer + 1] != tiles.strides[2 * inner + 1] * shape[inner])
      break;
    shape[outer] *= shape[inner];
    tiles.shape[2 * outer + 1] *= tiles.shape[2 * inner + 1];
    tiles.strides[2 * outer + 1] = tiles.strides[2 * inner + 1];
    --rank;
  }
  const int last = rank - 1;
  const int64_t line = shape[last];
  const int64_t tile_line = tiles.shape[2 * last + 1];  // tile extent along the last dimension
  const int64_t tile_step = tiles.strides[2 * last];    // pool elements between tiles along it
  const int64_t within = tiles.strides[2 * last + 1];   // pool elements between neighbours in a tile
  const int64_t item = static_cast<int64_t>(item_bytes);
  int64_t coords[kMaxRank];
  Unravel(rank, shape, first, coords);
  int64_t x = coords[last];
  // The last dimension moved (its neighbours lie `within` apart in a tile): whole lines are copied
  // a group at a time, neighbours along the dimension before it (in one tile) side by side, so
  // each store touches a cache line that the group's next stores fill too, instead of one element
  // per line. 8 lines: more read streams, a power of two apart, share too few cache sets (measured:
  // 2-3.4x the element-wise copy for 2- to 8-byte elements, 16 and 32 lines slower again).
  const int64_t group_most = 8;
  const int64_t group_tile = last > 0 ? tiles.shape[2 * (last - 1) + 1] : 1;
  const int64_t group_stride = last > 0 ? tiles.strides[2 * (last - 1) + 1] : 0;
  while (count > 0) {
    // Pool offset of element (coords[0..last-1], 0): the line's start in its first tile.
    const int64_t line_base = ScatterOffset(last, tiles, coords);
    if (within != 1 && x == 0 && last > 0 && group_most > 1) {
      const int64_t y = coords[last - 1];
      int64_t g = group_tile - y % group_tile;  // lines left in this tile along dimension last-1
      if (g > shape[last - 1] - y) g = shape[last - 1] - y;
      if (g > count / line) g = count / line;
      if (g > group_most) g = group_most;
      if (g > 1) {
        detail::ScatterLineGroup(g, line, src, pool + line_base * item, group_stride, tile_line, tile_step, within,
                                 item_bytes);
        src += g * line * item;
        count -= g * line;
        coords[last - 1] += g - 1;  // the last of the group: the carry below moves past it
        x = line;
      }
    }
    const int64_t end = x + (count < line - x ? count : line - x);
    count -= end - x;
    while (x < end) {
      const int64_t t = x / tile_line, in_tile = x - t * tile_line;
      const int64_t n = (tile_line - in_tile < end - x) ? tile_line - in_tile : end - x;
      uint8_t* dst = pool + (line_base + t * tile_step + in_tile * within) * item;
      if (within != 1) {
        switch (item_bytes) {
          case 1: detail::CopyElements<uint8_t>(n, src, item, dst, within * item); break;
          case 2: detail::CopyElements<uint16_t>(n, src, item, dst, within * item); break;
          case 4: detail::CopyElements<uint32_t>(n, src, item, dst, within * item); break;
          case 8: detail::CopyElements<uint64_t>(n, src, item, dst, within * item); break;
          default:
            for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * within * item, src + i * item, item_bytes);
        }
      } else if (streaming_stores) {
        detail::StreamingCopy(dst, src, static_cast<size_t>(n * item));
      } else {
        std::memcpy(dst, src, static_cast<size_t>(n * item));
      }
      src += n * item;
      x += n;
    }
    if (x < line) break;  // the run ended inside this line
    x = 0;
    for (int d = last - 1; d >= 0; --d) {
      if (++coords[d] < shape[d]) break;
      coords[d] = 0;
    }
  }
  if (streaming_stores) detail::StoreFence();
}

}  // namespace tessera::index
