// A store that keeps every value in memory; for tests and for staging small arrays.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/store/store.h"

namespace tessera {

// Thread-safe: every method may be called concurrently. Values are immutable once stored and
// shared by pointer, so Set replaces a value atomically and readers copy bytes outside the lock.
// Generations (GetVersioned, SetPartsIf, EraseIf) are the decimal number of the store-wide write
// that stored the value: never reused, so a key erased and set again has a new one.
// Keys must pass ValidateStoreKey (see key_validation.h); unlike a file store, a key may also be
// a directory-like prefix of other keys ("a" and "a/b" may both exist).
class MemoryStore final : public Store {
 public:
  MemoryStore() = default;
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

  Result<std::optional<Bytes>> Get(const std::string& key) const override;
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset,
                                        uint64_t length) const override;
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override;
  Result<std::optional<uint64_t>> Size(const std::string& key) const override;
  // "memory://" + key.
  std::string Describe(const std::string& key) const override;

  Status Set(const std::string& key, ByteView value) override;
  // Set with the value given in pieces; copies them straight into the stored value.
  Status SetParts(const std::string& key, std::span<const ByteView> parts) override;
  Status Erase(const std::string& key) override;
  Result<std::optional<VersionedValue>> GetVersioned(const std::string& key) const override;
  // Compared and replaced under the store's lock: atomic with every other write.
  Result<bool> SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                          const WriteCondition& condition) override;
  Result<bool> EraseIf(const std::string& key, const WriteCondition& condition) override;

  Result<std::vector<std::string>> List(const std::string& prefix) const override;

 private:
  struct Entry {
    std::shared_ptr<const Bytes> value;
    uint64_t generation = 0;  // the number of the write that stored it
  };

  // The stored value, or null if `key` is absent. Does not validate `key`.
  std::shared_ptr<const Bytes> Find(const std::string& key) const;
  // Stores `value` under `key` (already validated), replacing any old value.
  void Replace(const std::string& key, std::shared_ptr<const Bytes> value);
  // Whether the entry at `it` (values_.end(): none) is as `condition` expects. Requires mu_.
  bool MatchesLocked(std::map<std::string, Entry>::const_iterator it, const WriteCondition& condition) const;

  mutable std::mutex mu_;
  std::map<std::string, Entry> values_;  // guarded by mu_
  uint64_t writes_ = 0;                  // guarded by mu_; numbers the writes (generations)
};

}  // namespace tessera
