// A Zarr v3 array on a store: open/create, hyperslab reads, region writes.
//
// Reads go through the generic hyperslab engine. When the array's codecs are exactly one
// `sharding_indexed` codec, the read grid is the inner chunk grid: a read fetches each touched
// shard's index (one byte-range request, cached) and then only the byte ranges of the inner
// chunks it needs. Otherwise the read grid is the chunk grid and whole chunks are decoded.
//
// Writes go through the generic region-write engine (write/region_write.h) over a
// ZarrRegionTarget (zarr_region_target.h): fully covered chunks (or inner chunks) are replaced,
// partly covered ones read, modified and written back; inner chunks of a rewritten shard that lie
// outside the region keep their encoded bytes. Chunks holding only the fill value are not stored
// (erased / empty index entries), as zarr-python does by default.
#pragma once

#include <memory>
#include <future>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/codec/codec.h"
#include "tessera/codec/sharding_codec.h"
#include "tessera/index/chunk_grid.h"
#include "tessera/read/selection_read.h"
#include "tessera/store/store.h"
#include "tessera/zarr/metadata.h"

namespace tessera::zarr {

class ZarrArray final : public ChunkSource {
 public:
  // Opens the array whose zarr.json is at `path` + "/zarr.json" ("" = the store root).
  static Result<std::unique_ptr<ZarrArray>> Open(std::shared_ptr<Store> store, std::string path = "");
  // Opens it from its zarr.json `document`, already read (and parsed) by the caller.
  static Result<std::unique_ptr<ZarrArray>> Open(std::shared_ptr<Store> store, std::string path,
                                                 const nlohmann::json& document);
  // Writes zarr.json (replacing any array or group there) and returns the open array.
  static Result<std::unique_ptr<ZarrArray>> Create(std::shared_ptr<Store> store, std::string path,
                                                   ArrayMetadata metadata);
  // Likewise, with `codecs` the caller's parse of metadata.codecs (a stream's one chain; not
  // parsed again).
  static Result<std::unique_ptr<ZarrArray>> Create(std::shared_ptr<Store> store, std::string path,
                                                   ArrayMetadata metadata, CodecChain codecs);
  // The existing array `metadata` describes, with `codecs` the caller's parse of metadata.codecs;
  // reads nothing from the store.
  static std::unique_ptr<ZarrArray> Attach(std::shared_ptr<Store> store, std::string path, ArrayMetadata metadata,
                                           CodecChain codecs);

  const ArrayMetadata& metadata() const { return metadata_; }
  const CodecChain& codecs() const { return codecs_; }
  // The sharding codec when the array is sharded in the partial-read layout, else null.
  const ShardingCodec* sharding() const { return sharding_; }
  // Shard shape if sharded, else empty.
  std::vector<int64_t> shard_shape() const;

  // ChunkSource
  const std::vector<int64_t>& shape() const override { return metadata_.shape; }
  int io_concurrency() const override { return store_->io_concurrency(); }
  const std::vector<int64_t>& read_chunk_shape() const override { return read_chunk_shape_; }
  DataType dtype() const override { return metadata_.dtype; }
  const FillValue& fill_value() const override { return metadata_.fill_value; }
  Result<bool> ReadChunk(std::span<const int64_t> coords, Bytes* out) const override;
  Result<bool> ReadChunkPrefix(std::span<const int64_t> coords, size_t prefix_bytes, Bytes* out) const override;
  // The inner chunk's bytes from its shard's index (sharded), else the chunk's object.
  Result<std::optional<Bytes>> ReadEncodedChunk(std::span<const int64_t> coords, Bytes* decoded) const override;
  // Sharded arrays on object stores: the inner chunks a read needs from one shard are fetched in
  // coalesced range requests (see coalesced_read.h).
  std::unique_ptr<ChunkBatch> BeginBatch(std::span<const std::vector<int64_t>> chunks) const override;

  // Reads a selection into `out` (selection.NumElements() elements, C order).
  Status Read(const Hyperslab& selection, uint8_t* out, const ReadOptions& options = {}) const;

  // Writes the C-order block `data` (prod(extent) elements) at [origin, origin + extent), through
  // the region-write engine (zarr_region_target.h). The region must lie inside the array's shape.
  Status WriteRegion(const std::vector<int64_t>& origin, const std::vector<int64_t>& extent,
                     ByteView data, int threads = 0);

