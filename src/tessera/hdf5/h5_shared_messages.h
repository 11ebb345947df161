// The shared object header message heap ("SOHM"): a file created with shared-message indexes
// (H5Pset_shared_mesg_nindexes / H5Pset_shared_mesg_index) keeps datatype, dataspace, fill value,
// filter pipeline and attribute messages once, in fractal heaps, and object headers carry only a
// heap ID in their place (flag bit 1, shared message encoding version 3, type 1).
//
// The superblock extension's "shared message table" message (0x000F) points at the table
// ("SMTB"): one entry per index, each naming the message types it shares (bit 1 << message type)
// and the fractal heap holding them. The index itself (an "SMLI" list or a v2 B-tree of hashes)
// only serves writers looking for duplicates; a reader needs the heap ID and the heap.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/hdf5/h5_fractal_heap.h"
#include "tessera/hdf5/h5_object_header.h"

namespace tessera::hdf5 {

inline constexpr uint16_t kMsgSharedMessageTable = 0x000F;

struct SharedMessageIndex {
  uint8_t index_type = 0;         // 0: list ("SMLI"), 1: v2 B-tree
  uint16_t message_types = 0;     // bit (1 << type) for each message type the index shares
  uint32_t min_message_size = 0;  // smaller messages stay in their object headers
  uint16_t list_cutoff = 0;       // most entries a list holds before it becomes a B-tree
  uint16_t btree_cutoff = 0;      // fewest entries a B-tree holds before it becomes a list
  uint16_t message_count = 0;
  uint64_t index_addr = kUndefinedAddress;
  uint64_t heap_addr = kUndefinedAddress;
};

struct SharedMessageTable {
  uint64_t addr = kUndefinedAddress;
  std::vector<SharedMessageIndex> indexes;
  std::vector<FractalHeap> heaps;  // indexes[i]'s heap (read when the file opens)
};

// Parses the shared message table message (0x000F of the superblock extension) and the "SMTB"
// table it points to, with each index's heap header.
Result<SharedMessageTable> ReadSharedMessageTable(const RawFile& file, const HeaderMessage& table_message);

// The bytes of the `message_type` message stored in the shared-message heap under `heap_id`.
Result<Bytes> ReadSharedHeapMessage(const RawFile& file, uint16_t message_type, ByteView heap_id, uint64_t at);

// Whether `m` is flagged shared and its body says "in the shared-message heap" (version 3, type 1).
bool IsInSharedHeap(const HeaderMessage& m);

// `m` itself when it is not in the shared-message heap; otherwise the message it stands for, with
// the heap's body and the shared flag cleared (so the usual parsers read it).
Result<HeaderMessage> ResolveSharedHeapMessage(const RawFile& file, const HeaderMessage& m);

}  // namespace tessera::hdf5
