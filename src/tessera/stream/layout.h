// The streaming writer's plan: every shape, stride, permutation and buffer size the pipeline
// needs, computed once into plain data that the CPU and CUDA backends both consume.
//
// Vocabulary (dimension 0 slowest, as everywhere):
//   tile          one inner chunk (the unit of compression), tile_shape elements
//   epoch         one row of tiles along dimension 0: tile_shape[0] rows of the array, holding
//                 M = prod_{d>0} tile_count[d] tiles (tile_count[d] = ceil(shape[d] / tile_shape[d]))
//   shard         tiles_per_shard tiles per dimension; one stored object
//   shard epoch   tiles_per_shard[0] epochs: the epochs that feed the same row of shards. At any
//                 time S = prod_{d>0} shard_count[d] shards are active; at a shard-epoch boundary
//                 they are complete and emitted.
// Within an epoch, tile i (row-major over tile_count[1..]) goes to shard-major position
// permutation.Map(i) = shard_in_epoch * tiles_per_shard_inner + within_inner, and into slot
//   within_outer * tiles_per_shard_inner + within_inner   (within_outer = epoch % tps[0])
// of its shard's index.
//
// Arrival order: the input may arrive with dimensions 1.. in another order than they are stored
// (arrival_order[i] = the stored dimension that arriving dimension i is; dimension 0 stays first).
// Only the input side changes: the scatter into the tile pool (and a direct epoch's gather) walks
// the input in its arriving order and puts each element at its stored place; tiles, shards and
// everything after them are in stored order as always.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/core/limits.h"
#include "tessera/core/status.h"
#include "tessera/index/chunk_grid.h"
#include "tessera/index/index.h"

namespace tessera::stream {

// Bytes of input the CPU backend reads at a time (AppendFrom) before scattering them into tiles.
inline constexpr int64_t kInputStagingBytes = int64_t{2} << 20;
// An appended span is scattered by several threads (when the encoder is idle) only in pieces of
// at least this many bytes: below it, starting the threads costs more than they save.
inline constexpr int64_t kParallelScatterMinBytes = int64_t{4} << 20;

struct StreamLayout {
  int rank = 0;
  int64_t shape[kMaxRank] = {};            // shape[0] == 0: unbounded along dimension 0
  int64_t tile_shape[kMaxRank] = {};
  int64_t tiles_per_shard[kMaxRank] = {};
  int64_t tile_count[kMaxRank] = {};       // tile_count[0] == 0 when unbounded
  int64_t shard_count[kMaxRank] = {};      // shard_count[0] == 0 when unbounded
  int64_t shard_shape[kMaxRank] = {};      // tile_shape * tiles_per_shard
  DataType dtype = DataType::kUInt8;
  int64_t item_bytes = 0;

  int64_t tile_elements = 0;
  int64_t tile_bytes = 0;
  int64_t row_elements = 0;                // elements of one row along dimension 0
  int64_t epoch_rows = 0;                  // tile_shape[0]
  int64_t epoch_bytes = 0;                 // epoch_rows * row_elements * item_bytes
  int64_t epoch_buffer_bytes = 0;          // a CPU epoch buffer, a tile pool: tiles_per_epoch * tile_bytes (>= epoch_bytes)
  int64_t tiles_per_epoch = 0;             // M
  int64_t tiles_per_shard_inner = 0;       // prod_{d>0} tiles_per_shard[d]
  int64_t tiles_per_shard_total = 0;       // tiles_per_shard_inner * tiles_per_shard[0]
  int64_t shards_per_epoch = 0;            // S: active shards per shard epoch
  int64_t epochs_per_shard = 0;            // tiles_per_shard[0]
  int64_t epoch_count = 0;                 // total epochs; 0 when unbounded

  // The input's dimension order: arriving dimension i is stored dimension arrival_order[i] (the
  // identity unless the request or ApplyArrivalOrder set one). input_epoch_shape: one epoch as it
  // arrives, epoch_rows x shape[arrival_order[1..]].
  int64_t arrival_order[kMaxRank] = {};
  int64_t input_epoch_shape[kMaxRank] = {};
  // Tile-pool scatter of one epoch of input, over the arriving dimensions (PermuteScatterLayout of
  // the stored one; tile_count[0] = 1): ScatterRunToTiles(rank, input_epoch_shape, scatter, ...).
  index::LiftedLayout scatter;
  // Tile -> shard-major permutation over dims 1..rank-1.
  index::ShardPermutation permutation;

  // Buffer sizes (bytes) and the memory plan.
  int64_t max_compressed_tile_bytes = 0;
  int64_t index_bytes = 0;                 // encoded shard index size
  int64_t input_buffers = 2;               // epoch buffers in flight (filling + compressing)
  int64_t planned_peak_bytes = 0;

  // The array's tile grid, tiles_per_shard tiles per shard (chunk_count[0] = 0 when unbounded).
  index::ChunkGrid TileGrid() const { return index::ChunkGrid(rank, shape, tile_shape, tiles_per_shard); }
  // Shard-major position (within the epoch) of tile i -> shard in epoch and within-inner slot.
  int64_t ShardOfPosition(int64_t pos) const { return pos / tiles_per_shard_inner; }
  int64_t SlotOfPosition(int64_t epoch, int64_t pos) const {
    return (epoch % epochs_per_shard) * tiles_per_shard_inner + pos % tiles_per_shard_inner;
  }
  // The grid coordinates of shard `s` (of an epoch's shards_per_epoch) of shard row `shard_row`.
  void ShardCoords(int64_t shard_row, int64_t s, int64_t* coords) const {
    coords[0] = shard_row;
    if (rank > 1) index::Unravel(rank - 1, shard_count + 1, s, coords + 1);
  }
  bool ArrivesInStoredOrder() const {
    for (int d = 0; d < rank; ++d)
      if (arrival_order[d] != d) return false;
    return true;
  }
  // Per stored dimension, the distance (in elements) between neighbours along it in one epoch of
  // input as it arrives (row-major over input_epoch_shape): a gather's source strides.
  void InputStridesByStoredDimension(int64_t* strides) const {
    int64_t arriving[kMaxRank];
    index::RowMajorStrides(rank, input_epoch_shape, arriving);
    for (int i = 0; i < rank; ++i) strides[arrival_order[i]] = arriving[i];
  }
};

struct LayoutRequest {
  DataType dtype = DataType::kUInt8;
  std::vector<int64_t> shape;             // shape[0] == 0: unbounded
  std::vector<int64_t> tile_shape;        // inner chunk shape
  std::vector<int64_t> tiles_per_shard;   // all 1 for an unsharded array
  std::vector<int64_t> arrival_order;     // ArraySpec::arrival_order; empty: stored order
  int64_t max_compressed_tile_bytes = 0;  // worst case of the codec chain on one tile
  int64_t index_bytes = 0;                // encoded index size of one shard
  int threads = 1;
};

Result<StreamLayout> PlanStreamLayout(const LayoutRequest& request);

// Sets the order the input's dimensions arrive in (ArraySpec::arrival_order: a permutation of
// 0..rank-1 with order[0] == 0; empty: stored order) and the input side that follows from it.
// Errors name arrival_order and say what was expected.
Status ApplyArrivalOrder(StreamLayout* layout, std::span<const int64_t> order);

// One line per buffer of the memory plan, for `tessera stream --plan`.
std::string DescribePlan(const StreamLayout& layout, int threads);

}  // namespace tessera::stream
