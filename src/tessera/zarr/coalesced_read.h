// Coalesced reads of sharded Zarr arrays on object stores, where every request costs a round trip.
//
// A read announces the chunks it will need (ChunkSource::BeginBatch). A shard whose every chunk is
// needed is fetched whole, index and data in one request. For other shards, once the index is
// known (one request, cached), the needed inner chunks are sorted by their offset in the shard and grouped into runs
// whose gaps are at most kMaxGapBytes and whose span is at most kMaxRunBytes. Each run is one range
// request, sent by the first reader of any of its chunks (readers of its other chunks wait for it);
// its bytes are released when its last chunk has been decoded.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/index/chunk_grid.h"
#include "tessera/read/selection_read.h"
#include "tessera/zarr/array.h"

namespace tessera::zarr {

class CoalescedShardBatch final : public ChunkBatch {
 public:
  static constexpr uint64_t kMaxGapBytes = uint64_t{1} << 20;
  static constexpr uint64_t kMaxRunBytes = uint64_t{32} << 20;

  CoalescedShardBatch(const ZarrArray& array, std::span<const std::vector<int64_t>> chunks);

  Result<bool> ReadChunkPrefix(std::span<const int64_t> coords, size_t prefix_bytes, Bytes* out) override;

 private:
  // Bytes fetched once, by the first reader of any of `remaining` chunks (the others wait for
  // them), and dropped when the last of those chunks has been decoded.
  template <typename T>
  struct SharedFetch {
    bool started = false;
    size_t remaining = 0;
    std::shared_future<Result<T>> value;
  };
  struct Run : SharedFetch<std::shared_ptr<const Bytes>> {
    uint64_t begin = 0, end = 0;  // byte range in the shard
  };
  struct ShardPlan {
    std::vector<Run> runs;
    std::unordered_map<size_t, size_t> run_of_slot;
  };
  struct ShardBytes {
    std::shared_ptr<const Bytes> bytes;  // null: the shard does not exist
    std::shared_ptr<const ShardIndex> index;
  };

  // `fetch`'s value, called by the first caller for `f`; `lock` (on mu_) is held on entry and
  // released while fetching or waiting.
  template <typename T, typename Fetch>
  static Result<T> GetShared(std::unique_lock<std::mutex>& lock, SharedFetch<T>& f, const Fetch& fetch);
  // One chunk of `f` decoded: the last one drops the bytes.
  template <typename T>
  void Done(SharedFetch<T>& f);

  // The positions along dimension `d` the read needs inside the shard at grid position `shard`.
  std::pair<std::vector<int64_t>::const_iterator, std::vector<int64_t>::const_iterator> Needed(int d,
                                                                                                  int64_t shard) const;
  // Whether the read needs every chunk of shard `shard` (grid coordinates).
  bool NeedsWholeShard(const int64_t* shard) const;
  Result<bool> ReadFromWholeShard(const std::string& key, const int64_t* within, size_t prefix_bytes, Bytes* out);

  // The runs of shard `shard` (grid coordinates), from its index. Called with mu_ held.
  std::unique_ptr<ShardPlan> PlanShard(const int64_t* shard, const ShardIndex& index) const;

  const ZarrArray& array_;
  const index::ChunkGrid grid_;                      // the array's read grid, with its shards
  const std::vector<std::vector<int64_t>> chunks_;  // per dimension, ascending
  std::mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<ShardPlan>> plans_;
  std::unordered_map<std::string, SharedFetch<ShardBytes>> whole_;
};

}  // namespace tessera::zarr
