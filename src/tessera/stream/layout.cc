#include "tessera/stream/layout.h"

#include <algorithm>
#include <sstream>

namespace tessera::stream {
namespace {

// An error about ArraySpec::arrival_order, named as the spec names it.
Status BadArrivalOrder(const std::string& message) {
  return InvalidArgument("arrival_order: " + message).WithField("arrival_order");
}

}  // namespace

Result<StreamLayout> PlanStreamLayout(const LayoutRequest& r) {
  const int rank = static_cast<int>(r.shape.size());
  if (rank < 1 || rank > kMaxRank)
    return InvalidArgument("stream: rank must be 1.." + std::to_string(kMaxRank));
  if (static_cast<int>(r.tile_shape.size()) != rank || static_cast<int>(r.tiles_per_shard.size()) != rank)
    return InvalidArgument("stream: chunk shape and chunks per shard need one entry per dimension");
  StreamLayout L;
  L.rank = rank;
  L.dtype = r.dtype;
  L.item_bytes = static_cast<int64_t>(ItemSize(r.dtype));
  for (int d = 0; d < rank; ++d) {
    if (r.shape[d] < 0 || (d > 0 && r.shape[d] == 0))
      return InvalidArgument("stream: only dimension 0 may be 0 (unbounded); dimension " + std::to_string(d) + " is " +
                             std::to_string(r.shape[d]));
    if (r.tile_shape[d] <= 0 || r.tiles_per_shard[d] <= 0)
      return InvalidArgument(std::string("stream: chunk shape and chunks per shard must be positive; dimension ")
                                 .append(std::to_string(d))
                                 .append(" has chunk ")
                                 .append(std::to_string(r.tile_shape[d]))
                                 .append(", chunks per shard ")
                                 .append(std::to_string(r.tiles_per_shard[d])));
  }
  const index::ChunkGrid grid(r.shape, r.tile_shape, r.tiles_per_shard);
  for (int d = 0; d < rank; ++d) {
    L.shape[d] = r.shape[d];
    L.tile_shape[d] = r.tile_shape[d];
    L.tiles_per_shard[d] = r.tiles_per_shard[d];
    L.shard_shape[d] = r.tile_shape[d] * r.tiles_per_shard[d];
    L.tile_count[d] = grid.chunk_count[d];
    L.shard_count[d] = grid.shard_count[d];
  }
  L.tile_elements = index::Product(rank, L.tile_shape);
  L.tile_bytes = L.tile_elements * L.item_bytes;
  L.row_elements = index::Product(rank - 1, L.shape + 1);
  L.epoch_rows = L.tile_shape[0];
  L.epoch_bytes = L.epoch_rows * L.row_elements * L.item_bytes;
  L.tiles_per_epoch = index::Product(rank - 1, L.tile_count + 1);
  L.tiles_per_shard_inner = index::Product(rank - 1, L.tiles_per_shard + 1);
  L.epochs_per_shard = L.tiles_per_shard[0];
  L.tiles_per_shard_total = L.tiles_per_shard_inner * L.epochs_per_shard;
  L.shards_per_epoch = index::Product(rank - 1, L.shard_count + 1);
  L.epoch_count = L.tile_count[0];

  // One epoch: a single tile row along dimension 0.
  int64_t epoch_tiles[kMaxRank];
  epoch_tiles[0] = 1;
  for (int d = 1; d < rank; ++d) epoch_tiles[d] = L.tile_count[d];
  L.scatter = index::MakeTileScatterLayout(rank, epoch_tiles, L.tile_shape);
  for (int d = 0; d < rank; ++d) {
    L.arrival_order[d] = d;
    L.input_epoch_shape[d] = d == 0 ? L.epoch_rows : L.shape[d];
  }
  TESSERA_RETURN_IF_ERROR(ApplyArrivalOrder(&L, r.arrival_order));
  L.permutation = index::MakeShardPermutation(rank - 1, L.tile_count + 1, L.tiles_per_shard + 1);

  L.max_compressed_tile_bytes = r.max_compressed_tile_bytes > 0 ? r.max_compressed_tile_bytes : L.tile_bytes;
  L.index_bytes = r.index_bytes;
  // Memory plan (worst case): the epoch buffers (tile pools on the CPU, whose edge tiles are
  // padded: at least epoch_bytes), the compressed tiles of one shard epoch plus one epoch (the
  // CUDA backend collects an epoch before moving it into its slots; the CPU encodes straight into
  // the slots), one scratch tile per thread, the input staging buffer and the shard index of
  // every active shard.
  const int64_t threads = r.threads > 0 ? r.threads : 1;
  const int64_t compressed_epoch = L.tiles_per_epoch * L.max_compressed_tile_bytes;
  L.epoch_buffer_bytes = L.tiles_per_epoch * L.tile_bytes;
  L.planned_peak_bytes = L.input_buffers * L.epoch_buffer_bytes + (L.epochs_per_shard + 1) * compressed_epoch +
                         threads * L.tile_bytes + kInputStagingBytes +
                         L.shards_per_epoch * (L.tiles_per_shard_total * 16 + L.index_bytes);
  return L;
}

Status ApplyArrivalOrder(StreamLayout* L, std::span<const int64_t> order) {
  const int rank = L->rank;
  int64_t identity[kMaxRank];
  for (int d = 0; d < rank; ++d) identity[d] = d;
  if (order.empty()) order = std::span<const int64_t>(identity, static_cast<size_t>(rank));
  auto listed = [&order] {
    std::string text;
    for (int64_t d : order) text += (text.empty() ? "" : ",") + std::to_string(d);
    return text;
  };
  if (static_cast<int>(order.size()) != rank)
    return BadArrivalOrder(listed() + " has " + std::to_string(order.size()) + " entries for a rank-" +
                           std::to_string(rank) + " array (one per dimension)");
  bool seen[kMaxRank] = {};
  for (int64_t d : order) {
    if (d < 0 || d >= rank || seen[d])
      return BadArrivalOrder("must be a permutation of 0.." + std::to_string(rank - 1) + ", not " + listed());
    seen[d] = true;
  }
  if (order[0] != 0)
    return BadArrivalOrder("must start with 0 (frames arrive along dimension 0), not " + listed());
  // The stored scatter (arrival_order is the identity when PlanStreamLayout builds it) is undone
  // first, so the order may be set again.
  int64_t inverse[kMaxRank];
  for (int i = 0; i < rank; ++i) inverse[L->arrival_order[i]] = i;
  const index::LiftedLayout stored = index::PermuteScatterLayout(L->scatter, rank, inverse);
  for (int i = 0; i < rank; ++i) {
    L->arrival_order[i] = order[i];
    L->input_epoch_shape[i] = i == 0 ? L->epoch_rows : L->shape[order[i]];
  }
  L->scatter = index::PermuteScatterLayout(stored, rank, L->arrival_order);
  return Status::Ok();
}

std::string DescribePlan(const StreamLayout& L, int threads) {
  auto mib = [](int64_t b) {
    std::ostringstream s;
    s.precision(1);
    s << std::fixed << static_cast<double>(b) / (1 << 20) << " MiB";
    return s.str();
  };
  const int64_t compressed_epoch = L.tiles_per_epoch * L.max_compressed_tile_bytes;
  std::ostringstream o;
  o << "plan: " << L.tiles_per_epoch << " tiles per epoch (" << L.epoch_rows << " rows), " << L.shards_per_epoch
    << " active shards of " << L.tiles_per_shard_total << " tiles, " << L.epochs_per_shard << " epochs per shard row\n"
    << "  input epoch buffers:    " << L.input_buffers << " x " << mib(L.epoch_buffer_bytes) << "\n"
    << "  input staging:          " << mib(kInputStagingBytes) << "\n"
    << "  compressed tiles:       " << (L.epochs_per_shard + 1) << " epochs x " << mib(compressed_epoch)
    << " (worst case)\n"
    << "  per-thread scratch:     " << threads << " x " << mib(L.tile_bytes) << "\n"
    << "  planned peak:           " << mib(L.planned_peak_bytes) << "\n";
  if (!L.ArrivesInStoredOrder()) {
    o << "  arrival order:          ";
    for (int i = 0; i < L.rank; ++i) o << (i ? "," : "") << L.arrival_order[i];
    o << " (the stored dimension each arriving one is; the input is scattered into the tiles as it arrives)\n";
  }
  return o.str();
}

}  // namespace tessera::stream
