// The version-1 B-tree (node type 1) that indexes a chunked dataset's chunks, built bottom-up
// from the complete, sorted list of chunks: leaves hold up to 2K = 64 chunks, each level above
// holds up to 64 children, until one root remains. Nodes of a level are written consecutively,
// so sibling addresses are known before a node is written. The chunks are read once, in order;
// what is kept is the first and last chunk under each leaf (1/32 of the chunks), so a caller
// that streams them from disk (ChunkSource) indexes any number in little memory.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera::hdf5 {

struct StoredChunk {
  std::vector<uint64_t> coords;  // chunk grid coordinates (rank entries)
  uint64_t address = 0;
  uint32_t bytes = 0;            // stored (filtered) size
  uint32_t filter_mask = 0;
};

// Writes `bytes` at file address `address`.
using WriteAtFn = std::function<Status(uint64_t address, ByteView bytes)>;

// Sorts `chunks` into the B-tree's order (lexicographic over coordinates) and writes the tree's
// nodes from `base_address` on. Returns the root's address (kUndefinedAddress when there are no
// chunks) and sets *end to the address after the last node.
Result<uint64_t> WriteChunkBTree(std::vector<StoredChunk>* chunks, const std::vector<uint64_t>& chunk_dims,
                                 uint64_t base_address, const WriteAtFn& write_at, uint64_t* end);

// The next chunk of a list already in the B-tree's order (each call one further; called exactly
// `count` times). The pointee stays valid until the next call.
using NextChunkFn = std::function<Result<const StoredChunk*>()>;
// The same tree over `count` chunks that `next` yields in order: the same bytes as the vector
// form over the same chunks.
Result<uint64_t> WriteChunkBTree(uint64_t count, const NextChunkFn& next, const std::vector<uint64_t>& chunk_dims,
                                 uint64_t base_address, const WriteAtFn& write_at, uint64_t* end);

// How many nodes a tree over `chunk_count` chunks has at each level (leaves first).
std::vector<uint64_t> ChunkBTreeLevelSizes(uint64_t chunk_count);

}  // namespace tessera::hdf5
