#include "tessera/hdf5/chunk_btree.h"

#include <algorithm>

#include "tessera/hdf5/h5_structures.h"
#include "tessera/index/index.h"

namespace tessera::hdf5 {
namespace {

constexpr uint64_t kFanout = 2 * kChunkBTreeK;

ChunkKey KeyOf(const StoredChunk& c, const std::vector<uint64_t>& chunk_dims) {
  ChunkKey k;
  k.chunk_bytes = c.bytes;
  k.filter_mask = c.filter_mask;
  for (size_t d = 0; d < c.coords.size(); ++d) k.offsets.push_back(c.coords[d] * chunk_dims[d]);
  k.offsets.push_back(0);  // the element-size dimension
  return k;
}

// The key after a node's last chunk: one chunk further in every dimension.
ChunkKey KeyAfter(const StoredChunk& c, const std::vector<uint64_t>& chunk_dims) {
  ChunkKey k;
  for (size_t d = 0; d < c.coords.size(); ++d) k.offsets.push_back((c.coords[d] + 1) * chunk_dims[d]);
  k.offsets.push_back(0);
  return k;
}

}  // namespace

std::vector<uint64_t> ChunkBTreeLevelSizes(uint64_t chunk_count) {
  std::vector<uint64_t> sizes;
  uint64_t n = chunk_count;
  do {
    n = index::CeilDiv(n, kFanout);
    sizes.push_back(n);
  } while (n > 1);
  return sizes;
}

Result<uint64_t> WriteChunkBTree(std::vector<StoredChunk>* chunks, const std::vector<uint64_t>& chunk_dims,
                                 uint64_t base_address, const WriteAtFn& write_at, uint64_t* end) {
  auto by_coords = [](const StoredChunk& a, const StoredChunk& b) { return a.coords < b.coords; };
  if (!std::is_sorted(chunks->begin(), chunks->end(), by_coords)) std::sort(chunks->begin(), chunks->end(), by_coords);
  size_t i = 0;
  const NextChunkFn next = [&]() -> Result<const StoredChunk*> { return &(*chunks)[i++]; };
  return WriteChunkBTree(chunks->size(), next, chunk_dims, base_address, write_at, end);
}

Result<uint64_t> WriteChunkBTree(uint64_t count, const NextChunkFn& next, const std::vector<uint64_t>& chunk_dims,
                                 uint64_t base_address, const WriteAtFn& write_at, uint64_t* end) {
  *end = base_address;
  if (count == 0) return kUndefinedAddress;
  const int rank = static_cast<int>(chunk_dims.size());
  const uint64_t node_bytes = ChunkBTreeNodeBytes(rank);
  const std::vector<uint64_t> levels = ChunkBTreeLevelSizes(count);

  // Per node of the level just written: the first chunk under it (its left key), the last (the
  // key after it) and its address.
  std::vector<StoredChunk> first_chunk(levels[0]), last_chunk(levels[0]);
  std::vector<uint64_t> child_address(levels[0]);
  uint64_t level_base = base_address;
  // Leaves: the chunks themselves, read in order.
  for (uint64_t j = 0, read = 0; j < levels[0]; ++j) {
    const uint64_t n = std::min<uint64_t>(kFanout, count - read);
    std::vector<ChunkKey> keys;
    std::vector<uint64_t> addrs;
    for (uint64_t c = 0; c < n; ++c, ++read) {
      TESSERA_ASSIGN_OR_RETURN(const StoredChunk* chunk, next());
      keys.push_back(KeyOf(*chunk, chunk_dims));
      addrs.push_back(chunk->address);
      if (c == 0) first_chunk[j] = *chunk;
      if (c + 1 == n) last_chunk[j] = *chunk;
    }
    keys.push_back(KeyAfter(last_chunk[j], chunk_dims));
    const uint64_t address = level_base + j * node_bytes;
    const uint64_t left = j > 0 ? address - node_bytes : kUndefinedAddress;
    const uint64_t right = j + 1 < levels[0] ? address + node_bytes : kUndefinedAddress;
    TESSERA_RETURN_IF_ERROR(write_at(address, EncodeChunkBTreeNode(0, left, right, keys, addrs, rank)));
    child_address[j] = address;
  }
  level_base += levels[0] * node_bytes;
  for (size_t level = 1; level < levels.size(); ++level) {
    const uint64_t nodes = levels[level];
    const size_t children = first_chunk.size();
    std::vector<StoredChunk> node_first(nodes), node_last(nodes);
    std::vector<uint64_t> node_address(nodes);
    for (uint64_t j = 0; j < nodes; ++j) {
      const size_t lo = j * kFanout, hi = std::min<size_t>(children, lo + kFanout);
      std::vector<ChunkKey> keys;
      std::vector<uint64_t> addrs;
      for (size_t c = lo; c < hi; ++c) {
        keys.push_back(KeyOf(first_chunk[c], chunk_dims));
        addrs.push_back(child_address[c]);
      }
      keys.push_back(KeyAfter(last_chunk[hi - 1], chunk_dims));
      const uint64_t address = level_base + j * node_bytes;
      const uint64_t left = j > 0 ? address - node_bytes : kUndefinedAddress;
      const uint64_t right = j + 1 < nodes ? address + node_bytes : kUndefinedAddress;
      const Bytes node = EncodeChunkBTreeNode(static_cast<int>(level), left, right, keys, addrs, rank);
      TESSERA_RETURN_IF_ERROR(write_at(address, node));
      node_first[j] = std::move(first_chunk[lo]);
      node_last[j] = std::move(last_chunk[hi - 1]);
      node_address[j] = address;
    }
    first_chunk = std::move(node_first);
    last_chunk = std::move(node_last);
    child_address = std::move(node_address);
    level_base += nodes * node_bytes;
  }
  *end = level_base;
  return child_address[0];
}

}  // namespace tessera::hdf5
