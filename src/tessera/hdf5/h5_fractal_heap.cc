#include "tessera/hdf5/h5_fractal_heap.h"

#include <set>

namespace tessera::hdf5 {
namespace {

int Log2(uint64_t v) {
  int l = 0;
  while (l < 63 && (uint64_t{1} << (l + 1)) <= v) ++l;
  return l;
}
bool IsPow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

uint64_t RowBlockSize(const FractalHeap& h, uint64_t row) {
  return row == 0 ? h.start_block_size : h.start_block_size << (row - 1);
}

// Finds the file address of heap offset `offset` under the indirect block at `addr` (covering
// heap space from `block_offset`, `nrows` rows).
Result<uint64_t> Locate(const RawFile& file, const FractalHeap& h, uint64_t addr, uint64_t nrows, uint64_t offset,
                        int depth, std::set<uint64_t>* visited) {
  if (depth > 16 || !visited->insert(addr).second)
    return file.Corrupt("fractal heap indirect block", addr, 0, "indirect block loop or nesting too deep");
  const uint64_t max_direct_rows = Log2(h.max_direct_block_size) - Log2(h.start_block_size) + 2;
  const uint64_t entries = nrows * h.table_width;
  const uint64_t size = 4 + 1 + 8 + h.offset_size + entries * 8 + 4;
  TESSERA_ASSIGN_OR_RETURN(Bytes block, file.Read(addr, size, "fractal heap indirect block"));
  FieldReader r(block, file, "fractal heap indirect block", addr);
  r.ExpectSignature("FHIB");
  r.U8();
  if (r.Addr() != h.addr && r.ok()) return r.Fail("does not point back to its heap header at " + Hex(h.addr));
  uint64_t entry_offset = r.U(h.offset_size);
  r.Skip(entries * 8);
  if (!r.VerifyChecksum()) return r.status();
  r.set_pos(4 + 1 + 8 + h.offset_size);
  for (uint64_t row = 0; row < nrows; ++row) {
    const uint64_t row_size = RowBlockSize(h, row);
    for (uint64_t col = 0; col < h.table_width; ++col, entry_offset += row_size) {
      const uint64_t child = r.Addr();
      if (offset < entry_offset || offset - entry_offset >= row_size) continue;
      if (child == kUndefinedAddress) return r.Fail("heap offset " + std::to_string(offset) + " is in an unallocated block");
      if (row < max_direct_rows) return child + (offset - entry_offset);
      const uint64_t child_rows = Log2(row_size) - (Log2(h.start_block_size) + Log2(h.table_width)) + 1;
      return Locate(file, h, child, child_rows, offset, depth + 1, visited);
    }
  }
  return r.Fail("heap offset " + std::to_string(offset) + " is outside the block");
}

}  // namespace

Result<FractalHeap> ReadFractalHeapHeader(const RawFile& file, uint64_t addr) {
  TESSERA_ASSIGN_OR_RETURN(Bytes head, file.Read(addr, 146, "fractal heap header"));
  FieldReader r(head, file, "fractal heap header", addr);
  FractalHeap h;
  h.addr = addr;
  r.ExpectSignature("FRHP");
  const uint8_t version = r.U8();
  h.id_length = r.U16();
  const uint16_t filter_length = r.U16();
  r.U8();                    // flags
  r.U32();                   // max managed object size
  r.Skip(8 + 8 + 8 + 8);     // next huge id, huge B-tree, free space, free-space manager
  r.Skip(8 * 8);             // managed space, allocated, iterator offset, object counts and sizes
  h.table_width = r.U16();
  h.start_block_size = r.Length();
  h.max_direct_block_size = r.Length();
  h.max_heap_bits = r.U16();
  r.U16();  // starting rows of the root indirect block
  h.root_addr = r.Addr();
  h.root_rows = r.U16();
  if (!r.ok()) return r.status();
  if (version != 0) return r.Fail("fractal heap version " + std::to_string(version));
  if (filter_length != 0)
    return Unsupported(file.Where("fractal heap header", addr, 146) + ": filtered fractal heaps");
  if (!r.VerifyChecksum()) return r.status();
  if (!IsPow2(h.table_width) || !IsPow2(h.start_block_size) || !IsPow2(h.max_direct_block_size) ||
      h.max_direct_block_size < h.start_block_size || h.max_heap_bits == 0 || h.max_heap_bits > 64 ||
      h.root_rows > 64)
    return r.Fail("invalid heap parameters");
  h.offset_size = (h.max_heap_bits + 7) / 8;
  h.length_size = (Log2(h.max_direct_block_size) + 7) / 8;
  return h;
}

Result<Bytes> ReadHeapObject(const RawFile& file, const FractalHeap& h, ByteView id) {
  FieldReader r(id, file, "fractal heap object id", h.addr);
  const uint8_t flags = r.U8();
  if ((flags >> 6) != 0) return r.Fail("heap id version " + std::to_string(flags >> 6));
  const uint8_t kind = (flags >> 4) & 3;  // 0 managed, 1 huge, 2 tiny
  if (kind == 2) {
    // Tiny objects live in the ID itself: the low 4 bits of the first byte hold length - 1 (and,
    // in IDs longer than 18 bytes, the next byte 8 more bits), the bytes follow.
    const bool extended = h.id_length > 18;
    const size_t length = extended ? (((flags & 0x0F) << 8) | r.U8()) + 1 : (flags & 0x0F) + 1;
    ByteView tiny = r.Take(length);
    if (!r.ok()) return r.status();
    return Bytes(tiny.begin(), tiny.end());
  }
  if (kind != 0) return Unsupported(file.Where("fractal heap", h.addr, 0) + ": huge heap objects");
  const uint64_t offset = r.U(h.offset_size);
  const uint64_t length = r.U(std::min<size_t>(h.length_size, r.remaining()));
  if (!r.ok()) return r.status();
  if (h.root_addr == kUndefinedAddress) return r.Fail("the heap is empty");
  uint64_t at = 0;
  if (h.root_rows == 0) {
    if (offset >= h.start_block_size || length > h.start_block_size - offset)
      return r.Fail("object at heap offset " + std::to_string(offset) + " outside the root direct block");
    at = h.root_addr + offset;
  } else {
    std::set<uint64_t> visited;
    TESSERA_ASSIGN_OR_RETURN(at, Locate(file, h, h.root_addr, h.root_rows, offset, 0, &visited));
  }
  return file.Read(at, length, "fractal heap object");
}

}  // namespace tessera::hdf5
