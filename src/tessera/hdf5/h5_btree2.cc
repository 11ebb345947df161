#include "tessera/hdf5/h5_btree2.h"

#include <set>
#include <vector>

namespace tessera::hdf5 {
namespace {

constexpr int kMaxDepth = 64;

int EncodedSize(uint64_t v) {  // bytes needed to store v (H5VM_limit_enc_size)
  int log2 = 0;
  while (log2 < 63 && (uint64_t{1} << (log2 + 1)) <= v) ++log2;
  return log2 / 8 + 1;
}

struct Walk {
  const RawFile& file;
  const std::function<Status(ByteView, uint64_t)>& visit;
  uint8_t type = 0;
  uint32_t node_size = 0;
  uint16_t record_size = 0;
  std::vector<uint64_t> max_records{}, cum_max_records{};
  std::vector<int> cum_max_records_size{};
  int max_records_size = 0;
  std::set<uint64_t> visited{};

  Status Node(uint64_t addr, uint64_t nrecords, int depth) {
    const char* what = depth == 0 ? "v2 B-tree leaf node" : "v2 B-tree internal node";
    if (!visited.insert(addr).second) return file.Corrupt(what, addr, node_size, "B-tree loop (node already visited)");
    TESSERA_ASSIGN_OR_RETURN(Bytes node, file.Read(addr, node_size, what));
    FieldReader r(node, file, what, addr);
    r.ExpectSignature(depth == 0 ? "BTLF" : "BTIN");
    r.U8();
    if (r.U8() != type && r.ok()) return r.Fail("record type differs from the header's");
    if (!r.ok()) return r.status();
    if (nrecords > max_records[depth]) return r.Fail("holds " + std::to_string(nrecords) + " records, more than fit");
    const size_t records_at = r.pos();
    r.Skip(nrecords * record_size);
    struct Child {
      uint64_t addr, nrecords;
    };
    std::vector<Child> children;
    if (depth > 0) {
      for (uint64_t i = 0; i <= nrecords; ++i) {
        Child c;
        c.addr = r.Addr();
        c.nrecords = r.U(max_records_size);
        if (depth > 1) r.U(cum_max_records_size[depth - 1]);
        children.push_back(c);
      }
    }
    if (!r.VerifyChecksum()) return r.status();
    for (uint64_t i = 0; i < nrecords; ++i) {
      const size_t at = records_at + i * record_size;
      TESSERA_RETURN_IF_ERROR(visit(ByteView(node).subspan(at, record_size), addr + at));
    }
    for (const Child& c : children) TESSERA_RETURN_IF_ERROR(Node(c.addr, c.nrecords, depth - 1));
    return Status::Ok();
  }
};

}  // namespace

Status WalkBTreeV2(const RawFile& file, uint64_t header_addr, uint8_t record_type,
                   const std::function<Status(ByteView, uint64_t)>& visit) {
  TESSERA_ASSIGN_OR_RETURN(Bytes head, file.Read(header_addr, 38, "v2 B-tree header"));
  FieldReader h(head, file, "v2 B-tree header", header_addr);
  Walk w{file, visit};
  h.ExpectSignature("BTHD");
  const uint8_t version = h.U8();
  w.type = h.U8();
  w.node_size = h.U32();
  w.record_size = h.U16();
  const uint16_t depth = h.U16();
  h.Skip(2);  // split / merge percentages
  const uint64_t root = h.Addr();
  const uint16_t root_records = h.U16();
  h.Length();  // total records
  if (!h.VerifyChecksum()) return h.status();
  if (version != 0) return h.Fail("v2 B-tree version " + std::to_string(version));
  if (w.type != record_type)
    return h.Fail("record type " + std::to_string(w.type) + " (expected " + std::to_string(record_type) + ")");
  if (w.record_size == 0 || w.node_size < 32 || w.node_size > (1u << 24) || depth > kMaxDepth ||
      w.record_size > w.node_size)
    return h.Fail("node size, record size or depth out of range");
  if (root == kUndefinedAddress) return Status::Ok();
  // Node capacities per depth, derived as the HDF5 library does (H5B2__hdr_init): they fix the
  // width of the child-pointer fields of internal nodes.
  w.max_records.push_back((w.node_size - 10) / w.record_size);
  w.cum_max_records.push_back(w.max_records[0]);
  w.cum_max_records_size.push_back(0);
  w.max_records_size = EncodedSize(w.max_records[0]);
  for (int d = 1; d <= depth; ++d) {
    const uint64_t pointer = 8 + w.max_records_size + (d > 1 ? w.cum_max_records_size[d - 1] : 0);
    if (w.node_size < 10 + pointer + w.record_size) return h.Fail("node size too small for the tree's depth");
    w.max_records.push_back((w.node_size - 10 - pointer) / (w.record_size + pointer));
    w.cum_max_records.push_back((w.max_records[d] + 1) * w.cum_max_records[d - 1] + w.max_records[d]);
    w.cum_max_records_size.push_back(EncodedSize(w.cum_max_records[d]));
  }
  return w.Node(root, root_records, depth);
}

}  // namespace tessera::hdf5
