#include "tessera/hdf5/h5_group.h"

#include <algorithm>
#include <set>

#include "tessera/hdf5/h5_btree2.h"
#include "tessera/hdf5/h5_fractal_heap.h"

namespace tessera::hdf5 {
namespace {

constexpr int kMaxBTreeLevel = 64;

// Reads one "SNOD" symbol table node's entries.
Status ReadSymbolNode(const RawFile& file, uint64_t addr, const LocalHeap& heap, std::vector<GroupLink>* out) {
  TESSERA_ASSIGN_OR_RETURN(Bytes head, file.Read(addr, 8, "symbol table node"));
  FieldReader h(head, file, "symbol table node", addr);
  h.ExpectSignature("SNOD");
  const uint8_t version = h.U8();
  h.Skip(1);
  const uint16_t count = h.U16();
  if (!h.ok()) return h.status();
  if (version != 1) return h.Fail("symbol table node version " + std::to_string(version));
  constexpr uint64_t kEntrySize = 40;
  TESSERA_ASSIGN_OR_RETURN(Bytes body, file.Read(addr, 8 + count * kEntrySize, "symbol table node"));
  FieldReader r(body, file, "symbol table node", addr);
  r.Skip(8);
  for (int i = 0; i < count; ++i) {
    const uint64_t name_offset = r.Length();
    GroupLink link;
    link.object = r.Addr();
    const uint32_t cache_type = r.U32();
    r.Skip(4 + 16);
    if (!r.ok()) return r.status();
    TESSERA_ASSIGN_OR_RETURN(link.name, HeapString(file, heap, name_offset));
    // Cache type 2 marks a symbolic link: its scratch pad holds a heap offset, not an object.
    if (cache_type == 2) {
      link.hard = false;
      link.object = kUndefinedAddress;
    }
    out->push_back(std::move(link));
  }
  return Status::Ok();
}

// Walks a group B-tree (v1, node type 0) to its symbol table nodes.
Status WalkGroupBTree(const RawFile& file, uint64_t addr, int expected_level, const LocalHeap& heap,
                      std::set<uint64_t>* visited, std::vector<GroupLink>* out) {
  if (!visited->insert(addr).second)
    return file.Corrupt("group B-tree node", addr, 24, "B-tree loop (node already visited)");
  TESSERA_ASSIGN_OR_RETURN(Bytes head, file.Read(addr, 24, "group B-tree node"));
  FieldReader h(head, file, "group B-tree node", addr);
  h.ExpectSignature("TREE");
  const uint8_t type = h.U8();
  const uint8_t level = h.U8();
  const uint16_t entries = h.U16();
  if (!h.ok()) return h.status();
  if (type != 0) return h.Fail("node type " + std::to_string(type) + " in a group B-tree (expected 0)");
  if (level > kMaxBTreeLevel || (expected_level >= 0 && level != expected_level))
    return h.Fail("node level " + std::to_string(level) + " (expected " + std::to_string(expected_level) + ")");
  // Keys (heap offsets, 8 bytes) and children (8 bytes) alternate, with one key more.
  TESSERA_ASSIGN_OR_RETURN(Bytes node, file.Read(addr, 24 + entries * 16 + 8, "group B-tree node"));
  FieldReader r(node, file, "group B-tree node", addr);
  r.Skip(24);
  for (int i = 0; i < entries; ++i) {
    r.Length();
    const uint64_t child = r.Addr();
    if (!r.ok()) return r.status();
    if (level == 0) {
      TESSERA_RETURN_IF_ERROR(ReadSymbolNode(file, child, heap, out));
    } else {
      TESSERA_RETURN_IF_ERROR(WalkGroupBTree(file, child, level - 1, heap, visited, out));
    }
  }
  return Status::Ok();
}

Result<GroupLink> ParseLinkMessage(const RawFile& file, const HeaderMessage& m) {
  FieldReader r(m.body, file, "link message", m.addr);
  const uint8_t version = r.U8();
  const uint8_t flags = r.U8();
  if (!r.ok()) return r.status();
  if (version != 1) return r.Fail("link message version " + std::to_string(version));
  uint8_t link_type = 0;
  if (flags & 0x08) link_type = r.U8();
  if (flags & 0x04) r.Skip(8);  // creation order
  if (flags & 0x10) r.Skip(1);  // name character set
  const uint64_t name_length = r.U(size_t{1} << (flags & 3));
  ByteView name = r.Take(name_length);
  GroupLink link;
  link.name.assign(name.begin(), name.end());
  if (link_type == 0) {
    link.object = r.Addr();
  } else {
    link.hard = false;  // soft / external: not followed
  }
  if (!r.ok()) return r.status();
  return link;
}

}  // namespace

Result<LocalHeap> ReadLocalHeap(const RawFile& file, uint64_t addr, const std::string& what) {
  TESSERA_ASSIGN_OR_RETURN(Bytes head, file.Read(addr, 32, what));
  FieldReader r(head, file, what, addr);
  r.ExpectSignature("HEAP");
  const uint8_t version = r.U8();
  r.Skip(3);
  const uint64_t size = r.Length();
  r.Length();  // free list head
  LocalHeap heap;
  heap.data_addr = r.Addr();
  if (!r.ok()) return r.status();
  if (version != 0) return r.Fail("local heap version " + std::to_string(version));
  TESSERA_ASSIGN_OR_RETURN(heap.data, file.Read(heap.data_addr, size, what + " data"));
  return heap;
}

Result<std::string> HeapString(const RawFile& file, const LocalHeap& heap, uint64_t offset) {
  if (offset >= heap.data.size())
    return file.Corrupt("local heap data", heap.data_addr, heap.data.size(),
                        "name offset " + std::to_string(offset) + " outside the heap");
  const uint8_t* begin = heap.data.data() + offset;
  const uint8_t* end = heap.data.data() + heap.data.size();
  const uint8_t* nul = std::find(begin, end, uint8_t{0});
  if (nul == end) return file.Corrupt("local heap data", heap.data_addr, heap.data.size(), "unterminated name");
  return std::string(begin, nul);
}


bool IsDataset(const ObjectHeader& oh) { return oh.Find(kMsgLayout) != nullptr; }

std::string JoinGroupPath(const std::string& parent, const std::string& name) {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

bool IsGroup(const ObjectHeader& oh) {
  return !IsDataset(oh) &&
         (oh.Find(kMsgSymbolTable) || oh.Find(kMsgLinkInfo) || oh.Find(kMsgLink));
}

Result<std::vector<GroupLink>> ReadGroupLinks(const RawFile& file, const ObjectHeader& oh,
                                              const std::string& group_path) {
  std::vector<GroupLink> links;
  if (const HeaderMessage* st = oh.Find(kMsgSymbolTable)) {
    FieldReader r(st->body, file, "symbol table message", st->addr);
    const uint64_t btree = r.Addr();
    const uint64_t heap_addr = r.Addr();
    if (!r.ok()) return r.status();
    TESSERA_ASSIGN_OR_RETURN(LocalHeap heap, ReadLocalHeap(file, heap_addr));
    std::set<uint64_t> visited;
    TESSERA_RETURN_IF_ERROR(WalkGroupBTree(file, btree, -1, heap, &visited, &links));
    return links;
  }
  if (const HeaderMessage* li = oh.Find(kMsgLinkInfo)) {
    FieldReader r(li->body, file, "link info message", li->addr);
    r.U8();
    const uint8_t flags = r.U8();
    if (flags & 1) r.Skip(8);
    const uint64_t fractal_heap = r.Addr();
    const uint64_t name_index = r.Addr();
    if (!r.ok()) return r.status();
    if (fractal_heap != kUndefinedAddress) {
      // Dense storage: link messages in a fractal heap, found through the name index (a v2
      // B-tree of type 5 records: name hash, heap id).
      TESSERA_ASSIGN_OR_RETURN(FractalHeap heap, ReadFractalHeapHeader(file, fractal_heap));
      TESSERA_RETURN_IF_ERROR(WalkBTreeV2(file, name_index, 5, [&](ByteView record, uint64_t at) -> Status {
        if (record.size() < 4 + size_t{heap.id_length})
          return file.Corrupt("link name index record", at, record.size(), "shorter than a heap id");
        TESSERA_ASSIGN_OR_RETURN(Bytes body, ReadHeapObject(file, heap, record.subspan(4, heap.id_length)));
        HeaderMessage m;
        m.type = kMsgLink;
        m.addr = at;
        m.body = std::move(body);
        TESSERA_ASSIGN_OR_RETURN(GroupLink link, ParseLinkMessage(file, m));
        links.push_back(std::move(link));
        return Status::Ok();
      }));
      return links;
    }
  }
  for (const HeaderMessage& m : oh.messages) {
    if (m.type != kMsgLink) continue;
    TESSERA_ASSIGN_OR_RETURN(GroupLink link, ParseLinkMessage(file, m));
    links.push_back(std::move(link));
  }
  return links;
}

}  // namespace tessera::hdf5
