// The regular chunk grid of an array, optionally grouped into shards: the one place where chunk
// counts, chunk boxes and shard positions are computed, on the host and in CUDA kernels.
//
// Conventions as in index.h: dimension 0 slowest, chunk coordinates ravel row-major. An array of
// `shape` cut into chunks of `chunk_shape` has chunk_count[d] = ceil(shape[d] / chunk_shape[d])
// chunks along d; the last of them is clipped to the array (its box ends at shape[d]). Shards
// group chunks_per_shard[d] chunks along d (1 everywhere: unsharded), so there are
// shard_count[d] = ceil(chunk_count[d] / chunks_per_shard[d]) of them and the last may hold
// fewer chunks. Chunk c lies in shard c / chunks_per_shard at position c % chunks_per_shard; a
// shard's slots (its index order) are the positions raveled row-major over chunks_per_shard.
//
// Int is int64_t for tessera's arrays (ChunkGrid) and uint64_t for HDF5's on-disk grids, whose
// maximum dimensions may exceed 2^63; kCapacity bounds the rank (HDF5 allows 32 dimensions).
// Plain data with fixed-size arrays: a kernel takes a grid by value.
// Preconditions: 0 <= rank <= kCapacity, shape >= 0, chunk_shape > 0, chunks_per_shard > 0.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/core/limits.h"
#include "tessera/index/index.h"

namespace tessera::index {

template <typename Int, int kCapacity = kMaxRank>
struct BasicChunkGrid {
  int rank = 0;
  Int shape[kCapacity] = {};
  Int chunk_shape[kCapacity] = {};
  Int chunk_count[kCapacity] = {};
  Int chunks_per_shard[kCapacity] = {};
  Int shard_count[kCapacity] = {};

  BasicChunkGrid() = default;
  // `chunks_per_shard` null: unsharded.
  TESSERA_HD BasicChunkGrid(int rank, const Int* shape, const Int* chunk_shape,
                            const Int* chunks_per_shard = nullptr)
      : rank(rank) {
    for (int d = 0; d < rank; ++d) {
      this->shape[d] = shape[d];
      this->chunk_shape[d] = chunk_shape[d];
      this->chunk_count[d] = CeilDiv(shape[d], chunk_shape[d]);
      this->chunks_per_shard[d] = chunks_per_shard ? chunks_per_shard[d] : Int{1};
      this->shard_count[d] = CeilDiv(this->chunk_count[d], this->chunks_per_shard[d]);
    }
  }
  // Host only: the same from vectors (`chunks_per_shard` empty: unsharded).
  BasicChunkGrid(const std::vector<Int>& shape, const std::vector<Int>& chunk_shape,
                 const std::vector<Int>& chunks_per_shard = {})
      : BasicChunkGrid(static_cast<int>(shape.size()), shape.data(), chunk_shape.data(),
                       chunks_per_shard.empty() ? nullptr : chunks_per_shard.data()) {}

  // Totals (an unbounded dimension 0, shape 0, has no chunks yet).
  TESSERA_HD Int ChunkCount() const { return ProductOf(chunk_count); }
  TESSERA_HD Int ShardCount() const { return ProductOf(shard_count); }
  TESSERA_HD Int ChunksPerShard() const { return ProductOf(chunks_per_shard); }

  // Row-major index of chunk coordinates over chunk_count, and back. Unravel leaves dimension 0
  // whatever remains, so it needs no count there (an unbounded dimension 0 unravels too).
  TESSERA_HD Int Ravel(const Int* chunk) const {
    Int linear = 0;
    for (int d = 0; d < rank; ++d) linear = linear * chunk_count[d] + chunk[d];
    return linear;
  }
  TESSERA_HD void Unravel(Int linear, Int* chunk) const {
    for (int d = rank - 1; d > 0; --d) {
      chunk[d] = linear % chunk_count[d];
      linear /= chunk_count[d];
    }
    if (rank > 0) chunk[0] = linear;
  }

  // The box of chunk c along d, clipped to the array: [origin, origin + extent). c < chunk_count.
  TESSERA_HD Int ChunkOrigin(int d, Int c) const { return c * chunk_shape[d]; }
  TESSERA_HD Int ChunkExtent(int d, Int c) const {
    const Int left = shape[d] - ChunkOrigin(d, c);
    return left < chunk_shape[d] ? left : chunk_shape[d];
  }
  TESSERA_HD void ChunkBox(const Int* chunk, Int* origin, Int* extent) const {
    for (int d = 0; d < rank; ++d) {
      origin[d] = ChunkOrigin(d, chunk[d]);
      extent[d] = ChunkExtent(d, chunk[d]);
    }
  }
  // True when the array's end cuts chunk c along d (so also for a chunk past the end).
  TESSERA_HD bool IsEdgeChunk(int d, Int c) const { return (c + 1) * chunk_shape[d] > shape[d]; }
  // Extent along d of the chunks laid whole, the edge chunk's padding included.
  TESSERA_HD Int PaddedExtent(int d) const { return chunk_count[d] * chunk_shape[d]; }

  // The chunk holding element coordinate x along d.
  TESSERA_HD Int ChunkOf(int d, Int x) const { return x / chunk_shape[d]; }
  // The same and x's offset inside that chunk, in a type T that may be narrower than Int where
  // the caller knows the extents fit (the CUDA scatter divides in 32 bits when it can).
  template <typename T>
  TESSERA_HD T ChunkOf(int d, T x, T* offset) const {
    const T size = static_cast<T>(chunk_shape[d]);
    const T c = x / size;
    *offset = x - c * size;
    return c;
  }
  // The chunks that the non-empty box [origin, origin + extent) touches: count[d] chunks from
  // first[d] along each d.
  TESSERA_HD void ChunksTouching(const Int* origin, const Int* extent, Int* first, Int* count) const {
    for (int d = 0; d < rank; ++d) {
      first[d] = ChunkOf(d, origin[d]);
      count[d] = ChunkOf(d, origin[d] + extent[d] - 1) - first[d] + 1;
    }
  }

  // Shards: the shard of chunk c along d, c's position in it, and back.
  TESSERA_HD Int ShardOf(int d, Int c) const { return c / chunks_per_shard[d]; }
  TESSERA_HD Int PositionInShard(int d, Int c) const { return c % chunks_per_shard[d]; }
  TESSERA_HD Int ChunkInShard(int d, Int shard, Int position) const {
    return shard * chunks_per_shard[d] + position;
  }
  // Both at once for chunk coordinates.
  TESSERA_HD void ShardAndPosition(const Int* chunk, Int* shard, Int* position) const {
    for (int d = 0; d < rank; ++d) {
      shard[d] = ShardOf(d, chunk[d]);
      position[d] = PositionInShard(d, chunk[d]);
    }
  }
  // The slot of a position in its shard (row-major over chunks_per_shard), and back.
  TESSERA_HD Int SlotInShard(const Int* position) const {
    Int slot = 0;
    for (int d = 0; d < rank; ++d) slot = slot * chunks_per_shard[d] + position[d];
    return slot;
  }
  TESSERA_HD void PositionOfSlot(Int slot, Int* position) const {
    for (int d = rank - 1; d >= 0; --d) {
      position[d] = slot % chunks_per_shard[d];
      slot /= chunks_per_shard[d];
    }
  }

 private:
  TESSERA_HD Int ProductOf(const Int* v) const {
    Int p = 1;
    for (int d = 0; d < rank; ++d) p *= v[d];
    return p;
  }
};

// Tessera's arrays: signed 64-bit extents, at most kMaxRank dimensions.
using ChunkGrid = BasicChunkGrid<int64_t>;

}  // namespace tessera::index
