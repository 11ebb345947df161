#include "tessera/hdf5/h5_chunk_index.h"

#include <set>

#include "tessera/hdf5/h5_btree2.h"

namespace tessera::hdf5 {
namespace {

// Fixed and extensible array blocks start alike: signature, version, client id, then the address
// of the array's header, which must be the header that led here.
bool ExpectBlockPrefix(FieldReader& r, std::string_view signature, uint64_t header) {
  if (!r.ExpectSignature(signature)) return false;
  r.Skip(2);
  // Fail records the error in `r` (the caller reads r.status()); its returned copy is not needed.
  if (r.Addr() != header && r.ok()) static_cast<void>(r.Fail("does not point back to its header at " + Hex(header)));
  return r.ok();
}

constexpr int kMaxTreeLevel = 64;

// Adds a chunk found at chunk coordinates `scaled` of `grid`, the grid of the current extent
// (ignoring chunks outside it, which a shrunk dataset may still index).
void AddChunk(const H5ChunkGrid& grid, const std::vector<uint64_t>& scaled, const ChunkRecord& rec, ChunkMap* map) {
  if (rec.addr == kUndefinedAddress) return;
  for (size_t d = 0; d < scaled.size(); ++d)
    if (scaled[d] >= grid.chunk_count[d]) return;
  (*map)[grid.Ravel(scaled.data())] = rec;
}

// ---------------------------------------------------------------------------------------------
// Version-1 B-tree, node type 1 (raw data chunks).

struct BTreeV1Walk {
  const RawFile& file;
  const ChunkGeometry& g;
  const H5ChunkGrid& grid;
  std::set<uint64_t> visited{};
  ChunkMap* map = nullptr;

  Status Node(uint64_t addr, int expected_level) {
    const size_t rank = g.dims.size();
    const uint64_t key_size = 8 + 8 * (rank + 1);
    if (!visited.insert(addr).second)
      return file.Corrupt("chunk B-tree node", addr, 24, "B-tree loop (node already visited)");
    TESSERA_ASSIGN_OR_RETURN(Bytes head, file.Read(addr, 24, "chunk B-tree node"));
    FieldReader h(head, file, "chunk B-tree node", addr);
    h.ExpectSignature("TREE");
    const uint8_t type = h.U8();
    const uint8_t level = h.U8();
    const uint16_t entries = h.U16();
    if (!h.ok()) return h.status();
    if (type != 1) return h.Fail("node type " + std::to_string(type) + " in a chunk B-tree (expected 1)");
    if (level > kMaxTreeLevel || (expected_level >= 0 && level != expected_level))
      return h.Fail("node level " + std::to_string(level) + " (expected " + std::to_string(expected_level) + ")");
    TESSERA_ASSIGN_OR_RETURN(Bytes node, file.Read(addr, 24 + entries * (key_size + 8) + key_size, "chunk B-tree node"));
    FieldReader r(node, file, "chunk B-tree node", addr);
    r.Skip(24);
    std::vector<uint64_t> scaled(rank), previous;
    for (int i = 0; i < entries; ++i) {
      ChunkRecord rec;
      rec.size = r.U32();
      rec.filter_mask = r.U32();
      for (size_t d = 0; d < rank; ++d) {
        const uint64_t offset = r.U64();
        if (r.ok() && offset % g.chunk_dims[d] != 0)
          return r.Fail("chunk offset " + std::to_string(offset) + " in dimension " + std::to_string(d) +
                        " is not a multiple of the chunk size " + std::to_string(g.chunk_dims[d]));
        // A chunk can start anywhere below a fixed maximum extent, never at or past it.
        if (r.ok() && d < g.max_dims.size() && g.max_dims[d] != kUnlimited && offset >= g.max_dims[d])
          return r.Fail("chunk offset " + std::to_string(offset) + " in dimension " + std::to_string(d) +
                        " is past the maximum extent " + std::to_string(g.max_dims[d]));
        scaled[d] = offset / g.chunk_dims[d];
      }
      // The keys of a node are in increasing chunk order (HDF5 finds chunks by binary search): a key
      // out of order is damage, and reading on would silently drop chunks.
      if (r.ok() && !previous.empty() && !(previous < scaled))
        return r.Fail("chunk B-tree keys out of order (entry " + std::to_string(i) + ")");
      previous = scaled;
      r.U64();  // the element-size dimension's offset, always 0
      rec.addr = r.Addr();
      if (!r.ok()) return r.status();
      if (level == 0) {
        AddChunk(grid, scaled, rec, map);
      } else {
        TESSERA_RETURN_IF_ERROR(Node(rec.addr, level - 1));
      }
    }
    return Status::Ok();
  }
};

// ---------------------------------------------------------------------------------------------
// Fixed and extensible array elements: an address, then for filtered chunks the stored size
// (the rest of the element less the 4-byte filter mask) and the filter mask.

ChunkRecord ReadArrayElement(FieldReader& r, size_t element_size, bool filtered, uint64_t chunk_bytes) {
  ChunkRecord rec;
  rec.addr = r.Addr();
  if (filtered) {
    rec.size = r.U(element_size - 12);
    rec.filter_mask = r.U32();
  } else {
    rec.size = chunk_bytes;
  }
  return rec;
}

Status CheckElementSize(FieldReader& r, uint8_t element_size, bool filtered) {
  const bool ok = filtered ? (element_size > 12 && element_size <= 20) : element_size == 8;
  if (!ok) return r.Fail("element size " + std::to_string(element_size) + " for " +
                         (filtered ? "filtered" : "unfiltered") + " chunks");
  return Status::Ok();
}

bool PageInitialized(ByteView bitmap, uint64_t page) {
  // HDF5 numbers bitmap bits from the most significant bit of each byte.
  return page / 8 < bitmap.size() && (bitmap[page / 8] & (0x80 >> (page % 8)));
}

// Elements are in C order over the chunk grid of the maximum dimensions (all fixed), its
// dimension 0 unbounded. A dimension of no chunks (maximum extent 0) ends the division: it and
// the slower dimensions read 0.
struct LinearToScaled {
  H5ChunkGrid grid;          // the grid the index is laid out on
  size_t unlimited_dim = 0;  // moved to the front ("swizzled") in extensible arrays
  bool swizzled = false;

