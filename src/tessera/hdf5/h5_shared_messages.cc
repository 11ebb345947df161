#include "tessera/hdf5/h5_shared_messages.h"

namespace tessera::hdf5 {
namespace {

// Shared message encoding version 3: version, type, then an 8-byte heap ID (type 1) or an
// object header address (type 2, a committed message).
constexpr uint8_t kSharedEncodingVersion3 = 3;
constexpr uint8_t kSharedInHeap = 1;
constexpr size_t kSharedHeapIdBytes = 8;
// The HDF5 library allows at most 8 indexes (H5O_SHMESG_MAX_NINDEXES).
constexpr size_t kMaxIndexes = 8;
constexpr size_t kIndexEntryBytes = 1 + 1 + 2 + 4 + 2 + 2 + 2 + 8 + 8;

}  // namespace

Result<SharedMessageTable> ReadSharedMessageTable(const RawFile& file, const HeaderMessage& table_message) {
  FieldReader m(table_message.body, file, "shared message table message", table_message.addr);
  const uint8_t version = m.U8();
  SharedMessageTable table;
  table.addr = m.Addr();
  const uint8_t count = m.U8();
  if (!m.ok()) return m.status();
  if (version != 0) return m.Fail("shared message table message version " + std::to_string(version) + " (expected 0)");
  if (count == 0 || count > kMaxIndexes)
    return m.Fail(std::to_string(count) + " shared message indexes (HDF5 allows 1 to " + std::to_string(kMaxIndexes) + ")");
  // "SMTB", the entries, a checksum.
  TESSERA_ASSIGN_OR_RETURN(Bytes bytes, file.Read(table.addr, 4 + count * kIndexEntryBytes + 4, "shared message table"));
  FieldReader r(bytes, file, "shared message table", table.addr);
  if (!r.ExpectSignature("SMTB")) return r.status();
  r.set_pos(bytes.size() - 4);
  if (!r.VerifyChecksum()) return r.status();
  r.set_pos(4);
  for (uint8_t i = 0; i < count; ++i) {
    SharedMessageIndex index;
    const uint8_t index_version = r.U8();
    index.index_type = r.U8();
    index.message_types = r.U16();
    index.min_message_size = r.U32();
    index.list_cutoff = r.U16();
    index.btree_cutoff = r.U16();
    index.message_count = r.U16();
    index.index_addr = r.Addr();
    index.heap_addr = r.Addr();
    if (!r.ok()) return r.status();
    const std::string which = "index " + std::to_string(i);
    if (index_version != 0) return r.Fail(which + ": version " + std::to_string(index_version) + " (expected 0)");
    if (index.index_type > 1) return r.Fail(which + ": index type " + std::to_string(index.index_type) + " (0 list, 1 B-tree)");
    table.indexes.push_back(index);
  }
  for (const SharedMessageIndex& index : table.indexes) {
    // An index that has never shared a message has no heap yet.
    if (index.heap_addr == kUndefinedAddress) {
      table.heaps.push_back(FractalHeap{});
      continue;
    }
    TESSERA_ASSIGN_OR_RETURN(FractalHeap heap, ReadFractalHeapHeader(file, index.heap_addr));
    table.heaps.push_back(heap);
  }
  return table;
}

Result<Bytes> ReadSharedHeapMessage(const RawFile& file, uint16_t message_type, ByteView heap_id, uint64_t at) {
  const SharedMessageTable* table = file.shared_messages();
  const std::string where = file.Where("shared message", at, heap_id.size());
  if (table == nullptr)
    return CorruptData(where + ": message type " + std::to_string(message_type) +
                       " is in the shared-message heap, but the file has no shared message table");
  if (message_type >= 16)
    return CorruptData(where + ": message type " + std::to_string(message_type) + " cannot be shared");
  for (size_t i = 0; i < table->indexes.size(); ++i) {
    if ((table->indexes[i].message_types & (1u << message_type)) == 0) continue;
    if (table->indexes[i].heap_addr == kUndefinedAddress)
      return CorruptData(where + ": shared message index " + std::to_string(i) + " (message type " +
                         std::to_string(message_type) + ") has no heap");
    return ReadHeapObject(file, table->heaps[i], heap_id);
  }
  return CorruptData(where + ": no shared message index holds message type " + std::to_string(message_type));
}

bool IsInSharedHeap(const HeaderMessage& m) {
  return (m.flags & kMsgFlagShared) != 0 && m.body.size() >= 2 && m.body[0] == kSharedEncodingVersion3 &&
         m.body[1] == kSharedInHeap;
}

Result<HeaderMessage> ResolveSharedHeapMessage(const RawFile& file, const HeaderMessage& m) {
  if (!IsInSharedHeap(m)) return m;
  if (m.body.size() < 2 + kSharedHeapIdBytes)
    return file.Corrupt("shared message", m.addr, m.body.size(), "shorter than its heap ID");
  HeaderMessage resolved;
  resolved.type = m.type;
  resolved.flags = static_cast<uint8_t>(m.flags & ~kMsgFlagShared);
  resolved.addr = m.addr;
  TESSERA_ASSIGN_OR_RETURN(resolved.body,
                           ReadSharedHeapMessage(file, m.type, ByteView(m.body).subspan(2, kSharedHeapIdBytes), m.addr));
  return resolved;
}

}  // namespace tessera::hdf5
