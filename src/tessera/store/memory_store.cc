#include "tessera/store/memory_store.h"

#include <utility>

#include "tessera/store/key_validation.h"

namespace tessera {
namespace {

// The concatenation of `parts` as a value to store.
std::shared_ptr<const Bytes> Join(std::span<const ByteView> parts) {
  size_t total_bytes = 0;
  for (ByteView p : parts) total_bytes += p.size();
  auto joined = std::make_shared<Bytes>();
  joined->reserve(total_bytes);
  for (ByteView p : parts) joined->insert(joined->end(), p.begin(), p.end());
  return joined;
}

}  // namespace

std::shared_ptr<const Bytes> MemoryStore::Find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : it->second.value;
}

Result<std::optional<Bytes>> MemoryStore::Get(const std::string& key) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  std::shared_ptr<const Bytes> value = Find(key);
  if (!value) return std::optional<Bytes>();
  return std::optional<Bytes>(*value);
}

Result<std::optional<Bytes>> MemoryStore::GetRange(const std::string& key, uint64_t offset,
                                                   uint64_t length) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  std::shared_ptr<const Bytes> value = Find(key);
  if (!value) return std::optional<Bytes>();
  TESSERA_RETURN_IF_ERROR(CheckByteRange(Describe(key), offset, length, value->size()));
  auto begin = value->begin() + static_cast<ptrdiff_t>(offset);
  return std::optional<Bytes>(Bytes(begin, begin + static_cast<ptrdiff_t>(length)));
}

Result<std::optional<Bytes>> MemoryStore::GetSuffix(const std::string& key, uint64_t length) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  std::shared_ptr<const Bytes> value = Find(key);
  if (!value) return std::optional<Bytes>();
  TESSERA_RETURN_IF_ERROR(CheckSuffixLength(Describe(key), length, value->size()));
  return std::optional<Bytes>(Bytes(value->end() - static_cast<ptrdiff_t>(length), value->end()));
}

Result<std::optional<uint64_t>> MemoryStore::Size(const std::string& key) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  std::shared_ptr<const Bytes> value = Find(key);
  if (!value) return std::optional<uint64_t>();
  return std::optional<uint64_t>(value->size());
}

std::string MemoryStore::Describe(const std::string& key) const { return "memory://" + key; }

void MemoryStore::Replace(const std::string& key, std::shared_ptr<const Bytes> value) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& entry = values_[key];
  entry.value.swap(value);
  entry.generation = ++writes_;
  // `value` now holds the old value; declared before `lock`, it is freed after the unlock.
}

Status MemoryStore::Set(const std::string& key, ByteView value) {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  Replace(key, std::make_shared<const Bytes>(value.begin(), value.end()));  // copied outside the lock
  return Status::Ok();
}

Status MemoryStore::SetParts(const std::string& key, std::span<const ByteView> parts) {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  Replace(key, Join(parts));  // joined outside the lock
  return Status::Ok();
}

Status MemoryStore::Erase(const std::string& key) {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  std::shared_ptr<const Bytes> old;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(key);
  if (it != values_.end()) {
    old = std::move(it->second.value);
    values_.erase(it);
  }
  return Status::Ok();
}

Result<std::optional<VersionedValue>> MemoryStore::GetVersioned(const std::string& key) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  Entry entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = values_.find(key);
    if (it == values_.end()) return std::optional<VersionedValue>();
    entry = it->second;
  }
  return std::optional<VersionedValue>(VersionedValue{*entry.value, std::to_string(entry.generation)});
}

bool MemoryStore::MatchesLocked(std::map<std::string, Entry>::const_iterator it,
                                const WriteCondition& condition) const {
  if (it == values_.end()) return !condition.generation.has_value();
  return condition.generation == std::to_string(it->second.generation);
}

Result<bool> MemoryStore::SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                                     const WriteCondition& condition) {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  std::shared_ptr<const Bytes> value = Join(parts);  // joined outside the lock; the old value is freed after it
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(key);
  if (!MatchesLocked(it, condition)) return false;
  if (it == values_.end()) it = values_.emplace(key, Entry{}).first;
  it->second.value.swap(value);
  it->second.generation = ++writes_;
  return true;
}

Result<bool> MemoryStore::EraseIf(const std::string& key, const WriteCondition& condition) {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  std::shared_ptr<const Bytes> old;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(key);
  if (!MatchesLocked(it, condition)) return false;
  if (it != values_.end()) {
    old = std::move(it->second.value);
    values_.erase(it);
  }
  return true;
}

Result<std::vector<std::string>> MemoryStore::List(const std::string& prefix) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKeyPrefix(prefix));
  std::vector<std::string> keys;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = values_.lower_bound(prefix);
       it != values_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    keys.push_back(it->first);
  }
  return keys;
}

}  // namespace tessera