  // Changes the shape in memory and rewrites zarr.json; nothing else (ZarrRegionTarget::Resize
  // first clears and removes the chunks outside the new shape).
  Status Resize(const std::vector<int64_t>& new_shape);
  // Changes only the extent of dimension 0 in memory (for appends: write the data, then
  // PublishMetadata, so readers never see a shape whose data is not there yet).
  void SetExtent0(int64_t extent);
  // Rewrites zarr.json from the in-memory metadata.
  Status PublishMetadata();
  // Replaces the attributes in memory (published by the next PublishMetadata).
  void SetAttributes(nlohmann::json attributes) { metadata_.attributes = std::move(attributes); }

  // The store key of grid chunk (or shard) `coords`.
  std::string ChunkKey(const std::vector<int64_t>& coords) const;
  const Store& store() const { return *store_; }
  Store& mutable_store() const { return *store_; }
  // The spec of one grid chunk (a whole shard when sharded).
  const ChunkSpec& chunk_spec() const { return chunk_spec_; }
  // Inner chunks per shard along each dimension (sharded), else empty.
  const std::vector<int64_t>& chunks_per_shard() const { return chunks_per_shard_; }
  // Drops the cached index of shard `key` (after a rewrite of it), so later reads fetch it again.
  void ForgetShardIndex(const std::string& key) const;

 private:
  ZarrArray(std::shared_ptr<Store> store, std::string path, ArrayMetadata metadata, CodecChain codecs);

  // A shard's index (null when the shard does not exist), read once: threads that want an index
  // being read wait for that read instead of sending their own.
  using IndexResult = Result<std::shared_ptr<const ShardIndex>>;
  struct CachedIndex {
    std::shared_future<IndexResult> index;
  };
  IndexResult GetShardIndex(const std::string& key) const;
  // Where inner chunk `coords` (read-grid coordinates) lies: its shard's key, its slot in the
  // shard index and its position within the shard.
  struct InnerChunk {
    std::string key;
    size_t slot = 0;
    int64_t within[kMaxRank] = {};
  };
  InnerChunk LocateInnerChunk(std::span<const int64_t> coords) const;
  // The encoded bytes of `c` where `index` (null: no shard) places them; nullopt when it has none.
  Result<std::optional<Bytes>> ReadInnerBytes(const InnerChunk& c, const ShardIndex* index) const;
  // Decodes the unsharded chunk object `key` (its bytes `data`), an error naming it.
  Status DecodeChunkObject(const std::string& key, ByteView data, size_t prefix_bytes, Bytes* out) const;
  IndexResult ReadShardIndex(const std::string& key) const;
  // Remembers `index` for `key` (index_mu_ held); the cache is bounded.
  void CacheIndexLocked(const std::string& key, std::shared_future<IndexResult> index) const;
  size_t ChunksPerShard() const;  // inner chunks per shard
  // The read grid over the current shape: inner chunks, chunks_per_shard_ of them per shard.
  index::ChunkGrid ReadGrid() const;
  uint64_t IndexBytes() const;    // the encoded shard index
  Status ShardTooShort(const std::string& key, uint64_t size) const;
  IndexResult DecodeShardIndex(const std::string& key, ByteView index_bytes, uint64_t shard_size) const;
  // The index of a shard read whole (`shard`: all its bytes), which is cached as if read alone.
  IndexResult IndexFromShard(const std::string& key, ByteView shard) const;
  // "shard s3://b/a/c/0/0: inner chunk (1, 0) at bytes 100..200"
  std::string InnerChunkContext(const std::string& key, const int64_t* within, uint64_t offset, uint64_t nbytes) const;
  Status DecodeInnerChunk(const std::string& key, const int64_t* within, uint64_t offset, ByteView encoded,
                          size_t prefix_bytes, Bytes* out) const;
  friend class CoalescedShardBatch;

  // Whether two indexes of one shard (null: no shard) hold the same entry for `slot`.
  static bool SameEntry(const ShardIndex* a, const ShardIndex* b, size_t slot);

  std::shared_ptr<Store> store_;
  std::string path_;
  ArrayMetadata metadata_;
  CodecChain codecs_;
  ChunkSpec chunk_spec_;                  // one grid chunk (shard)
  const ShardingCodec* sharding_ = nullptr;
  std::vector<int64_t> chunks_per_shard_;
  std::vector<int64_t> read_chunk_shape_;

  mutable std::mutex index_mu_;
  mutable std::unordered_map<std::string, CachedIndex> index_cache_;
};

// Writes a group's zarr.json at `path`.
Status CreateGroup(Store& store, const std::string& path, const nlohmann::json& attributes);

}  // namespace tessera::zarr
