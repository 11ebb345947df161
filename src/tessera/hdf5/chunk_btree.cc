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
  *end = base_address;
  if (chunks->empty()) return kUndefinedAddress;
  auto by_coords = [](const StoredChunk& a, const StoredChunk& b) { return a.coords < b.coords; };
  if (!std::is_sorted(chunks->begin(), chunks->end(), by_coords)) std::sort(chunks->begin(), chunks->end(), by_coords);
  const int rank = static_cast<int>(chunk_dims.size());
  const uint64_t node_bytes = ChunkBTreeNodeBytes(rank);
  const std::vector<uint64_t> levels = ChunkBTreeLevelSizes(chunks->size());

  // Per level: the first chunk under each node (its left key) and the key after its last chunk.
  // Level -1 is the chunks themselves.
  std::vector<size_t> first_chunk(chunks->size()), last_chunk(chunks->size());
  std::vector<uint64_t> child_address(chunks->size());
  for (size_t i = 0; i < chunks->size(); ++i) {
    first_chunk[i] = last_chunk[i] = i;
    child_address[i] = (*chunks)[i].address;
  }
  uint64_t level_base = base_address;
  for (size_t level = 0; level < levels.size(); ++level) {
    const uint64_t nodes = levels[level];
    const size_t children = first_chunk.size();
    std::vector<size_t> node_first(nodes), node_last(nodes);
    std::vector<uint64_t> node_address(nodes);
    for (uint64_t j = 0; j < nodes; ++j) {
      const size_t lo = j * kFanout, hi = std::min<size_t>(children, lo + kFanout);
      std::vector<ChunkKey> keys;
      std::vector<uint64_t> addrs;
      for (size_t c = lo; c < hi; ++c) {
        keys.push_back(KeyOf((*chunks)[first_chunk[c]], chunk_dims));
        addrs.push_back(child_address[c]);
      }
      keys.push_back(KeyAfter((*chunks)[last_chunk[hi - 1]], chunk_dims));
      const uint64_t address = level_base + j * node_bytes;
      const uint64_t left = j > 0 ? address - node_bytes : kUndefinedAddress;
      const uint64_t right = j + 1 < nodes ? address + node_bytes : kUndefinedAddress;
      const Bytes node = EncodeChunkBTreeNode(static_cast<int>(level), left, right, keys, addrs, rank);
      TESSERA_RETURN_IF_ERROR(write_at(address, node));
      node_first[j] = first_chunk[lo];
      node_last[j] = last_chunk[hi - 1];
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
