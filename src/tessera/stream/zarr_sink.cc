#include "tessera/stream/zarr_sink.h"

namespace tessera::stream {

Result<std::unique_ptr<ZarrShardSink>> ZarrShardSink::Create(std::shared_ptr<Store> store, std::string path,
                                                             zarr::ArrayMetadata metadata) {
  metadata.shape[0] = 0;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<zarr::ZarrArray> array, zarr::ZarrArray::Create(store, path, metadata));
  auto sink = std::unique_ptr<ZarrShardSink>(new ZarrShardSink(std::move(store), std::move(array), std::move(path)));
  sink->published_rows_ = 0;
  return sink;
}

Status ZarrShardSink::WriteShard(const std::vector<int64_t>& shard_coords, std::span<const ByteView> chunks,
                                 const ShardIndex& index) {
  const std::string key = array_->ChunkKey(shard_coords);
  if (chunks.empty()) return store_->Erase(key);
  const ShardingCodec* sharding = array_->sharding();
  if (!sharding) {
    // Unsharded: the "shard" is exactly one chunk.
    return store_->SetParts(key, chunks);
  }
  ShardIndex shifted = index;
  Bytes encoded_index;
  const size_t n = index.num_chunks();
  if (sharding->index_location() == IndexLocation::kStart) {
    const uint64_t base = sharding->IndexEncodedSize(n);
    for (size_t i = 0; i < n; ++i)
      if (!shifted.IsEmpty(i)) shifted.entries[2 * i] += base;
  }
  TESSERA_RETURN_IF_ERROR(sharding->EncodeIndex(shifted, &encoded_index));
  std::vector<ByteView> parts;
  parts.reserve(chunks.size() + 1);
  if (sharding->index_location() == IndexLocation::kStart) parts.push_back(encoded_index);
  parts.insert(parts.end(), chunks.begin(), chunks.end());
  if (sharding->index_location() == IndexLocation::kEnd) parts.push_back(encoded_index);
  return store_->SetParts(key, parts);
}

Status ZarrShardSink::PublishRows(int64_t rows) {
  if (rows == published_rows_) return Status::Ok();
  array_->SetExtent0(rows);
  TESSERA_RETURN_IF_ERROR(array_->PublishMetadata());
  published_rows_ = rows;
  return Status::Ok();
}

Status ZarrShardSink::Abandon() { return store_->Erase(path_.empty() ? "zarr.json" : path_ + "/zarr.json"); }

}  // namespace tessera::stream
