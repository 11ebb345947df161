#include "tessera/zarr/coalesced_read.h"

#include <algorithm>

#include "tessera/core/limits.h"
#include "tessera/index/index.h"

namespace tessera::zarr {

CoalescedShardBatch::CoalescedShardBatch(const ZarrArray& array, std::span<const std::vector<int64_t>> chunks)
    : array_(array), grid_(array.ReadGrid()), chunks_(chunks.begin(), chunks.end()) {}

template <typename T, typename Fetch>
Result<T> CoalescedShardBatch::GetShared(std::unique_lock<std::mutex>& lock, SharedFetch<T>& f, const Fetch& fetch) {
  std::shared_future<Result<T>> value = f.value;
  std::promise<Result<T>> promise;
  const bool first = !f.started;
  if (first) {
    f.started = true;
    f.value = value = promise.get_future().share();
  }
  lock.unlock();
  if (first) promise.set_value(fetch());
  return value.get();
}

template <typename T>
void CoalescedShardBatch::Done(SharedFetch<T>& f) {
  std::lock_guard<std::mutex> lock(mu_);
  if (--f.remaining == 0) f.value = {};
}

std::pair<std::vector<int64_t>::const_iterator, std::vector<int64_t>::const_iterator> CoalescedShardBatch::Needed(
    int d, int64_t shard) const {
  const int64_t first = grid_.ChunkInShard(d, shard, 0), per = grid_.chunks_per_shard[d];
  auto lo = std::lower_bound(chunks_[d].begin(), chunks_[d].end(), first);
  return {lo, std::lower_bound(lo, chunks_[d].end(), first + per)};
}

bool CoalescedShardBatch::NeedsWholeShard(const int64_t* shard) const {
  for (int d = 0; d < static_cast<int>(chunks_.size()); ++d) {
    auto [lo, hi] = Needed(d, shard[d]);
    if (hi - lo != grid_.chunks_per_shard[d]) return false;
  }
  return true;
}

std::unique_ptr<CoalescedShardBatch::ShardPlan> CoalescedShardBatch::PlanShard(const int64_t* shard,
                                                                               const ShardIndex& index) const {
  const int rank = static_cast<int>(chunks_.size());
  // Per dimension, the needed positions inside this shard.
  std::vector<std::vector<int64_t>> within(rank);
  int64_t counts[kMaxRank];
  for (int d = 0; d < rank; ++d) {
    auto [lo, hi] = Needed(d, shard[d]);
    for (auto it = lo; it != hi; ++it) within[d].push_back(grid_.PositionInShard(d, *it));
    counts[d] = static_cast<int64_t>(within[d].size());
  }
  struct Piece {
    uint64_t begin, end;
    size_t slot;
  };
  std::vector<Piece> pieces;
  const int64_t n = index::Product(rank, counts);
  for (int64_t i = 0; i < n; ++i) {
    int64_t which[kMaxRank], pos[kMaxRank];
    index::Unravel(rank, counts, i, which);
    for (int d = 0; d < rank; ++d) pos[d] = within[d][which[d]];
    const size_t slot = static_cast<size_t>(grid_.SlotInShard(pos));
    if (index.IsEmpty(slot)) continue;
    pieces.push_back({index.offset(slot), index.offset(slot) + index.nbytes(slot), slot});
  }
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.begin < b.begin; });
  auto plan = std::make_unique<ShardPlan>();
  for (const Piece& p : pieces) {
    Run* run = plan->runs.empty() ? nullptr : &plan->runs.back();
    if (run == nullptr || p.begin > run->end + kMaxGapBytes || std::max(run->end, p.end) - run->begin > kMaxRunBytes) {
      run = &plan->runs.emplace_back();
      run->begin = p.begin;
    }
    run->end = std::max(run->end, p.end);
    ++run->remaining;
    plan->run_of_slot[p.slot] = plan->runs.size() - 1;
  }
  return plan;
}

Result<bool> CoalescedShardBatch::ReadChunkPrefix(std::span<const int64_t> coords, size_t prefix_bytes, Bytes* out) {
  const int rank = static_cast<int>(coords.size());
  std::vector<int64_t> shard(rank);
  int64_t within[kMaxRank];
  grid_.ShardAndPosition(coords.data(), shard.data(), within);
  const std::string key = array_.ChunkKey(shard);
  if (NeedsWholeShard(shard.data())) return ReadFromWholeShard(key, within, prefix_bytes, out);
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const ShardIndex> index, array_.GetShardIndex(key));
  if (!index) return false;
  const size_t slot = static_cast<size_t>(grid_.SlotInShard(within));
  if (index->IsEmpty(slot)) return false;

  std::unique_lock<std::mutex> lock(mu_);
  std::unique_ptr<ShardPlan>& plan = plans_[key];
  if (!plan) plan = PlanShard(shard.data(), *index);
  auto found = plan->run_of_slot.find(slot);
  if (found == plan->run_of_slot.end()) {  // not announced: read alone
    lock.unlock();
    return array_.ReadChunkPrefix(coords, prefix_bytes, out);
  }
  Run& run = plan->runs[found->second];
  const Result<std::shared_ptr<const Bytes>> bytes =
      GetShared(lock, run, [&]() -> Result<std::shared_ptr<const Bytes>> {
        Result<std::optional<Bytes>> got = GetExactRange(*array_.store_, key, run.begin, run.end - run.begin);
        const std::string context = "shard " + array_.store_->Describe(key) + ": inner chunks at " +
                                    ByteRangeText(run.begin, run.end) + " (one coalesced request)";
        if (!got.ok()) return CorruptData(context + ": " + got.status().message());
        if (!*got) return NotFound(context + ": shard disappeared while reading");
        return std::shared_ptr<const Bytes>(std::make_shared<Bytes>(std::move(**got)));
      });
  Status st = bytes.status();
  if (st.ok()) {
    const uint64_t off = index->offset(slot), n = index->nbytes(slot);
    st = array_.DecodeInnerChunk(key, within, off, ByteView(**bytes).subspan(off - run.begin, n), prefix_bytes, out);
  }
  Done(run);
  if (!st.ok()) return st;
  return true;
}

Result<bool> CoalescedShardBatch::ReadFromWholeShard(const std::string& key, const int64_t* within,
                                                     size_t prefix_bytes, Bytes* out) {
  std::unique_lock<std::mutex> lock(mu_);
  SharedFetch<ShardBytes>& whole = whole_[key];
  if (!whole.started) whole.remaining = array_.ChunksPerShard();
  const Result<ShardBytes> got = GetShared(lock, whole, [&]() -> Result<ShardBytes> {
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> bytes, array_.store_->Get(key));
    if (!bytes) return ShardBytes{};
    auto shared = std::make_shared<const Bytes>(std::move(*bytes));
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const ShardIndex> index, array_.IndexFromShard(key, *shared));
    return ShardBytes{std::move(shared), std::move(index)};
  });
  Result<bool> result = got.status();
  if (got.ok() && !got->bytes) {
    result = false;
  } else if (got.ok()) {
    const size_t slot = static_cast<size_t>(grid_.SlotInShard(within));
    if (got->index->IsEmpty(slot)) {
      result = false;
    } else {
      const uint64_t off = got->index->offset(slot), n = got->index->nbytes(slot);
      Status st = array_.DecodeInnerChunk(key, within, off, ByteView(*got->bytes).subspan(off, n), prefix_bytes, out);
      result = st.ok() ? Result<bool>(true) : Result<bool>(st);
    }
  }
  Done(whole);
  return result;
}

}  // namespace tessera::zarr
