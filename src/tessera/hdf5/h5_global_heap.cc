#include "tessera/hdf5/h5_global_heap.h"

#include <algorithm>

namespace tessera::hdf5 {
namespace {

constexpr size_t kCollectionHeaderBytes = 4 + 1 + 3 + 8;
constexpr size_t kObjectHeaderBytes = 2 + 2 + 4 + 8;
constexpr std::string_view kWhat = "global heap collection";

size_t PadTo8(uint64_t n) { return static_cast<size_t>((n + 7) & ~uint64_t{7}); }

}  // namespace

Result<GlobalHeapId> DecodeGlobalHeapId(ByteView bytes, std::string_view what) {
  if (bytes.size() < kGlobalHeapIdBytes)
    return CorruptData(std::string(what) + ": global heap ID needs " + std::to_string(kGlobalHeapIdBytes) +
                       " bytes, got " + std::to_string(bytes.size()));
  GlobalHeapId id;
  id.collection_addr = 0;
  for (size_t i = 8; i-- > 0;) id.collection_addr = (id.collection_addr << 8) | bytes[i];
  for (size_t i = 12; i-- > 8;) id.index = (id.index << 8) | bytes[i];
  return id;
}

Result<ByteView> GlobalHeapCollection::Object(uint32_t index) const {
  auto it = objects_.find(index);
  if (it == objects_.end()) {
    std::string held = objects_.empty() ? "none" : std::to_string(objects_.begin()->first) + ".." +
                                                       std::to_string(objects_.rbegin()->first);
    return CorruptData(where_ + ": no object " + std::to_string(index) + " (the collection holds " +
                       std::to_string(objects_.size()) + " objects, indices " + held + ")");
  }
  return ByteView(bytes_).subspan(it->second.offset, it->second.size);
}

uint16_t GlobalHeapCollection::ReferenceCount(uint32_t index) const {
  auto it = objects_.find(index);
  return it == objects_.end() ? 0 : it->second.reference_count;
}

Result<GlobalHeapCollection> ParseGlobalHeapCollection(Bytes bytes, const RawFile& file, uint64_t addr) {
  FieldReader r(bytes, file, std::string(kWhat), addr);
  r.ExpectSignature("GCOL");
  const uint8_t version = r.U8();
  r.Skip(3);
  const uint64_t collection_size = r.Length();
  if (!r.ok()) return r.status();
  if (version != 1) return r.Fail("version " + std::to_string(version) + " (expected 1)");
  if (collection_size < kCollectionHeaderBytes || collection_size > bytes.size())
    return r.Fail("collection size " + std::to_string(collection_size) + " is outside [" +
                  std::to_string(kCollectionHeaderBytes) + ", " + std::to_string(bytes.size()) + "]");

  GlobalHeapCollection c;
  c.addr_ = addr;
  c.where_ = file.Where(kWhat, addr, collection_size);
  while (r.pos() + kObjectHeaderBytes <= collection_size) {
    const size_t object_at = r.pos();
    const uint16_t index = r.U16();
    const uint16_t reference_count = r.U16();
    r.Skip(4);
    const uint64_t size = r.Length();
    if (!r.ok()) return r.status();
    if (index == 0) break;  // the free space: the rest of the collection
    const uint64_t room = collection_size - r.pos();
    if (size > room)
      return r.Fail("object " + std::to_string(index) + " at byte " + std::to_string(object_at) + " has " +
                    std::to_string(size) + " bytes, but only " + std::to_string(room) + " remain in the collection");
    GlobalHeapCollection::Slot slot{r.pos(), static_cast<size_t>(size), reference_count};
    if (!c.objects_.emplace(index, slot).second)
      return r.Fail("object index " + std::to_string(index) + " appears twice (second at byte " +
                    std::to_string(object_at) + ")");
    // The padding of the last object may be cut off by the end of the collection.
    r.set_pos(static_cast<size_t>(std::min<uint64_t>(r.pos() + PadTo8(size), collection_size)));
  }
  bytes.resize(static_cast<size_t>(collection_size));
  c.bytes_ = std::move(bytes);
  return c;
}

Result<GlobalHeapCollection> ReadGlobalHeapCollection(const RawFile& file, uint64_t addr) {
  TESSERA_ASSIGN_OR_RETURN(Bytes head, file.Read(addr, kCollectionHeaderBytes, kWhat));
  FieldReader r(head, file, std::string(kWhat), addr);
  r.ExpectSignature("GCOL");
  r.Skip(4);
  const uint64_t collection_size = r.Length();
  if (!r.ok()) return r.status();
  if (collection_size < kCollectionHeaderBytes)
    return r.Fail("collection size " + std::to_string(collection_size) + " is smaller than its header");
  // RawFile::Read checks the size against the file before allocating.
  TESSERA_ASSIGN_OR_RETURN(Bytes bytes, file.Read(addr, collection_size, kWhat));
  return ParseGlobalHeapCollection(std::move(bytes), file, addr);
}

std::shared_ptr<GlobalHeap> GlobalHeap::Of(std::shared_ptr<const RawFile> file) {
  // A live entry's heap holds its RawFile, so a key cannot be reused by another file while the
  // entry can still be locked.
  static std::mutex registry_mu;
  static std::map<const RawFile*, std::weak_ptr<GlobalHeap>> registry;
  std::lock_guard<std::mutex> lock(registry_mu);
  for (auto it = registry.begin(); it != registry.end();) it = it->second.expired() ? registry.erase(it) : std::next(it);
  std::weak_ptr<GlobalHeap>& entry = registry[file.get()];
  if (std::shared_ptr<GlobalHeap> heap = entry.lock()) return heap;
  auto heap = std::make_shared<GlobalHeap>(std::move(file));
  entry = heap;
  return heap;
}

Result<std::shared_ptr<const GlobalHeapCollection>> GlobalHeap::Collection(uint64_t addr) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = collections_.find(addr);
    if (it != collections_.end()) return it->second;
  }
  // Parsed outside the lock: two threads may both parse a collection the first time; the first
  // to finish is kept.
  TESSERA_ASSIGN_OR_RETURN(GlobalHeapCollection parsed, ReadGlobalHeapCollection(*file_, addr));
  auto collection = std::make_shared<const GlobalHeapCollection>(std::move(parsed));
  std::lock_guard<std::mutex> lock(mu_);
  if (cached_bytes_ + collection->size_bytes() > kMaxCachedBytes) {
    collections_.clear();
    cached_bytes_ = 0;
  }
  auto [it, inserted] = collections_.emplace(addr, collection);
  if (inserted) cached_bytes_ += collection->size_bytes();
  return it->second;
}

Result<Bytes> GlobalHeap::Read(GlobalHeapId id) const {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const GlobalHeapCollection> collection, Collection(id.collection_addr));
  TESSERA_ASSIGN_OR_RETURN(ByteView data, collection->Object(id.index));
  return Bytes(data.begin(), data.end());
}

}  // namespace tessera::hdf5
