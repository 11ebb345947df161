// The key-value store seam. Capabilities are split: reading (whole value, byte range, suffix),
// writing (atomic whole-object set, erase) and listing. Keys are '/'-separated relative paths.
// Implementations are thread-safe: concurrent calls on any keys (the same key too) are allowed, and a reader
// never observes a partially written value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"
#include "tessera/store/key_validation.h"
#include "tessera/store/writable_file.h"

namespace tessera {

// The end of a value and the value's size (a shard index is read with the size it checks against).
struct SuffixRead {
  Bytes bytes;
  uint64_t value_size = 0;
};

// A value and the generation it was read at: a token that changes whenever the value is replaced
// (S3: the ETag; files: inode, size and modification time; memory: a counter). Compared only for
// equality, by the store that issued it. A rewrite with the very same bytes may keep it (S3's ETag
// of a single PUT is the bytes' MD5), which is harmless: a compare-and-swap against it then
// replaces the value it was computed from.
struct VersionedValue {
  Bytes bytes;
  std::string generation;
};

// What a conditional write expects to find under its key: the value of `generation`, or (nullopt)
// no value at all.
struct WriteCondition {
  std::optional<std::string> generation;
};

class ReadableStore {
 public:
  virtual ~ReadableStore() = default;
  // The whole value, or nullopt if the key does not exist.
  virtual Result<std::optional<Bytes>> Get(const std::string& key) const = 0;
  // Exactly `length` bytes starting at `offset`, or nullopt if the key does not exist.
  // A range that extends past the end of the value is kOutOfRange, naming the key, the
  // requested range and the value's size.
  virtual Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset,
                                                uint64_t length) const = 0;
  // The last `length` bytes, or nullopt if the key does not exist. A value shorter than
  // `length` is kOutOfRange.
  virtual Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const = 0;
  // GetSuffix and Size together: one request on stores where a request costs (S3, HTTP). The
  // default asks Size, then GetRange.
  virtual Result<std::optional<SuffixRead>> GetSuffixAndSize(const std::string& key, uint64_t length) const {
    TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, Size(key));
    if (!size) return std::optional<SuffixRead>();
    TESSERA_RETURN_IF_ERROR(CheckSuffixLength(Describe(key), length, *size));
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> bytes, GetRange(key, *size - length, length));
    if (!bytes) return std::optional<SuffixRead>();
    return std::optional<SuffixRead>(SuffixRead{std::move(*bytes), *size});
  }
  // The size of the value in bytes, or nullopt if the key does not exist.
  virtual Result<std::optional<uint64_t>> Size(const std::string& key) const = 0;
  // The whole value and its generation, or nullopt if the key does not exist (for a later
  // SetPartsIf / EraseIf). The default is kUnsupported, naming the store.
  virtual Result<std::optional<VersionedValue>> GetVersioned(const std::string& key) const;
  // How many reads a caller should keep in flight to use this store well: 0 for as many as
  // there are cores (local stores); more for stores where a request waits on the network.
  virtual int io_concurrency() const { return 0; }
  // A human-readable location for `key` used in error messages (a path or "memory://key").
  virtual std::string Describe(const std::string& key) const = 0;
};

class WritableStore {
 public:
  virtual ~WritableStore() = default;
  // Replaces the value atomically: readers see the old value or the new one, never a mix,
  // and a crash leaves one of the two.
  virtual Status Set(const std::string& key, ByteView value) = 0;
  // Like Set, with the value given as the concatenation of `parts` (lets a writer store a shard
  // from its pieces without assembling it first). The default assembles and calls Set.
  virtual Status SetParts(const std::string& key, std::span<const ByteView> parts) {
    Bytes joined;
    size_t n = 0;
    for (ByteView p : parts) n += p.size();
    joined.reserve(n);
    for (ByteView p : parts) joined.insert(joined.end(), p.begin(), p.end());
    return Set(key, joined);
  }
  // Stores the value `source_key` of `source` as `key`, atomically like Set. The default reads it
  // whole and calls Set; object stores upload a large value in parts read from `source` as they
  // are sent (memory: the parts in flight).
  virtual Status CopyFrom(const std::string& key, const ReadableStore& source, const std::string& source_key);
  // Like Set, for a value that describes values written before it (array metadata): it becomes
  // visible only after every earlier write of this store is durable, and not at all if one of
  // them failed. Synchronous stores have nothing to wait for.
  virtual Status Publish(const std::string& key, ByteView value) { return Set(key, value); }
  // A value written at byte offsets and published whole at Commit (see writable_file.h): nothing
  // is visible under `key` before Commit, and then the whole value, atomically like Set. The
  // store must outlive the file. The default stages the bytes in a private directory under TMPDIR
  // and stores them at Commit with CopyFrom (OpenStagedWritableFile); a file store writes a
  // temporary file beside the target and renames it into place.
  virtual Result<std::unique_ptr<WritableFile>> OpenWritableFile(const std::string& key);
  // Whether the store writes a value where it will live (a file store: a temporary file beside the
  // target), so that writing it piece by piece as the pieces are made costs no more than writing it
  // whole. Object stores and memory stage the bytes instead: a writer that can have all the pieces
  // at once should store them with SetParts.
  virtual bool writes_in_place() const { return false; }
  // OpenWritableFile for a value that is only as precious as one stored with Set (a stream's shard,
  // written chunk by chunk as they are compressed): where the store writes in place, Commit does
  // not fsync the file unless the store fsyncs every Set. Elsewhere it is OpenWritableFile.
  virtual Result<std::unique_ptr<WritableFile>> OpenInPlaceFile(const std::string& key) {
    return OpenWritableFile(key);
  }
  // Removes the key; removing a missing key is OK.
  virtual Status Erase(const std::string& key) = 0;
  // Compare-and-swap: like SetParts (atomic), only if the key is still as `condition` says; false,
  // having written nothing, when another writer changed it since (the caller reads it again).
  // Files: under an exclusive lock of the key's folder, the generation is checked, then the
  // temporary file renamed into place. S3: If-Match / If-None-Match: * on the PUT. The default is
  // kUnsupported, naming the store.
  virtual Result<bool> SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                                  const WriteCondition& condition);
  // Removes the key only if it is as `condition` says (a missing key that is expected missing:
  // true); false when another writer changed it. The default is kUnsupported.
  virtual Result<bool> EraseIf(const std::string& key, const WriteCondition& condition);
  // Waits until every earlier write is durable; the first failure of a write that completed
  // asynchronously (after its call returned OK) is returned here. Synchronous stores: OK.
  virtual Status Flush() { return Status::Ok(); }
};

class ListableStore {
 public:
  virtual ~ListableStore() = default;
  // All keys that start with `prefix`, sorted.
  virtual Result<std::vector<std::string>> List(const std::string& prefix) const = 0;
};

class Store : public ReadableStore, public WritableStore, public ListableStore {};

// GetRange and GetSuffixAndSize as readers use them: a value that comes back with another byte
// count than asked for (a store, proxy or server that returned a short or long body) is kIo naming
// the key and the range, never data.
Result<std::optional<Bytes>> GetExactRange(const ReadableStore& store, const std::string& key, uint64_t offset,
                                           uint64_t length);
Result<std::optional<SuffixRead>> GetExactSuffixAndSize(const ReadableStore& store, const std::string& key,
                                                        uint64_t length);

}  // namespace tessera
