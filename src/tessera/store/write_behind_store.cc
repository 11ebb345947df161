#include "tessera/store/write_behind_store.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <utility>

namespace tessera {
namespace {

// The wrapped store's file, with a check run before its Commit.
class WriteBehindFile final : public WritableFile {
 public:
  WriteBehindFile(std::unique_ptr<WritableFile> inner, std::function<Status()> before_commit)
      : inner_(std::move(inner)), before_commit_(std::move(before_commit)) {}

  Status WriteAt(uint64_t offset, ByteView bytes) override { return inner_->WriteAt(offset, bytes); }
  Status Truncate(uint64_t size) override { return inner_->Truncate(size); }
  Status Commit() override {
    if (Status st = before_commit_(); !st.ok()) {
      inner_->Abandon();
      return st;
    }
    return inner_->Commit();
  }
  void Abandon() override { inner_->Abandon(); }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  const std::unique_ptr<WritableFile> inner_;
  const std::function<Status()> before_commit_;
};

}  // namespace

WriteBehindStore::WriteBehindStore(std::shared_ptr<Store> inner, WriteBehindOptions options)
    : inner_(std::move(inner)), options_(options) {
  const int n = std::max(1, options_.uploads);
  threads_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { UploadLoop(); });
}

WriteBehindStore::~WriteBehindStore() {
  WaitForAll();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

Status WriteBehindStore::Enqueue(const std::string& key, std::span<const ByteView> parts, bool publish) {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  int64_t n = 0;
  for (ByteView p : parts) n += static_cast<int64_t>(p.size());
  std::unique_lock<std::mutex> lock(mu_);
  // Room in the queue; a value larger than the whole budget waits for an empty queue.
  cv_.wait(lock, [&] { return !error_.ok() || queued_bytes_ == 0 || queued_bytes_ + n <= options_.max_queued_bytes; });
  if (!error_.ok()) return error_;
  Write w;
  w.seq = next_seq_++;
  w.key = key;
  w.publish = publish;
  auto spare = std::find_if(spare_.begin(), spare_.end(), [&](const Bytes& b) { return b.capacity() >= size_t(n); });
  if (spare != spare_.end()) {
    spare_bytes_ -= static_cast<int64_t>(spare->capacity());
    w.value = std::move(*spare);
    spare_.erase(spare);
  }
  // Accounted for before the copy (which runs unlocked), so that neither a later Publish nor a
  // read of the key can pass this write while it is being copied.
  queued_bytes_ += n;
  ++pending_keys_[w.key];
  unfinished_.insert(w.seq);
  lock.unlock();
  w.value.resize(static_cast<size_t>(n));
  size_t at = 0;
  for (ByteView p : parts) {
    if (!p.empty()) std::memcpy(w.value.data() + at, p.data(), p.size());
    at += p.size();
  }
  lock.lock();
  if (!error_.ok()) {
    queued_bytes_ -= n;
    unfinished_.erase(w.seq);
    if (--pending_keys_[w.key] == 0) pending_keys_.erase(w.key);
    cv_.notify_all();
    return error_;
  }
  queue_.push_back(std::move(w));
  cv_.notify_all();
  return Status::Ok();
}

std::deque<WriteBehindStore::Write>::iterator WriteBehindStore::NextStartable() {
  std::set<std::string> held;  // keys with an earlier write still queued
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    const bool key_free = !uploading_keys_.count(it->key) && !held.count(it->key);
    if (key_free && (!it->publish || *unfinished_.begin() == it->seq)) return it;
    held.insert(it->key);
  }
  return queue_.end();
}

void WriteBehindStore::DropQueueLocked() {
  for (Write& w : queue_) {
    queued_bytes_ -= static_cast<int64_t>(w.value.size());
    unfinished_.erase(w.seq);
    if (--pending_keys_[w.key] == 0) pending_keys_.erase(w.key);
  }
  queue_.clear();
}

void WriteBehindStore::SupersedeLocked(Write* w) {
  // Queued publishes of the key that directly follow `w` in call order: nothing but publishes of
  // the key is unfinished between `w` (the oldest unfinished write) and the last of them.
  std::set<uint64_t> same_key;
  for (const Write& q : queue_)
    if (q.publish && q.key == w->key) same_key.insert(q.seq);
  uint64_t latest = w->seq;
  for (uint64_t seq : unfinished_) {  // ascending; begins with w->seq
    if (seq == w->seq) continue;
    if (!same_key.count(seq)) break;
    latest = seq;
  }
  if (latest == w->seq) return;
  auto forget = [&](const Write& dropped) {
    queued_bytes_ -= static_cast<int64_t>(dropped.value.size());
    unfinished_.erase(dropped.seq);
    --pending_keys_[dropped.key];  // the publish that replaces them keeps the key pending
  };
  forget(*w);
  for (auto q = queue_.begin(); q != queue_.end();) {
    if (!q->publish || q->key != w->key || q->seq > latest) {
      ++q;
    } else if (q->seq < latest) {
      forget(*q);
      q = queue_.erase(q);
    } else {
      *w = std::move(*q);
      q = queue_.erase(q);
    }
  }
}

