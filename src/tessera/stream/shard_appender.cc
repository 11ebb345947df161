#include "tessera/stream/shard_appender.h"

#include <algorithm>

#include <sys/resource.h>

namespace tessera::stream {
namespace {

// Shards several epochs deep keep a file open each from their row's first epoch to its last. All
// the streams of the process (an acquisition's arrays, their pyramids' levels) share this many such
// files: a quarter of the soft limit on open files, at most 1024. A row that does not fit is stored
// in whole shards. Shards one epoch deep are filled one after another (shard-major order), so only
// a few are open at a time and they need no share.
std::atomic<int64_t>& DeepShardFiles() {
  static std::atomic<int64_t> left{[] {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return int64_t{1024};
    return std::min<int64_t>(static_cast<int64_t>(limit.rlim_cur) / 4, 1024);
  }()};
  return left;
}

bool TakeDeepShardFiles(int64_t n) {
  std::atomic<int64_t>& left = DeepShardFiles();
  for (int64_t now = left.load(); now >= n;)
    if (left.compare_exchange_weak(now, now - n)) return true;
  return false;
}

}  // namespace

ShardAppender::ShardAppender(const StreamLayout& layout) : layout_(layout) {
  const StreamLayout& L = layout_;
  shards_.resize(static_cast<size_t>(L.shards_per_epoch));
  for (auto& shard : shards_) {
    shard = std::make_unique<Shard>();
    shard->inner_slot_used.assign(static_cast<size_t>(L.tiles_per_shard_inner), 0);
  }
  // A shard at the array's edge (along dimensions 1..rank-1) has slots no tile lands in: absent for
  // good, so ready to append from the start of each shard row.
  for (int64_t i = 0; i < L.tiles_per_epoch; ++i) {
    const int64_t pos = L.permutation.Map(i);
    shards_[L.ShardOfPosition(pos)]->inner_slot_used[L.SlotOfPosition(0, pos)] = 1;
  }
}

// Only from the row's first epoch: a stream always starts on a shard row (a resumed one too), and a
// flushed partial epoch is encoded again once complete, so this holds; were it not, the slots before
// would never be appended, and those shards are stored whole instead.
Status ShardAppender::BeginRow(ShardSink* sink, int64_t shard_row, int64_t epoch) {
  if (row_ == shard_row) return Status::Ok();
  const StreamLayout& L = layout_;
  Drop();  // an earlier row's unfinished shards (a flush stored them whole)
  row_ = shard_row;
  bool append = epoch % L.epochs_per_shard == 0;
  if (append && L.epochs_per_shard > 1) {
    append = TakeDeepShardFiles(L.shards_per_epoch);
    if (append) deep_shard_files_ = L.shards_per_epoch;
  }
  for (int64_t s = 0; s < L.shards_per_epoch; ++s) {
    Shard& p = *shards_[s];
    p.ready.resize(static_cast<size_t>(L.tiles_per_shard_total));
    for (int64_t k = 0; k < L.tiles_per_shard_total; ++k) p.ready[k] = !p.inner_slot_used[k % L.tiles_per_shard_inner];
    p.appended = 0;
    p.appending = false;
    p.failed = false;
    if (!append) continue;
    int64_t coords[kMaxRank];
    L.ShardCoords(shard_row, s, coords);
    TESSERA_ASSIGN_OR_RETURN(p.writer, sink->BeginShard(std::span<const int64_t>(coords, static_cast<size_t>(L.rank))));
  }
  return Status::Ok();
}

// The slots of the epochs after `epoch` stay absent, so they are ready to append (no bytes).
void ShardAppender::MarkLaterEpochsReady(int64_t epoch) {
  const StreamLayout& L = layout_;
  const int64_t first = (epoch % L.epochs_per_shard + 1) * L.tiles_per_shard_inner;
  for (auto& p : shards_)
    if (p->writer) std::fill(p->ready.begin() + first, p->ready.end(), 1);
}

// Appends slot `slot`, and every ready slot after it, once every slot before it is appended. One
// thread appends at a time; a slot that becomes ready meanwhile is appended by that thread.
Status ShardAppender::SlotEncoded(int64_t s, int64_t slot, std::span<const EncodedTile> slots,
                                  std::atomic<int64_t>* bytes_out) {
  Shard& p = *shards_[s];
  const int64_t n = static_cast<int64_t>(slots.size());
  std::unique_lock<std::mutex> lock(p.mu);
  p.ready[slot] = 1;
  if (p.appending || p.failed) return Status::Ok();  // failed: the thread that failed reports it
  p.appending = true;
  while (p.appended < n && p.ready[p.appended]) {
    const int64_t begin = p.appended;
    int64_t end = begin;
    while (end < n && p.ready[end]) ++end;
    lock.unlock();
    const std::span<const EncodedTile> run = slots.subspan(begin, end - begin);
    Status st = p.writer->Append(run);
    lock.lock();
    if (!st.ok()) {
      p.appending = false;
      p.failed = true;
      return st;
    }
    p.appended = end;
  }
  p.appending = false;
  if (p.appended < n) return Status::Ok();
  lock.unlock();
  *bytes_out += StoredBytes(slots);
  return p.writer->Finish();  // the only call: every slot is appended, none is reported again
}

void ShardAppender::Drop() {
  for (auto& p : shards_) p->writer.reset();
  row_ = -1;
  DeepShardFiles() += deep_shard_files_;
  deep_shard_files_ = 0;
}

}  // namespace tessera::stream
