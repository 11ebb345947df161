// Chunk indexes: where each stored chunk of a chunked dataset lives. Supported: the version-1
// B-tree (layout v1-v3), and for layout v4 single chunk, implicit, fixed array (paged or not),
// extensible array and version-2 B-tree (record types 10 and 11).
//
// The whole index is walked once (index nodes only, never chunk data) into a map keyed by the
// chunk's linear position in the dataset's current chunk grid. Walks are bounded: node levels
// must decrease, a node seen twice is a loop, every address and length is checked against the
// file size before it is read.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/core/limits.h"
#include "tessera/hdf5/h5_dataset_messages.h"
#include "tessera/index/chunk_grid.h"

namespace tessera::hdf5 {

struct ChunkRecord {
  uint64_t addr = kUndefinedAddress;
  uint64_t size = 0;         // stored bytes
  uint32_t filter_mask = 0;  // bit i set: filter i was skipped for this chunk
};

struct ChunkGeometry {
  std::vector<uint64_t> dims;
  std::vector<uint64_t> max_dims;
  std::vector<uint64_t> chunk_dims;
  uint64_t chunk_bytes = 0;  // one whole chunk, unfiltered
  bool filtered = false;     // the dataset has a filter pipeline
};

using ChunkMap = std::unordered_map<uint64_t, ChunkRecord>;

// A dataset's chunk grid: HDF5 extents are unsigned 64-bit (a maximum dimension may exceed 2^63)
// and a dataspace has up to 32 dimensions. ChunkMap keys are its Ravel of the chunk coordinates.
using H5ChunkGrid = index::BasicChunkGrid<uint64_t, kMaxHdf5Rank>;

// Loads the index of a chunked dataset; `what` names the dataset in errors.
Result<ChunkMap> LoadChunkIndex(const RawFile& file, const Layout& layout, const ChunkGeometry& geometry,
                                const std::string& what);

}  // namespace tessera::hdf5
