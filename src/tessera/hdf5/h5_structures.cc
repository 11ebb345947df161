#include "tessera/hdf5/h5_structures.h"

#include <cstring>

namespace tessera::hdf5 {
namespace {

// The local heap's "no free block" marker (the library's H5HL_FREE_NULL).
constexpr uint64_t kHeapFreeNull = 1;

void PutBytes(Bytes* b, const void* p, size_t n) {
  const auto* u = static_cast<const uint8_t*>(p);
  b->insert(b->end(), u, u + n);
}

void PutSignature4(Bytes* b, const char* sig) { PutBytes(b, sig, 4); }

void PadToSize(Bytes* b, size_t size) { b->resize(size, 0); }

size_t ChunkKeyBytes(int rank) { return 8 + 8 * static_cast<size_t>(rank + 1); }

}  // namespace

void PutU8(Bytes* b, uint8_t v) { b->push_back(v); }
void PutU16(Bytes* b, uint16_t v) {
  b->push_back(static_cast<uint8_t>(v));
  b->push_back(static_cast<uint8_t>(v >> 8));
}
void PutU32(Bytes* b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void PutU64(Bytes* b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void PadTo8(Bytes* b) { b->resize((b->size() + 7) / 8 * 8, 0); }

void PutSymbolEntry(Bytes* b, const SymbolEntry& e) {
  PutU64(b, e.name_offset);
  PutU64(b, e.header_address);
  PutU32(b, e.is_group ? 1 : 0);  // cache type
  PutU32(b, 0);                   // reserved
  if (e.is_group) {
    PutU64(b, e.btree_address);
    PutU64(b, e.heap_address);
  } else {
    PutU64(b, 0);
    PutU64(b, 0);
  }
}

Bytes EncodeSuperblockV0(uint64_t end_of_file, const SymbolEntry& root) {
  Bytes b;
  PutBytes(&b, kHdf5Signature, 8);
  PutU8(&b, 0);  // superblock version
  PutU8(&b, 0);  // free-space storage version
  PutU8(&b, 0);  // root group symbol table entry version
  PutU8(&b, 0);
  PutU8(&b, 0);  // shared header message format version
  PutU8(&b, 8);  // size of offsets
  PutU8(&b, 8);  // size of lengths
  PutU8(&b, 0);
  PutU16(&b, kGroupLeafK);
  PutU16(&b, kGroupInternalK);
  PutU32(&b, 0);  // file consistency flags
  PutU64(&b, 0);  // base address
  PutU64(&b, kUndefinedAddress);  // free-space info
  PutU64(&b, end_of_file);
  PutU64(&b, kUndefinedAddress);  // driver information block
  PutSymbolEntry(&b, root);
  return b;
}

Bytes EncodeDataspace(const std::vector<uint64_t>& dims, const std::vector<uint64_t>& max_dims) {
  Bytes b;
  PutU8(&b, 1);  // version
  PutU8(&b, static_cast<uint8_t>(dims.size()));
  const bool has_max = !max_dims.empty();
  PutU8(&b, has_max ? 1 : 0);
  PutU8(&b, 0);
  PutU32(&b, 0);
  for (uint64_t d : dims) PutU64(&b, d);
  for (uint64_t d : max_dims) PutU64(&b, d);
  return b;
}

Result<Bytes> EncodeNumericDatatype(DataType dtype) {
  Bytes b;
  const uint32_t size = static_cast<uint32_t>(ItemSize(dtype));
  const uint16_t bits = static_cast<uint16_t>(8 * size);
  switch (dtype) {
    case DataType::kInt8: case DataType::kInt16: case DataType::kInt32: case DataType::kInt64:
    case DataType::kUInt8: case DataType::kUInt16: case DataType::kUInt32: case DataType::kUInt64: {
      const bool is_signed = dtype == DataType::kInt8 || dtype == DataType::kInt16 || dtype == DataType::kInt32 ||
                             dtype == DataType::kInt64;
      PutU8(&b, 0x10);  // version 1, class 0 (fixed-point)
      PutU8(&b, is_signed ? 0x08 : 0x00);  // little-endian, zero padding, signedness
      PutU8(&b, 0);
      PutU8(&b, 0);
      PutU32(&b, size);
      PutU16(&b, 0);  // bit offset
      PutU16(&b, bits);
      return b;
    }
    case DataType::kFloat16: case DataType::kFloat32: case DataType::kFloat64: {
      // sign bit, exponent location/size, mantissa size, bias of IEEE 754 binary16/32/64.
      struct Ieee { uint8_t sign, exp_loc, exp_size, mant_size; uint32_t bias; };
      const Ieee f = dtype == DataType::kFloat16   ? Ieee{15, 10, 5, 10, 15}
                     : dtype == DataType::kFloat32 ? Ieee{31, 23, 8, 23, 127}
                                                   : Ieee{63, 52, 11, 52, 1023};
      PutU8(&b, 0x11);  // version 1, class 1 (floating-point)
      PutU8(&b, 0x20);  // little-endian, zero padding, mantissa normalization: implied msb
      PutU8(&b, f.sign);
      PutU8(&b, 0);
      PutU32(&b, size);
      PutU16(&b, 0);  // bit offset
      PutU16(&b, bits);
      PutU8(&b, f.exp_loc);
      PutU8(&b, f.exp_size);
      PutU8(&b, 0);  // mantissa location
      PutU8(&b, f.mant_size);
      PutU32(&b, f.bias);
      return b;
    }
    default:
      return Unsupported("HDF5 writer: data type " + std::string(DataTypeName(dtype)) +
                         " is not supported (integer and floating-point types only)");
  }
}

Bytes EncodeStringDatatype(size_t length) {
  Bytes b;
  PutU8(&b, 0x13);  // version 1, class 3 (string)
  PutU8(&b, 0x10);  // padding 0: null-terminated; character set 1: UTF-8
  PutU8(&b, 0);
  PutU8(&b, 0);
  PutU32(&b, static_cast<uint32_t>(length));
  return b;
}

Bytes EncodeFillValue(ByteView fill) {
  Bytes b;
  PutU8(&b, 2);  // version
  PutU8(&b, 3);  // space allocation time: incremental
  PutU8(&b, 2);  // fill value write time: if set
  PutU8(&b, 1);  // fill value defined
  PutU32(&b, static_cast<uint32_t>(fill.size()));
  PutBytes(&b, fill.data(), fill.size());
  return b;
}

Bytes EncodeChunkedLayout(uint64_t btree_address, const std::vector<uint64_t>& chunk_dims, uint32_t element_size) {
  Bytes b;
  PutU8(&b, 3);  // version
  PutU8(&b, 2);  // layout class: chunked
  PutU8(&b, static_cast<uint8_t>(chunk_dims.size() + 1));
  PutU64(&b, btree_address);
  for (uint64_t d : chunk_dims) PutU32(&b, static_cast<uint32_t>(d));
  PutU32(&b, element_size);
  return b;
}

Bytes EncodeFilterPipeline(const FilterPipeline& pipeline) {
  Bytes b;
  PutU8(&b, 1);  // version
  PutU8(&b, static_cast<uint8_t>(pipeline.size()));
  PutU16(&b, 0);
  PutU32(&b, 0);
  for (const Filter& f : pipeline) {
    const size_t name_bytes = f.name.empty() ? 0 : (f.name.size() + 1 + 7) / 8 * 8;
    PutU16(&b, f.id);
    PutU16(&b, static_cast<uint16_t>(name_bytes));
    PutU16(&b, f.flags);
    PutU16(&b, static_cast<uint16_t>(f.client_data.size()));
    if (name_bytes > 0) {
      PutBytes(&b, f.name.data(), f.name.size());
      b.resize(b.size() + name_bytes - f.name.size(), 0);
    }
    for (uint32_t v : f.client_data) PutU32(&b, v);
    if (f.client_data.size() % 2 != 0) PutU32(&b, 0);
  }
  return b;
}

Bytes EncodeSymbolTableMessage(uint64_t btree_address, uint64_t heap_address) {
  Bytes b;
  PutU64(&b, btree_address);
  PutU64(&b, heap_address);
  return b;
}

Bytes EncodeAttribute(std::string_view name, ByteView datatype, ByteView dataspace, ByteView data) {
  Bytes b;
  PutU8(&b, 1);  // version
  PutU8(&b, 0);
  PutU16(&b, static_cast<uint16_t>(name.size() + 1));
  PutU16(&b, static_cast<uint16_t>(datatype.size()));
  PutU16(&b, static_cast<uint16_t>(dataspace.size()));
  PutBytes(&b, name.data(), name.size());
  PutU8(&b, 0);
  PadTo8(&b);
  PutBytes(&b, datatype.data(), datatype.size());
  PadTo8(&b);
  PutBytes(&b, dataspace.data(), dataspace.size());
  PadTo8(&b);
  PutBytes(&b, data.data(), data.size());
  return b;
}

Bytes EncodeObjectHeaderV1(const std::vector<Message>& messages) {
  size_t body = 0;
  for (const Message& m : messages) body += 8 + (m.data.size() + 7) / 8 * 8;
  Bytes b;
  PutU8(&b, 1);  // version
  PutU8(&b, 0);
  PutU16(&b, static_cast<uint16_t>(messages.size()));
  PutU32(&b, 1);  // object reference count
  PutU32(&b, static_cast<uint32_t>(body));
  PutU32(&b, 0);  // padding: messages start 8-byte aligned
  for (const Message& m : messages) {
    const size_t padded = (m.data.size() + 7) / 8 * 8;
    PutU16(&b, static_cast<uint16_t>(m.type));
    PutU16(&b, static_cast<uint16_t>(padded));
    PutU8(&b, m.flags);
    PutU8(&b, 0);
    PutU16(&b, 0);
    PutBytes(&b, m.data.data(), m.data.size());
    b.resize(b.size() + padded - m.data.size(), 0);
  }
  return b;
}

size_t LocalHeapHeaderBytes() { return 32; }

Bytes EncodeLocalHeap(const std::vector<std::string>& names, uint64_t data_address, std::vector<uint64_t>* offsets,
                      Bytes* segment) {
  segment->assign(8, 0);  // offset 0: the empty string
  offsets->clear();
  for (const std::string& n : names) {
    offsets->push_back(segment->size());
    PutBytes(segment, n.data(), n.size());
    PutU8(segment, 0);
    PadTo8(segment);
  }
  Bytes b;
  PutSignature4(&b, "HEAP");
  PutU8(&b, 0);  // version
  PutU8(&b, 0);
  PutU16(&b, 0);
  PutU64(&b, segment->size());
  PutU64(&b, kHeapFreeNull);
  PutU64(&b, data_address);
  return b;
}

size_t SymbolNodeBytes() { return 8 + 2 * kGroupLeafK * kSymbolEntryBytes; }

Bytes EncodeSymbolNode(const std::vector<SymbolEntry>& entries) {
  Bytes b;
  PutSignature4(&b, "SNOD");
  PutU8(&b, 1);  // version
  PutU8(&b, 0);
  PutU16(&b, static_cast<uint16_t>(entries.size()));
  for (const SymbolEntry& e : entries) PutSymbolEntry(&b, e);
  PadToSize(&b, SymbolNodeBytes());
  return b;
}

size_t ChunkBTreeNodeBytes(int rank) {
  return 24 + 2 * kChunkBTreeK * 8 + (2 * kChunkBTreeK + 1) * ChunkKeyBytes(rank);
}

Bytes EncodeChunkBTreeNode(int level, uint64_t left, uint64_t right, const std::vector<ChunkKey>& keys,
                           const std::vector<uint64_t>& children, int rank) {
  Bytes b;
  b.reserve(ChunkBTreeNodeBytes(rank));
  PutSignature4(&b, "TREE");
  PutU8(&b, 1);  // node type: raw data chunks
  PutU8(&b, static_cast<uint8_t>(level));
  PutU16(&b, static_cast<uint16_t>(children.size()));
  PutU64(&b, left);
  PutU64(&b, right);
  for (size_t i = 0; i < keys.size(); ++i) {
    PutU32(&b, keys[i].chunk_bytes);
    PutU32(&b, keys[i].filter_mask);
    for (uint64_t o : keys[i].offsets) PutU64(&b, o);
    if (i < children.size()) PutU64(&b, children[i]);
  }
  PadToSize(&b, ChunkBTreeNodeBytes(rank));
  return b;
}

size_t GroupBTreeNodeBytes() { return 24 + 2 * kGroupInternalK * 8 + (2 * kGroupInternalK + 1) * 8; }

Bytes EncodeGroupBTreeNode(int level, uint64_t left, uint64_t right, const std::vector<uint64_t>& keys,
                           const std::vector<uint64_t>& children) {
  Bytes b;
  PutSignature4(&b, "TREE");
  PutU8(&b, 0);  // node type: group nodes
  PutU8(&b, static_cast<uint8_t>(level));
  PutU16(&b, static_cast<uint16_t>(children.size()));
  PutU64(&b, left);
  PutU64(&b, right);
  for (size_t i = 0; i < keys.size(); ++i) {
    PutU64(&b, keys[i]);
    if (i < children.size()) PutU64(&b, children[i]);
  }
  PadToSize(&b, GroupBTreeNodeBytes());
  return b;
}

}  // namespace tessera::hdf5