void WriteBehindStore::UploadLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    std::deque<Write>::iterator it;
    cv_.wait(lock, [&] {
      if (stopping_) return true;
      it = NextStartable();
      return it != queue_.end();
    });
    if (stopping_) return;  // the destructor waited for the queue to drain
    Write w = std::move(*it);
    queue_.erase(it);
    if (w.publish) SupersedeLocked(&w);
    uploading_keys_.insert(w.key);
    lock.unlock();
    const Status st = w.publish ? inner_->Publish(w.key, w.value) : inner_->Set(w.key, w.value);
    lock.lock();
    uploading_keys_.erase(w.key);
    unfinished_.erase(w.seq);
    if (--pending_keys_[w.key] == 0) pending_keys_.erase(w.key);
    queued_bytes_ -= static_cast<int64_t>(w.value.size());
    if (!st.ok() && error_.ok()) {
      error_ = st;
      DropQueueLocked();
    }
    // Kept for reuse while queued values and spare buffers together stay within the budget.
    const int64_t capacity = static_cast<int64_t>(w.value.capacity());
    if (queued_bytes_ + spare_bytes_ + capacity <= options_.max_queued_bytes) {
      spare_bytes_ += capacity;
      spare_.push_back(std::move(w.value));
    }
    cv_.notify_all();
  }
}

void WriteBehindStore::WaitForKey(const std::string& key) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !pending_keys_.count(key); });
}

void WriteBehindStore::WaitForAll() const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return unfinished_.empty(); });
}

Result<std::optional<Bytes>> WriteBehindStore::Get(const std::string& key) const {
  WaitForKey(key);
  return inner_->Get(key);
}

Result<std::optional<Bytes>> WriteBehindStore::GetRange(const std::string& key, uint64_t offset,
                                                        uint64_t length) const {
  WaitForKey(key);
  return inner_->GetRange(key, offset, length);
}

Result<std::optional<Bytes>> WriteBehindStore::GetSuffix(const std::string& key, uint64_t length) const {
  WaitForKey(key);
  return inner_->GetSuffix(key, length);
}

Result<std::optional<SuffixRead>> WriteBehindStore::GetSuffixAndSize(const std::string& key, uint64_t length) const {
  WaitForKey(key);
  return inner_->GetSuffixAndSize(key, length);
}

Result<std::optional<uint64_t>> WriteBehindStore::Size(const std::string& key) const {
  WaitForKey(key);
  return inner_->Size(key);
}

Status WriteBehindStore::Set(const std::string& key, ByteView value) {
  return Enqueue(key, std::span<const ByteView>(&value, 1), /*publish=*/false);
}

Status WriteBehindStore::SetParts(const std::string& key, std::span<const ByteView> parts) {
  return Enqueue(key, parts, /*publish=*/false);
}

Status WriteBehindStore::Publish(const std::string& key, ByteView value) {
  return Enqueue(key, std::span<const ByteView>(&value, 1), /*publish=*/true);
}

Status WriteBehindStore::CopyFrom(const std::string& key, const ReadableStore& source, const std::string& source_key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
  }
  WaitForKey(key);
  return inner_->CopyFrom(key, source, source_key);
}

Result<std::unique_ptr<WritableFile>> WriteBehindStore::OpenWritableFile(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> inner, inner_->OpenWritableFile(key));
  // Like CopyFrom: after the key's queued writes, and not at all after a failed write.
  auto before_commit = [this, key]() -> Status {
    WaitForKey(key);
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  };
  return std::unique_ptr<WritableFile>(new WriteBehindFile(std::move(inner), std::move(before_commit)));
}

Status WriteBehindStore::Erase(const std::string& key) {
  WaitForKey(key);
  return inner_->Erase(key);
}

Result<std::optional<VersionedValue>> WriteBehindStore::GetVersioned(const std::string& key) const {
  WaitForKey(key);
  return inner_->GetVersioned(key);
}

Result<bool> WriteBehindStore::SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                                          const WriteCondition& condition) {
  TESSERA_RETURN_IF_ERROR(Flush());
  return inner_->SetPartsIf(key, parts, condition);
}

Result<bool> WriteBehindStore::EraseIf(const std::string& key, const WriteCondition& condition) {
  TESSERA_RETURN_IF_ERROR(Flush());
  return inner_->EraseIf(key, condition);
}

Status WriteBehindStore::Flush() {
  WaitForAll();
  TESSERA_RETURN_IF_ERROR(inner_->Flush());
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void WriteBehindStore::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.ok()) error_ = FailedPrecondition(inner_->Describe("") + ": writes cancelled (the stream was aborted)");
    DropQueueLocked();
  }
  cv_.notify_all();
  WaitForAll();
}

Result<std::vector<std::string>> WriteBehindStore::List(const std::string& prefix) const {
  WaitForAll();
  return inner_->List(prefix);
}

}  // namespace tessera
