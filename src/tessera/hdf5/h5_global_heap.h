// The global heap: collections ("GCOL") of numbered objects that variable-length data (vlen
// strings and sequences) and virtual dataset mappings point into by (collection address, index).
//
// A collection, version 1 (all fields little-endian; L = size of lengths, 8 in files tessera reads):
//
//   "GCOL" | version (1) = 1 | reserved (3) | collection size (L, bytes, header included)
//   then objects, each:
//     heap object index (u16) | reference count (u16) | reserved (4) | object size (L)
//     object data (object size bytes, padded with zeros to a multiple of 8)
//   Index 0 is the free-space object and ends the list; so does a tail too short for an object
//   header (the library leaves such slivers unused).
//
// ParseGlobalHeapCollection is pure (bytes in, objects out). GlobalHeap is the thread-safe,
// per-file cache of parsed collections every reader of a file shares (GlobalHeap::Of).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"
#include "tessera/hdf5/h5_raw_file.h"

namespace tessera::hdf5 {

// Where a global heap object lives. Stored in files as collection address (size of offsets) then
// index (u32): 12 bytes in a vlen element after its 4-byte length, in a VDS layout message.
struct GlobalHeapId {
  uint64_t collection_addr = kUndefinedAddress;
  uint32_t index = 0;
};
inline constexpr size_t kGlobalHeapIdBytes = 8 + 4;

// Decodes a GlobalHeapId from the first 12 bytes of `bytes` (kCorruptData naming `what` when
// fewer).
Result<GlobalHeapId> DecodeGlobalHeapId(ByteView bytes, std::string_view what);

// One parsed collection: its bytes and where each object's data lies in them.
class GlobalHeapCollection {
 public:
  uint64_t addr() const { return addr_; }
  uint64_t size_bytes() const { return bytes_.size(); }
  size_t object_count() const { return objects_.size(); }
  // The data of object `index` (a view into this collection). kCorruptData naming the file, the
  // collection's byte range and the index when the collection holds no such object.
  Result<ByteView> Object(uint32_t index) const;
  // Reference count the file records for `index` (0 when absent); for diagnostics.
  uint16_t ReferenceCount(uint32_t index) const;

 private:
  friend Result<GlobalHeapCollection> ParseGlobalHeapCollection(Bytes bytes, const RawFile& file, uint64_t addr);
  struct Slot {
    size_t offset = 0;  // of the data, in bytes_
    size_t size = 0;
    uint16_t reference_count = 0;
  };
  uint64_t addr_ = 0;
  std::string where_;  // "f.h5: global heap collection at 0x..0x.."
  Bytes bytes_;
  std::map<uint32_t, Slot> objects_;
};

// Parses the whole collection `bytes` read at `addr` of `file` (the file only names errors).
// kCorruptData naming the file and byte range on a bad signature, version, size, an object that
// runs past the collection, or an index used twice.
Result<GlobalHeapCollection> ParseGlobalHeapCollection(Bytes bytes, const RawFile& file, uint64_t addr);

// Reads the collection at `addr`: its 16-byte header for the size, then the whole collection.
Result<GlobalHeapCollection> ReadGlobalHeapCollection(const RawFile& file, uint64_t addr);

// The collections of one file, parsed once and shared. Thread-safe: datasets read from many
// threads. Collections stay cached (up to kMaxCachedBytes; past that the cache starts over) for as
// long as someone holds the GlobalHeap.
class GlobalHeap {
 public:
  static constexpr uint64_t kMaxCachedBytes = 64ull << 20;

  // The heap of `file`, shared by every caller asking for the same RawFile while one holds it.
  static std::shared_ptr<GlobalHeap> Of(std::shared_ptr<const RawFile> file);
  explicit GlobalHeap(std::shared_ptr<const RawFile> file) : file_(std::move(file)) {}

  const RawFile& file() const { return *file_; }
  Result<std::shared_ptr<const GlobalHeapCollection>> Collection(uint64_t addr) const;
  // A copy of the object's data.
  Result<Bytes> Read(GlobalHeapId id) const;

 private:
  std::shared_ptr<const RawFile> file_;
  mutable std::mutex mu_;
  mutable std::map<uint64_t, std::shared_ptr<const GlobalHeapCollection>> collections_;
  mutable uint64_t cached_bytes_ = 0;
};

}  // namespace tessera::hdf5
