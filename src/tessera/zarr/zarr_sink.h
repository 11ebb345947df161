// The Zarr v3 shard sink: each shard (or, unsharded, each chunk) is one object written atomically;
// zarr.json is written at creation with dimension 0 at 0 and republished as rows complete, so a
// reader sees a consistent, growing array while the stream runs.
#pragma once

#include <memory>
#include <mutex>

#include "tessera/store/store.h"
#include "tessera/stream/shard_sink.h"
#include "tessera/zarr/array.h"

namespace tessera::zarr {

class ZarrShardSink final : public stream::ShardSink {
 public:
  // Creates the array at `path` of `store` from `metadata` (its shape[0] is the declared extent,
  // 0 when unbounded); publishes zarr.json with shape[0] = 0.
  static Result<std::unique_ptr<ZarrShardSink>> Create(std::shared_ptr<Store> store, std::string path,
                                                       zarr::ArrayMetadata metadata);
  // Likewise with `codecs`, the stream's parse of metadata.codecs (not parsed again).
  static Result<std::unique_ptr<ZarrShardSink>> Create(std::shared_ptr<Store> store, std::string path,
                                                       zarr::ArrayMetadata metadata, CodecChain codecs);

  // The sink of an array that exists (its zarr.json is `metadata`, whose codecs the stream parsed
  // as `codecs`): stores shards, never metadata.
  static std::unique_ptr<ZarrShardSink> Attach(std::shared_ptr<Store> store, std::string path,
                                               zarr::ArrayMetadata metadata, CodecChain codecs);

  // Sharded: one object per shard, the present chunks back to back in slot order plus the
  // shard index (at the start or end, as the sharding codec says). Unsharded: the shard's one
  // slot is the chunk object. A shard with no present slot erases the object.
  Status WriteShard(const stream::EncodedShard& shard) override;
  // Sharded, on a store that writes in place (Store::writes_in_place): the shard's temporary file
  // (Store::OpenInPlaceFile), each chunk written at its offset as it comes (ShardPlacement), the
  // index at Finish; byte for byte what WriteShard stores. Otherwise null (whole shards only).
  Result<std::unique_ptr<stream::ShardWriter>> BeginShard(std::span<const int64_t> coords) override;
  Status PublishRows(int64_t rows) override;
  // Replaces the array's attributes and republishes zarr.json (with the rows published so far).
  // Safe beside the writer's threads publishing rows.
  Status PublishAttributes(nlohmann::json attributes);
  // After a failed or aborted stream: nothing to remove. What it stored is what a crash at that
  // moment leaves: zarr.json with the rows published so far, and whole shards (those beyond the
  // published rows lie outside the array's shape until a stream writes them again).
  Status DiscardUnpublished() { return Status::Ok(); }
  // Removes zarr.json: for a stream that never opened (its writer could not be created), so a
  // failed CreateStream leaves no array behind.
  Status RemoveMetadata();

  const zarr::ZarrArray& array() const { return *array_; }

 private:
  ZarrShardSink(std::shared_ptr<Store> store, std::unique_ptr<zarr::ZarrArray> array, std::string path)
      : store_(std::move(store)), array_(std::move(array)), path_(std::move(path)) {}

  std::shared_ptr<Store> store_;
  std::unique_ptr<zarr::ZarrArray> array_;
  std::string path_;
  std::mutex publish_mu_;  // PublishRows (a writer's thread) and PublishAttributes (the producer)
  int64_t published_rows_ = -1;
};

}  // namespace tessera::zarr
