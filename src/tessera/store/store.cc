#include "tessera/store/store.h"

namespace tessera {

Status WritableStore::CopyFrom(const std::string& key, const ReadableStore& source, const std::string& source_key) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> value, source.Get(source_key));
  if (!value) return NotFound(source.Describe(source_key) + ": no such value to copy");
  return Set(key, *value);
}

Result<std::optional<VersionedValue>> ReadableStore::GetVersioned(const std::string& key) const {
  return Unsupported(Describe(key) + ": this store does not keep generations (no conditional writes)");
}

namespace {

// `key` as the store's messages name it, when the store reads too (every Store); else the key.
std::string DescribeKey(const WritableStore* store, const std::string& key) {
  const auto* readable = dynamic_cast<const ReadableStore*>(store);
  return readable != nullptr ? readable->Describe(key) : key;
}

}  // namespace

Result<bool> WritableStore::SetPartsIf(const std::string& key, std::span<const ByteView>, const WriteCondition&) {
  return Unsupported(DescribeKey(this, key) + ": this store has no conditional writes");
}

Result<bool> WritableStore::EraseIf(const std::string& key, const WriteCondition&) {
  return Unsupported(DescribeKey(this, key) + ": this store has no conditional writes");
}

Result<std::unique_ptr<WritableFile>> WritableStore::OpenWritableFile(const std::string& key) {
  return OpenStagedWritableFile(this, key, DescribeKey(this, key));
}

namespace {

Status WrongByteCount(const ReadableStore& store, const std::string& key, uint64_t offset, uint64_t length,
                      uint64_t got) {
  return IoError(store.Describe(key) + ": bytes " + ByteRangeText(offset, offset + length) + " read as " +
                 std::to_string(got) + " bytes (a short or long read)");
}

}  // namespace

Result<std::optional<Bytes>> GetExactRange(const ReadableStore& store, const std::string& key, uint64_t offset,
                                           uint64_t length) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> bytes, store.GetRange(key, offset, length));
  if (bytes && bytes->size() != length) return WrongByteCount(store, key, offset, length, bytes->size());
  return bytes;
}

Result<std::optional<SuffixRead>> GetExactSuffixAndSize(const ReadableStore& store, const std::string& key,
                                                        uint64_t length) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<SuffixRead> read, store.GetSuffixAndSize(key, length));
  if (read && (read->bytes.size() != length || read->value_size < length)) {
    const uint64_t offset = read->value_size >= length ? read->value_size - length : 0;
    return WrongByteCount(store, key, offset, length, read->bytes.size());
  }
  return read;
}

}  // namespace tessera
