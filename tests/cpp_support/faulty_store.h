// A store that fails on purpose (test-only; not part of the library): the Nth write fails (a
// transient error: the writes after it succeed), writes fail once a capacity is used up ("no space
// left": every write that does not fit), or reads return fewer bytes than they were asked for. Views of one FaultyStoreState under different prefixes
// share its keys, counters and faults, as the directories of one disk do; RegisterFaultyScheme
// makes "faulty://PREFIX" a location every part of tessera opens through a view.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "tessera/store/location.h"
#include "tessera/core/bytes.h"
#include "tessera/store/memory_store.h"

namespace tessera::store_test {

struct FaultyStoreState {
  MemoryStore memory;
  // Writes (Set, SetParts, Publish, CopyFrom) so far, failed ones included.
  std::atomic<int64_t> writes{0};
  // The write that fails, counted from 1 (0: none).
  std::atomic<int64_t> fail_write{0};
  // Bytes the values may hold in all (0: no limit); a write that would pass it fails.
  std::atomic<uint64_t> capacity_bytes{0};
  std::atomic<bool> short_reads{false};

  std::mutex mu;  // held while a write checks and changes `used`
  uint64_t used = 0;
};

class FaultyStore final : public Store {
 public:
  FaultyStore(std::shared_ptr<FaultyStoreState> state, std::string prefix)
      : state_(std::move(state)), prefix_(prefix.empty() ? "" : prefix + "/") {}

  Result<std::optional<Bytes>> Get(const std::string& key) const override {
    return Shorten(state_->memory.Get(Full(key)));
  }
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override {
    return Shorten(state_->memory.GetRange(Full(key), offset, length));
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override {
    return Shorten(state_->memory.GetSuffix(Full(key), length));
  }
  Result<std::optional<uint64_t>> Size(const std::string& key) const override { return state_->memory.Size(Full(key)); }
  std::string Describe(const std::string& key) const override { return "faulty://" + Full(key); }

  Status Set(const std::string& key, ByteView value) override {
    const int64_t n = ++state_->writes;
    if (n == state_->fail_write.load())
      return IoError(Describe(key) + ": write failed (injected failure of write " + std::to_string(n) + ")");
    std::lock_guard<std::mutex> lock(state_->mu);
    Result<std::optional<uint64_t>> old = state_->memory.Size(Full(key));
    const uint64_t old_size = old.ok() && *old ? **old : 0;
    const uint64_t capacity = state_->capacity_bytes.load();
    if (capacity > 0 && state_->used - old_size + value.size() > capacity)
      return IoError(Describe(key) + ": write failed: no space left on device (" + std::to_string(capacity) +
                     "-byte store full)");
    TESSERA_RETURN_IF_ERROR(state_->memory.Set(Full(key), value));
    state_->used = state_->used - old_size + value.size();
    return Status::Ok();
  }
  Status Erase(const std::string& key) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    Result<std::optional<uint64_t>> old = state_->memory.Size(Full(key));
    TESSERA_RETURN_IF_ERROR(state_->memory.Erase(Full(key)));
    if (old.ok() && *old) state_->used -= **old;
    return Status::Ok();
  }
  Result<std::vector<std::string>> List(const std::string& prefix) const override {
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> keys, state_->memory.List(Full(prefix)));
    for (std::string& k : keys) k.erase(0, prefix_.size());
    return keys;
  }

 private:
  std::string Full(const std::string& key) const { return prefix_ + key; }
  // Under short_reads, a value read comes back a third shorter (at least one byte short).
  Result<std::optional<Bytes>> Shorten(Result<std::optional<Bytes>> got) const {
    if (!state_->short_reads.load() || !got.ok() || !*got || (*got)->empty()) return got;
    Bytes& b = **got;
    b.resize(b.size() - 1 - b.size() / 3);
    return got;
  }

  std::shared_ptr<FaultyStoreState> state_;
  std::string prefix_;
};

// Makes "faulty://PREFIX" open a FaultyStore view of `state` (replacing an earlier registration).
inline void RegisterFaultyScheme(std::shared_ptr<FaultyStoreState> state) {
  Status st = RegisterStoreScheme("faulty", [state](const std::string& path, bool) -> Result<std::shared_ptr<Store>> {
    return std::shared_ptr<Store>(std::make_shared<FaultyStore>(state, path));
  });
  if (!st.ok()) ADD_FAILURE() << st.ToString();
}

}  // namespace tessera::store_test
