// The streaming writer's shards stored slot by slot as their tiles are encoded (for a sink whose
// ShardSink::BeginShard gives a ShardWriter: a Zarr shard file on a local disk). For the active
// shard row it holds, per shard, which slots are encoded and how many are appended: each complete
// epoch's slots are appended in slot order as soon as every slot before them is, by the thread that
// encoded the slot at the front (one thread at a time per shard; the others go on encoding), and the
// thread that appends the row's last slot finishes the shard. A shard without a writer is handed to
// the sink whole by the StreamWriter.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "tessera/core/status.h"
#include "tessera/stream/layout.h"
#include "tessera/stream/shard_sink.h"

namespace tessera::stream {

class ShardAppender {
 public:
  // `layout` (its stored side) must outlive the appender.
  explicit ShardAppender(const StreamLayout& layout);
  ~ShardAppender() { Drop(); }
  ShardAppender(const ShardAppender&) = delete;
  ShardAppender& operator=(const ShardAppender&) = delete;

  // Before a complete epoch of `shard_row` is encoded: the first time, asks `sink` for a writer per
  // shard of the row (shards several epochs deep only within the process's share of open files).
  Status BeginRow(ShardSink* sink, int64_t shard_row, int64_t epoch);
  // The shard row ends with `epoch` (the array's last epoch may come before the row's).
  void MarkLaterEpochsReady(int64_t epoch);
  // Whether shard `s` of the active row is stored slot by slot.
  bool Appends(int64_t s) const { return shards_[s]->writer != nullptr; }
  // Slot `slot` of shard `s` (whose slots are `slots`) is encoded: appends what is ready; the
  // thread that appends the last slot finishes the shard and adds its bytes to *bytes_out.
  Status SlotEncoded(int64_t s, int64_t slot, std::span<const EncodedTile> slots, std::atomic<int64_t>* bytes_out);
  // Ends the active row's writers: finished ones are committed already; an unfinished one (a stream
  // closed inside a shard row, whose flush stored the row whole, or one that failed or was aborted)
  // removes its temporary file, of which nothing was visible. Returns the row's share of open files.
  void Drop();

 private:
  struct Shard {
    std::unique_ptr<ShardWriter> writer;
    std::mutex mu;
    std::vector<char> inner_slot_used;  // per slot of one epoch: some tile of the array lands in it
    std::vector<char> ready;   // per slot: encoded (or absent for good), waiting to be appended
    int64_t appended = 0;      // slots [0, appended) are stored
    bool appending = false;    // a thread is appending
    bool failed = false;       // an append failed: the shard is never finished
  };

  const StreamLayout& layout_;
  std::vector<std::unique_ptr<Shard>> shards_;  // one per active shard
  int64_t row_ = -1;             // the shard row whose writers shards_ holds; -1: none
  int64_t deep_shard_files_ = 0;  // the process's open files this row's deep shards hold
};

}  // namespace tessera::stream
