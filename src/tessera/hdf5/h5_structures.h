// Byte encoders for the HDF5 structures tessera writes (HDF5 File Format Specification 3.0), for
// files with superblock version 0, 8-byte offsets and lengths:
//
//   superblock v0 | object header v1 + messages | local heap | group B-tree (type 0) | symbol
//   table node (SNOD) | chunk B-tree (type 1) node
//
// Pure functions from values to bytes; where things go in the file is h5_writer's business.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/core/status.h"
#include "tessera/hdf5/filters.h"
#include "tessera/hdf5/h5_format.h"

namespace tessera::hdf5 {

inline constexpr size_t kSuperblockV0Bytes = 96;
inline constexpr size_t kSymbolEntryBytes = 40;
// The B-tree and symbol table node sizes of superblock v0 (not stored in it; the library's
// defaults): group leaf K = 4 (8 entries per SNOD), group internal K = 16, chunk K = 32.
inline constexpr int kGroupLeafK = 4;
inline constexpr int kGroupInternalK = 16;
inline constexpr int kChunkBTreeK = 32;

// Object header message types.
enum class MessageType : uint16_t {
  kDataspace = 0x0001,
  kDatatype = 0x0003,
  kFillValue = 0x0005,
  kLayout = 0x0008,
  kFilterPipeline = 0x000B,
  kAttribute = 0x000C,
  kSymbolTable = 0x0011,
};

// Little-endian appends.
void PutU8(Bytes* b, uint8_t v);
void PutU16(Bytes* b, uint16_t v);
void PutU32(Bytes* b, uint32_t v);
void PutU64(Bytes* b, uint64_t v);
void PadTo8(Bytes* b);  // zero bytes up to a multiple of 8

// One symbol table entry (40 bytes). A group's entry caches its B-tree and heap (cache type 1).
struct SymbolEntry {
  uint64_t name_offset = 0;      // in the parent's local heap
  uint64_t header_address = 0;
  bool is_group = false;
  uint64_t btree_address = kUndefinedAddress;  // groups only
  uint64_t heap_address = kUndefinedAddress;   // groups only
};
void PutSymbolEntry(Bytes* b, const SymbolEntry& e);

Bytes EncodeSuperblockV0(uint64_t end_of_file, const SymbolEntry& root);

// Messages (their data only).
Bytes EncodeDataspace(const std::vector<uint64_t>& dims, const std::vector<uint64_t>& max_dims);  // rank 0: scalar
// Integer and float types, little-endian; kUnsupported for bool and complex.
Result<Bytes> EncodeNumericDatatype(DataType dtype);
Bytes EncodeStringDatatype(size_t length);  // fixed length, null-terminated, UTF-8
Bytes EncodeFillValue(ByteView fill);       // version 2, allocation incremental, written if set
Bytes EncodeChunkedLayout(uint64_t btree_address, const std::vector<uint64_t>& chunk_dims, uint32_t element_size);
Bytes EncodeFilterPipeline(const FilterPipeline& pipeline);  // version 1
Bytes EncodeSymbolTableMessage(uint64_t btree_address, uint64_t heap_address);
Bytes EncodeAttribute(std::string_view name, ByteView datatype, ByteView dataspace, ByteView data);

struct Message {
  MessageType type;
  Bytes data;
  uint8_t flags = 0;  // bit 0: constant
};
// Object header version 1: 16-byte prefix, then each message (8-byte header, data padded to 8).
Bytes EncodeObjectHeaderV1(const std::vector<Message>& messages);

// A local heap holding `names` (each null-terminated, padded to 8; offset 0 is the empty
// string). Returns the header ("HEAP", 32 bytes) for a data segment at `data_address`;
// `offsets` receives each name's offset; `segment` the data segment bytes.
Bytes EncodeLocalHeap(const std::vector<std::string>& names, uint64_t data_address, std::vector<uint64_t>* offsets,
                      Bytes* segment);
size_t LocalHeapHeaderBytes();

// A symbol table node with up to 2 * kGroupLeafK entries, padded to its full size.
Bytes EncodeSymbolNode(const std::vector<SymbolEntry>& entries);
size_t SymbolNodeBytes();

// Version-1 B-tree nodes, padded to the full size of 2K entries (the library reads whole nodes).
struct ChunkKey {
  uint32_t chunk_bytes = 0;
  uint32_t filter_mask = 0;
  std::vector<uint64_t> offsets;  // rank + 1 entries (element offsets; the last is 0)
};
// keys.size() == children.size() + 1.
Bytes EncodeChunkBTreeNode(int level, uint64_t left, uint64_t right, const std::vector<ChunkKey>& keys,
                           const std::vector<uint64_t>& children, int rank);
size_t ChunkBTreeNodeBytes(int rank);
// Group nodes: keys are heap offsets of names.
Bytes EncodeGroupBTreeNode(int level, uint64_t left, uint64_t right, const std::vector<uint64_t>& keys,
                           const std::vector<uint64_t>& children);
size_t GroupBTreeNodeBytes();

}  // namespace tessera::hdf5
