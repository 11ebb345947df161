#include "tessera/zarr/zarr_sink.h"

#include <optional>
#include <vector>

#include "tessera/codec/sharding_codec.h"

namespace tessera::zarr {

Result<std::unique_ptr<ZarrShardSink>> ZarrShardSink::Create(std::shared_ptr<Store> store, std::string path,
                                                             zarr::ArrayMetadata metadata) {
  metadata.shape[0] = 0;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<zarr::ZarrArray> array, zarr::ZarrArray::Create(store, path, metadata));
  auto sink = std::unique_ptr<ZarrShardSink>(new ZarrShardSink(std::move(store), std::move(array), std::move(path)));
  sink->published_rows_ = 0;
  return sink;
}

Result<std::unique_ptr<ZarrShardSink>> ZarrShardSink::Create(std::shared_ptr<Store> store, std::string path,
                                                             zarr::ArrayMetadata metadata, CodecChain codecs) {
  metadata.shape[0] = 0;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<zarr::ZarrArray> array,
                           zarr::ZarrArray::Create(store, path, std::move(metadata), std::move(codecs)));
  auto sink = std::unique_ptr<ZarrShardSink>(new ZarrShardSink(std::move(store), std::move(array), std::move(path)));
  sink->published_rows_ = 0;
  return sink;
}

std::unique_ptr<ZarrShardSink> ZarrShardSink::Attach(std::shared_ptr<Store> store, std::string path,
                                                     zarr::ArrayMetadata metadata, CodecChain codecs) {
  std::unique_ptr<zarr::ZarrArray> array = zarr::ZarrArray::Attach(store, path, std::move(metadata), std::move(codecs));
  return std::unique_ptr<ZarrShardSink>(new ZarrShardSink(std::move(store), std::move(array), std::move(path)));
}

Status ZarrShardSink::WriteShard(const stream::EncodedShard& shard) {
  const std::string key = array_->ChunkKey(std::vector<int64_t>(shard.coords.begin(), shard.coords.end()));
  const ShardingCodec* sharding = array_->sharding();
  const size_t n = shard.slots.size();
  std::vector<std::optional<ByteView>> slots(n);  // the present slots' encodings
  bool any = false;
  for (size_t k = 0; k < n; ++k) {
    if (!shard.slots[k].present) continue;
    slots[k] = shard.slots[k].encoding();
    any = true;
  }
  if (!any) return store_->Erase(key);
  if (!sharding) {  // unsharded: the one slot is the chunk
    std::vector<ByteView> chunk;
    for (const auto& slot : slots)
      if (slot) chunk.push_back(*slot);
    return store_->SetParts(key, chunk);
  }
  // Scatter-gather: the store writes the index and the slots' bytes where they are.
  TESSERA_ASSIGN_OR_RETURN(const ShardLayout layout, sharding->AssembleShard(slots));
  return store_->SetParts(key, layout.parts());
}

Status ZarrShardSink::PublishRows(int64_t rows) {
  std::lock_guard<std::mutex> lock(publish_mu_);
  if (rows == published_rows_) return Status::Ok();
  array_->SetExtent0(rows);
  TESSERA_RETURN_IF_ERROR(array_->PublishMetadata());
  published_rows_ = rows;
  return Status::Ok();
}

Status ZarrShardSink::PublishAttributes(nlohmann::json attributes) {
  std::lock_guard<std::mutex> lock(publish_mu_);
  array_->SetAttributes(std::move(attributes));
  return array_->PublishMetadata();
}

Status ZarrShardSink::RemoveMetadata() { return store_->Erase(path_.empty() ? "zarr.json" : path_ + "/zarr.json"); }

}  // namespace tessera::zarr