  std::vector<uint64_t> operator()(uint64_t idx) const {
    const size_t rank = static_cast<size_t>(grid.rank);
    std::vector<uint64_t> c(rank);
    for (size_t d = rank; d-- > 1;) {
      const uint64_t n = grid.chunk_count[d];
      c[d] = n ? idx % n : 0;
      idx = n ? idx / n : 0;
    }
    if (rank) c[0] = idx;
    if (!swizzled || unlimited_dim == 0) return c;
    std::vector<uint64_t> out(rank);
    out[unlimited_dim] = c[0];
    for (size_t d = 0, s = 1; d < rank; ++d)
      if (d != unlimited_dim) out[d] = c[s++];
    return out;
  }
};

Status LoadFixedArray(const RawFile& file, const Layout& l, const ChunkGeometry& g, ChunkMap* map) {
  TESSERA_ASSIGN_OR_RETURN(Bytes head, file.Read(l.address, 28, "fixed array header"));
  FieldReader h(head, file, "fixed array header", l.address);
  h.ExpectSignature("FAHD");
  const uint8_t version = h.U8();
  h.U8();  // client id
  const uint8_t element_size = h.U8();
  const uint8_t page_bits = h.U8();
  const uint64_t nelements = h.Length();
  const uint64_t block_addr = h.Addr();
  if (!h.VerifyChecksum()) return h.status();
  if (version != 0) return h.Fail("fixed array version " + std::to_string(version));
  TESSERA_RETURN_IF_ERROR(CheckElementSize(h, element_size, g.filtered));
  if (page_bits > 32) return h.Fail("page bits " + std::to_string(page_bits));
  if (block_addr == kUndefinedAddress) return Status::Ok();
  if (nelements > file.size() / element_size) return h.Fail("element count " + std::to_string(nelements) + " exceeds the file");

  const LinearToScaled to_scaled{H5ChunkGrid(g.max_dims, g.chunk_dims)};
  const H5ChunkGrid grid(g.dims, g.chunk_dims);
  const uint64_t page_elements = uint64_t{1} << page_bits;
  const bool paged = nelements > page_elements;
  const uint64_t npages = paged ? index::CeilDiv(nelements, page_elements) : 0;
  const uint64_t bitmap_size = (npages + 7) / 8;
  const uint64_t prefix = 14 + bitmap_size + 4;
  TESSERA_ASSIGN_OR_RETURN(Bytes block,
                           file.Read(block_addr, paged ? prefix : 14 + nelements * element_size + 4,
                                     "fixed array data block"));
  FieldReader b(block, file, "fixed array data block", block_addr);
  if (!ExpectBlockPrefix(b, "FADB", l.address)) return b.status();
  if (!paged) {
    const size_t elements_at = b.pos();
    b.Skip(nelements * element_size);
    if (!b.VerifyChecksum()) return b.status();
    b.set_pos(elements_at);
    for (uint64_t i = 0; i < nelements; ++i) {
      ChunkRecord rec = ReadArrayElement(b, element_size, g.filtered, g.chunk_bytes);
      if (!b.ok()) return b.status();
      AddChunk(grid, to_scaled(i), rec, map);
    }
    return Status::Ok();
  }
  ByteView bitmap = b.Take(bitmap_size);
  if (!b.VerifyChecksum()) return b.status();
  uint64_t page_addr = block_addr + prefix;
  for (uint64_t p = 0; p < npages; ++p) {
    const uint64_t first = p * page_elements;
    const uint64_t n = std::min(page_elements, nelements - first);
    const uint64_t page_size = n * element_size + 4;
    if (PageInitialized(bitmap, p)) {
      TESSERA_ASSIGN_OR_RETURN(Bytes page, file.Read(page_addr, page_size, "fixed array page"));
      FieldReader pr(page, file, "fixed array page", page_addr);
      pr.Skip(n * element_size);
      if (!pr.VerifyChecksum()) return pr.status();
      pr.set_pos(0);
      for (uint64_t i = 0; i < n; ++i) {
        ChunkRecord rec = ReadArrayElement(pr, element_size, g.filtered, g.chunk_bytes);
        if (!pr.ok()) return pr.status();
        AddChunk(grid, to_scaled(first + i), rec, map);
      }
    }
    page_addr += page_elements * element_size + 4;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Extensible array: header -> index block (a few elements inline, data block and super block
// addresses) -> super blocks -> data blocks (possibly paged) -> elements.

struct ExtensibleArray {
  const RawFile& file;
  const ChunkGeometry& g;
  uint64_t header_addr;
  uint8_t element_size = 0;
  uint8_t max_bits = 0, index_elements = 0, min_elements = 0, min_pointers = 0, page_bits = 0;
  uint64_t max_index_set = 0;
  uint64_t array_offset_size = 0;
  LinearToScaled to_scaled{};
  H5ChunkGrid grid{};  // of the current extent
  ChunkMap* map = nullptr;

  Status AddElements(FieldReader& r, uint64_t first, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
      ChunkRecord rec = ReadArrayElement(r, element_size, g.filtered, g.chunk_bytes);
      if (!r.ok()) return r.status();
      if (first + i < max_index_set) AddChunk(grid, to_scaled(first + i), rec, map);
    }
    return Status::Ok();
  }

  // One data block of `nelements` starting at element index `first`; `page_bitmap` (nullptr
  // when the block is in the index block) says which pages exist.
  Status DataBlock(uint64_t addr, uint64_t first, uint64_t nelements, ByteView page_bitmap, bool have_bitmap) {
    if (addr == kUndefinedAddress) return Status::Ok();
    const uint64_t page_elements = uint64_t{1} << page_bits;
    const bool paged = nelements > page_elements;
    const uint64_t prefix = 4 + 1 + 1 + 8 + array_offset_size;
    TESSERA_ASSIGN_OR_RETURN(Bytes block, file.Read(addr, prefix + (paged ? 0 : nelements * element_size) + 4,
                                                    "extensible array data block"));
    FieldReader b(block, file, "extensible array data block", addr);
    if (!ExpectBlockPrefix(b, "EADB", header_addr)) return b.status();
    b.Skip(array_offset_size);
    if (!paged) {
      b.Skip(nelements * element_size);
      if (!b.VerifyChecksum()) return b.status();
      b.set_pos(prefix);
      return AddElements(b, first, nelements);
    }
    if (!b.VerifyChecksum()) return b.status();
    const uint64_t npages = nelements / page_elements;
    for (uint64_t p = 0; p < npages; ++p) {
      if (first + p * page_elements >= max_index_set) break;
      if (have_bitmap && !PageInitialized(page_bitmap, p)) continue;
      const uint64_t page_addr = addr + prefix + 4 + p * (page_elements * element_size + 4);
      TESSERA_ASSIGN_OR_RETURN(Bytes page, file.Read(page_addr, page_elements * element_size + 4,
                                                     "extensible array data block page"));
      FieldReader pr(page, file, "extensible array data block page", page_addr);
      pr.Skip(page_elements * element_size);
      if (!pr.VerifyChecksum()) return pr.status();
      pr.set_pos(0);
      TESSERA_RETURN_IF_ERROR(AddElements(pr, first + p * page_elements, page_elements));
    }
    return Status::Ok();
  }

  Status Load(uint64_t addr) {
    TESSERA_ASSIGN_OR_RETURN(Bytes head, file.Read(addr, 12 + 6 * 8 + 8 + 4, "extensible array header"));
    FieldReader h(head, file, "extensible array header", addr);
    h.ExpectSignature("EAHD");
    const uint8_t version = h.U8();
    h.U8();  // client id
    element_size = h.U8();
    max_bits = h.U8();
    index_elements = h.U8();
    min_elements = h.U8();
    min_pointers = h.U8();
    page_bits = h.U8();
    h.Skip(4 * 8);  // super/data block counts and sizes (statistics)
    max_index_set = h.Length();
    h.Length();  // elements realized
    const uint64_t index_block = h.Addr();
    if (!h.VerifyChecksum()) return h.status();
    if (version != 0) return h.Fail("extensible array version " + std::to_string(version));
    TESSERA_RETURN_IF_ERROR(CheckElementSize(h, element_size, g.filtered));
    auto is_pow2 = [](uint64_t v) { return v != 0 && (v & (v - 1)) == 0; };
    if (max_bits == 0 || max_bits > 64 || page_bits > 32 || !is_pow2(min_elements) || !is_pow2(min_pointers))
      return h.Fail("invalid creation parameters");
    if (index_block == kUndefinedAddress) return Status::Ok();
    array_offset_size = (max_bits + 7) / 8;

    // Super block s holds 2^(s/2) data blocks of 2^((s+1)/2) * min_elements elements each.
    int log2_min_elements = 0;
    while ((1u << log2_min_elements) < min_elements) ++log2_min_elements;
    if (max_bits < log2_min_elements) return h.Fail("invalid creation parameters");
    const uint64_t nsuper = 1 + (max_bits - log2_min_elements);
    int log2_min_pointers = 0;
    while ((1u << log2_min_pointers) < min_pointers) ++log2_min_pointers;
    const uint64_t index_super = std::min<uint64_t>(2 * log2_min_pointers, nsuper);  // super blocks whose data blocks the index block lists
    const uint64_t index_data_addrs = 2 * (uint64_t{min_pointers} - 1);
    const uint64_t index_super_addrs = nsuper - index_super;

    const uint64_t ib_size = 4 + 1 + 1 + 8 + uint64_t{index_elements} * element_size + 8 * index_data_addrs +
                             8 * index_super_addrs + 4;
    TESSERA_ASSIGN_OR_RETURN(Bytes ib, file.Read(index_block, ib_size, "extensible array index block"));
    FieldReader r(ib, file, "extensible array index block", index_block);
    if (!ExpectBlockPrefix(r, "EAIB", addr)) return r.status();
    r.set_pos(ib_size - 4);
    if (!r.VerifyChecksum()) return r.status();
    r.set_pos(14);
    TESSERA_RETURN_IF_ERROR(AddElements(r, 0, index_elements));
    std::vector<uint64_t> data_addrs(index_data_addrs), super_addrs(index_super_addrs);
    for (auto& a : data_addrs) a = r.Addr();
    for (auto& a : super_addrs) a = r.Addr();
    if (!r.ok()) return r.status();

    uint64_t first = index_elements;  // element index where the current super block starts
    size_t data_addr_i = 0;
    for (uint64_t s = 0; s < nsuper && first < max_index_set; ++s) {
      const uint64_t ndata = uint64_t{1} << (s / 2);
      const uint64_t block_elements = (uint64_t{1} << ((s + 1) / 2)) * min_elements;
      if (s < index_super) {
        for (uint64_t d = 0; d < ndata && data_addr_i < data_addrs.size(); ++d, ++data_addr_i)
          TESSERA_RETURN_IF_ERROR(DataBlock(data_addrs[data_addr_i], first + d * block_elements, block_elements, {}, false));
      } else {
        TESSERA_RETURN_IF_ERROR(SuperBlock(super_addrs[s - index_super], first, ndata, block_elements));
      }
      first += ndata * block_elements;
    }
    return Status::Ok();
  }

  Status SuperBlock(uint64_t addr, uint64_t first, uint64_t ndata, uint64_t block_elements) {
    if (addr == kUndefinedAddress) return Status::Ok();
    const uint64_t page_elements = uint64_t{1} << page_bits;
    const uint64_t npages = block_elements > page_elements ? block_elements / page_elements : 0;
    const uint64_t bitmap_per_block = npages ? (npages + 7) / 8 : 0;
    const uint64_t prefix = 4 + 1 + 1 + 8 + array_offset_size;
    const uint64_t size = prefix + ndata * bitmap_per_block + ndata * 8 + 4;
    TESSERA_ASSIGN_OR_RETURN(Bytes sb, file.Read(addr, size, "extensible array super block"));
    FieldReader r(sb, file, "extensible array super block", addr);
    if (!ExpectBlockPrefix(r, "EASB", header_addr)) return r.status();
    r.set_pos(size - 4);
    if (!r.VerifyChecksum()) return r.status();
    r.set_pos(prefix);
    ByteView bitmaps = r.Take(ndata * bitmap_per_block);
    for (uint64_t d = 0; d < ndata; ++d) {
      const uint64_t block = r.Addr();
      if (!r.ok()) return r.status();
      if (first + d * block_elements >= max_index_set) break;
      TESSERA_RETURN_IF_ERROR(DataBlock(block, first + d * block_elements, block_elements,
                                        bitmaps.subspan(d * bitmap_per_block, bitmap_per_block), npages > 0));
    }
    return Status::Ok();
  }
};

// ---------------------------------------------------------------------------------------------
// Version-2 B-tree, record types 10 (unfiltered chunks) and 11 (filtered chunks): the address,
// for filtered chunks the stored size and filter mask, then the chunk coordinates (u64 each).

Status LoadBTreeV2(const RawFile& file, const Layout& l, const ChunkGeometry& g, ChunkMap* map) {
  const H5ChunkGrid grid(g.dims, g.chunk_dims);
  const size_t rank = g.dims.size();
  const uint8_t type = g.filtered ? 11 : 10;
  return WalkBTreeV2(file, l.address, type, [&](ByteView record, uint64_t at) -> Status {
    FieldReader r(record, file, "v2 B-tree chunk record", at);
    const size_t fixed = 8 + 8 * rank + (type == 11 ? 4 : 0);
    if (record.size() < fixed + (type == 11 ? 1 : 0) || record.size() > fixed + (type == 11 ? 8 : 0))
      return r.Fail("record of " + std::to_string(record.size()) + " bytes for a rank-" + std::to_string(rank) +
                    " dataset");
    ChunkRecord rec;
    rec.addr = r.Addr();
    if (type == 11) {
      rec.size = r.U(record.size() - fixed);
      rec.filter_mask = r.U32();
    } else {
      rec.size = g.chunk_bytes;
    }
    std::vector<uint64_t> scaled(rank);
    for (auto& s : scaled) s = r.U64();
    if (!r.ok()) return r.status();
    AddChunk(grid, scaled, rec, map);
    return Status::Ok();
  });
}

}  // namespace

Result<ChunkMap> LoadChunkIndex(const RawFile& file, const Layout& l, const ChunkGeometry& g, const std::string& what) {
  ChunkMap map;
  // A chunked dataset never written to has no index yet (its address undefined), whatever the
  // index type: every chunk reads as the fill value (h5py with libver='latest' writes these).
  if (l.address == kUndefinedAddress) return map;
  const H5ChunkGrid grid(g.dims, g.chunk_dims);
  Status st;
  switch (l.index_type) {
    case ChunkIndexType::kBTreeV1: {
      BTreeV1Walk walk{file, g, grid, {}, &map};
      st = walk.Node(l.address, -1);
      break;
    }
    case ChunkIndexType::kSingleChunk: {
      ChunkRecord rec{l.address, l.single_chunk_filtered ? l.single_chunk_size : g.chunk_bytes,
                      l.single_chunk_filtered ? l.single_chunk_filter_mask : 0};
      AddChunk(grid, std::vector<uint64_t>(g.dims.size(), 0), rec, &map);
      break;
    }
    case ChunkIndexType::kImplicit: {
      // Every chunk of the maximum-extent grid is allocated, back to back, in C order.
      const LinearToScaled to_scaled{H5ChunkGrid(g.max_dims, g.chunk_dims)};
      const uint64_t total = to_scaled.grid.ChunkCount();
      if (g.chunk_bytes == 0 || total > file.size() / g.chunk_bytes + 1)
        return file.Corrupt("implicit chunk index of " + what, l.address, 0, "more chunks than the file can hold");
      for (uint64_t i = 0; i < total; ++i)
        AddChunk(grid, to_scaled(i), ChunkRecord{l.address + i * g.chunk_bytes, g.chunk_bytes, 0}, &map);
      break;
    }
    case ChunkIndexType::kFixedArray: st = LoadFixedArray(file, l, g, &map); break;
    case ChunkIndexType::kExtensibleArray: {
      size_t unlimited = 0, nunlimited = 0;
      for (size_t d = 0; d < g.max_dims.size(); ++d)
        if (g.max_dims[d] == kUnlimited) unlimited = d, ++nunlimited;
      if (nunlimited != 1)
        return CorruptData(file.path() + ": " + what + ": extensible array index with " + std::to_string(nunlimited) +
                           " unlimited dimensions (expected 1)");
      ExtensibleArray ea{file, g, l.address};
      // The unlimited dimension first: the slowest, unbounded (its chunk count is never used).
      std::vector<uint64_t> swizzled_dims{g.max_dims[unlimited]}, swizzled_chunks{g.chunk_dims[unlimited]};
      for (size_t d = 0; d < g.dims.size(); ++d) {
        if (d == unlimited) continue;
        swizzled_dims.push_back(g.max_dims[d]);
        swizzled_chunks.push_back(g.chunk_dims[d]);
      }
      ea.to_scaled = LinearToScaled{H5ChunkGrid(swizzled_dims, swizzled_chunks), unlimited, true};
      ea.grid = grid;
      ea.map = &map;
      st = ea.Load(l.address);
      break;
    }
    case ChunkIndexType::kBTreeV2: st = LoadBTreeV2(file, l, g, &map); break;
  }
  if (!st.ok()) return st;
  return map;
}

}  // namespace tessera::hdf5
