// One scale of a Neuroglancer precomputed volume as a region-write target (write/region_write.h):
// the engine writes any region of it, read-modify-write per stored object.
//
//   unsharded:  an object is one chunk file, "x0-x1_y0-y1_z0-z1" (edge chunks truncated to the
//               volume, so the name holds the volume's end); a "<name>.gz" sibling is read and
//               replaced by the plain name on write
//   sharded:    an object is a shard file holding the chunks whose compressed Morton code (chunk id)
//               hashes to it: an aligned box of chunks with the identity hash, chunks scattered over
//               the grid with murmurhash3_x86_128. A shard is read whole once, its shard index and
//               every minishard index decoded; it is re-assembled whole with the kept chunks'
//               stored bytes (never re-encoded) and the updates
//
// Chunks are the engine's full chunk boxes, C order [c,] z, y, x (= Neuroglancer's [x, y, z, c]
// Fortran order), padded with 0 past the volume's edge; the target crops when encoding and pads when
// decoding. A chunk left all 0 is removed, as tessera's stream leaves such chunks unstored (they read
// as 0). Writes are conditional on the generation read where the store keeps generations; on a
// store without them they are plain atomic writes.
//
// Resize: unsharded volumes of one scale only (the other scales would no longer match): the edge
// chunks whose names change are rewritten under their new names, the info published, then the old
// names removed. Sharded volumes only while every dimension keeps its number of Morton bits (the
// chunk ids, hence the shards, depend on them): the shards holding edge chunks are rewritten, then
// the info; a reader in between may find an edge chunk of the other size (kCorruptData).
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/precomputed/info.h"
#include "tessera/store/store.h"
#include "tessera/write/region_write.h"

namespace tessera::precomputed {

class PrecomputedRegionTarget final : public RegionTarget {
 public:
  // Reads the volume's info and opens scale `scale_index` for writing. kUnsupported for encodings
  // tessera does not write (jpeg), naming it.
  static Result<std::unique_ptr<PrecomputedRegionTarget>> Open(std::shared_ptr<Store> store, int scale_index = 0);

  const VolumeInfo& info() const { return info_; }
  const ScaleInfo& scale() const { return info_.scales[static_cast<size_t>(scale_index_)]; }

  // RegionTarget
  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& chunk_shape() const override { return chunk_shape_; }
  DataType dtype() const override { return info_.dtype; }
  const FillValue& fill_value() const override { return fill_; }
  bool drops_fill_chunks() const override { return true; }
  std::string ObjectOf(std::span<const int64_t> chunk) const override;
  int64_t ChunksInObject(const std::string& key) const override;
  Result<std::unique_ptr<StoredObject>> Read(const std::string& key) const override;
  Result<bool> DecodeChunk(const StoredObject& object, std::span<const int64_t> chunk, Bytes* out) const override;
  Result<Bytes> EncodeChunk(std::span<const int64_t> chunk, ByteView decoded) const override;
  Result<bool> Write(const std::string& key, const StoredObject* base, std::span<const ChunkUpdate> updates) override;
  Status Resize(const std::vector<int64_t>& shape) override;
  int io_concurrency() const override { return store_->io_concurrency(); }

  // Sharded: the chunks of the volume in shard file `key`, counted one by one over the whole grid
  // (what ChunksInObject answers from the Morton box where the identity hash allows, and for
  // grids of up to 2^22 chunks otherwise; beyond, it answers the grid's chunk count: an
  // over-count, so such a shard is always read before it is rewritten). For tests.
  int64_t CountChunksInShardByScan(const std::string& key) const;

 private:
  PrecomputedRegionTarget(std::shared_ptr<Store> store, VolumeInfo info, int scale_index);
  void SetGeometry();  // shape_, chunk_shape_, grid_xyz_ from the scale's size

  // Grid cell (x, y, z) of engine chunk coordinates ([c,] z, y, x).
  std::array<int64_t, 3> CellOf(std::span<const int64_t> chunk) const;
  std::string ChunkKey(const index::ChunkGrid& grid_xyz, const std::array<int64_t, 3>& g) const;
  std::string ShardKey(uint64_t shard) const;
  // The shard number of shard file `key`, or nullopt when `key` names none of this scale.
  std::optional<uint64_t> ShardNumberOf(const std::string& key) const;
  uint64_t ChunkId(const std::array<int64_t, 3>& g) const;

  // A chunk's stored bytes (after the shard's data encoding is undone) -> the full, 0-padded chunk
  // box; the full box -> its `extent` corner (what is stored); that corner -> the stored bytes
  // (chunk encoding, then the shard's data encoding).
  Result<Bytes> DecodeStored(Bytes stored, const std::array<int64_t, 3>& extent, const std::string& where) const;
  Bytes Crop(ByteView full, const std::array<int64_t, 3>& extent) const;
  Result<Bytes> EncodeCropped(Bytes cropped, const std::array<int64_t, 3>& extent) const;

  // Stores `parts` as `key`, or removes it (parts empty), conditionally on `base` when it was read
  // with a generation. False on a conflict.
  Result<bool> StoreObject(const std::string& key, const StoredObject* base, std::span<const ByteView> parts);

  Status ResizeUnsharded(const ScaleInfo& resized);
  Status ResizeSharded(const ScaleInfo& resized);
  // Publishes the info with this scale's size `size_xyz`, then holds it as the volume's info.
  Status PublishSize(const std::array<int64_t, 3>& size_xyz);

  std::shared_ptr<Store> store_;
  VolumeInfo info_;
  int scale_index_ = 0;
  int64_t channels_ = 1;
  int64_t item_ = 1;
  std::vector<int64_t> shape_, chunk_shape_;
  index::ChunkGrid grid_xyz_;
  FillValue fill_;

  // Sharded, where the shard's chunks are not one Morton box: shard number -> chunk count, built
  // on first use by visiting every chunk.
  mutable std::mutex counts_mu_;
  mutable std::optional<std::unordered_map<uint64_t, int64_t>> shard_counts_;
};

}  // namespace tessera::precomputed
