// Uploads off the writer's threads. A store whose writes return as soon as their value is queued
// (copied), while a few upload threads store the values in the wrapped store: on an object store a
// PUT waits on the network, and the compression threads should not. The queue is bounded in bytes
// (a line of the stream's memory plan), so a slow network stalls the writer only when it is full.
//
// Ordering and failure:
// - writes of one key are applied in call order; reading or erasing a key waits for its queued
//   writes; List waits for every queued write;
// - Publish (metadata) is applied only after every earlier write is durable; a publish that can
//   start when a later publish of its key can too is skipped (the later one supersedes it);
// - after a failed write, queued writes are dropped (so nothing is published after a failure), and
//   every later Set, SetParts, Publish and Flush returns that failure. Erase still works (cleanup).
// - conditional writes (SetPartsIf, EraseIf) are never queued: they Flush first (returning the
//   failure of an earlier write, if any) and then call the wrapped store, so they are ordered after
//   every earlier write and their answer is the wrapped store's. GetVersioned waits for the key's
//   queued writes, like Get.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tessera/store/store.h"

namespace tessera {

struct WriteBehindOptions {
  int uploads = 8;  // upload threads (requests in flight)
  // Queued and uploading values and the buffers kept for reuse; one larger value is let through alone.
  int64_t max_queued_bytes = int64_t{64} << 20;
};

class WriteBehindStore final : public Store {
 public:
  WriteBehindStore(std::shared_ptr<Store> inner, WriteBehindOptions options);
  // Waits for the queued writes (call Flush first to learn whether they succeeded).
  ~WriteBehindStore() override;

  Result<std::optional<Bytes>> Get(const std::string& key) const override;
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override;
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override;
  Result<std::optional<SuffixRead>> GetSuffixAndSize(const std::string& key, uint64_t length) const override;
  Result<std::optional<uint64_t>> Size(const std::string& key) const override;
  int io_concurrency() const override { return inner_->io_concurrency(); }
  std::string Describe(const std::string& key) const override { return inner_->Describe(key); }

  Status Set(const std::string& key, ByteView value) override;
  Status SetParts(const std::string& key, std::span<const ByteView> parts) override;
  Status Publish(const std::string& key, ByteView value) override;
  // Synchronous (after the key's queued writes): the wrapped store streams the value itself.
  Status CopyFrom(const std::string& key, const ReadableStore& source, const std::string& source_key) override;
  // The wrapped store's writable file (a file store's temporary file beside the target, an object
  // store's staging under TMPDIR); its Commit is synchronous like CopyFrom: it waits for the key's
  // queued writes, and after a failed write or Cancel it stores nothing and returns that failure.
  Result<std::unique_ptr<WritableFile>> OpenWritableFile(const std::string& key) override;
  Status Erase(const std::string& key) override;
  Result<std::optional<VersionedValue>> GetVersioned(const std::string& key) const override;
  Result<bool> SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                          const WriteCondition& condition) override;
  Result<bool> EraseIf(const std::string& key, const WriteCondition& condition) override;
  Status Flush() override;
  // Drops the queued writes and waits for the ones uploading (an aborted stream stores nothing
  // more); later writes fail with kFailedPrecondition.
  void Cancel();

  Result<std::vector<std::string>> List(const std::string& prefix) const override;

  int64_t max_queued_bytes() const { return options_.max_queued_bytes; }

 private:
  struct Write {
    uint64_t seq = 0;
    std::string key;
    Bytes value;
    bool publish = false;
  };

  Status Enqueue(const std::string& key, std::span<const ByteView> parts, bool publish);
  // The first queued write that may start now (its key idle and no earlier write of it queued; a
  // publish only once every earlier write is done), or queue_.end().
  std::deque<Write>::iterator NextStartable();
  // `w`, a publish about to start, gives way to the latest queued publish of its key whose earlier
  // writes are all done but for publishes of the key: that one may be applied now and holds newer
  // metadata, and the ones between are superseded. Without this, a store slower than the stream's
  // rows works through a growing backlog of stale metadata, one request at a time, before Flush
  // or Close can return.
  void SupersedeLocked(Write* w);
  void UploadLoop();
  void WaitForKey(const std::string& key) const;
  void WaitForAll() const;
  void DropQueueLocked();

  const std::shared_ptr<Store> inner_;
  const WriteBehindOptions options_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<Write> queue_;                 // not started yet, in call order
  std::map<std::string, int> pending_keys_;  // queued or uploading writes per key
  std::set<std::string> uploading_keys_;
  std::set<uint64_t> unfinished_;           // seqs of queued and uploading writes
  std::vector<Bytes> spare_;                // buffers of finished writes, for reuse
  int64_t spare_bytes_ = 0;                 // their capacity
  int64_t queued_bytes_ = 0;
  uint64_t next_seq_ = 0;
  Status error_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tessera
