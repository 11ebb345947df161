// The Neuroglancer precomputed volume driver (read side): one scale of a volume on a store,
// presented to the generic hyperslab engine in tessera's C order:
//
//   shape [z, y, x]            when num_channels == 1
//   shape [c, z, y, x]         otherwise (the channel dimension is one chunk)
//
// Index 0 of each spatial dimension is the scale's voxel_offset. Chunks are read from the
// unsharded layout (one file per chunk, "x0-x1_y0-y1_z0-z1", edge chunks truncated; a ".gz"
// sibling is accepted) or the sharded one (shard index entry, minishard index, chunk bytes:
// three byte-range reads, the minishard index cached). A chunk that is not stored reads as 0.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tessera/precomputed/info.h"
#include "tessera/precomputed/shard_format.h"
#include "tessera/read/selection_read.h"
#include "tessera/store/store.h"

namespace tessera::precomputed {

class PrecomputedVolume final : public ChunkSource {
 public:
  // Reads and validates `info` at the store root and opens scale `scale_index`.
  static Result<std::unique_ptr<PrecomputedVolume>> Open(std::shared_ptr<Store> store, int scale_index = 0);

  const VolumeInfo& info() const { return info_; }
  const ScaleInfo& scale() const { return info_.scales[scale_index_]; }

  // ChunkSource
  const std::vector<int64_t>& shape() const override { return shape_; }
  int io_concurrency() const override { return store_->io_concurrency(); }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_shape_; }
  DataType dtype() const override { return info_.dtype; }
  const FillValue& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t> coords, Bytes* out) const override;

  // The unsharded file name of grid cell g (x, y, z).
  std::string UnshardedName(const std::array<int64_t, 3>& g) const;
  // The chunk id (compressed Morton code) of grid cell g (x, y, z).
  uint64_t ChunkId(const std::array<int64_t, 3>& g) const;

 private:
  PrecomputedVolume(std::shared_ptr<Store> store, VolumeInfo info, int scale_index);

  // The stored (encoded) bytes of grid cell g, nullopt when absent.
  Result<std::optional<Bytes>> ReadStoredChunk(const std::array<int64_t, 3>& g, std::string* where) const;
  Result<std::optional<Bytes>> ReadShardedChunk(const std::array<int64_t, 3>& g, std::string* where) const;
  Result<std::shared_ptr<const std::vector<ChunkEntry>>> MinishardIndex(const std::string& key, uint64_t minishard,
                                                                       uint64_t file_size) const;

  std::shared_ptr<Store> store_;
  VolumeInfo info_;
  int scale_index_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> chunk_shape_;
  index::ChunkGrid grid_xyz_;
  FillValue fill_;

  mutable std::mutex cache_mu_;
  mutable std::map<std::pair<std::string, uint64_t>, std::shared_ptr<const std::vector<ChunkEntry>>> minishard_cache_;
};

}  // namespace tessera::precomputed
