#include "tessera/zarr/zarr_sink.h"

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

Result<std::unique_ptr<ZarrShardSink>> ZarrShardSink::Attach(std::shared_ptr<Store> store, std::string path,
                                                             const zarr::ArrayMetadata& metadata) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<zarr::ZarrArray> array, zarr::ZarrArray::Open(store, path, metadata.ToJson()));
  return std::unique_ptr<ZarrShardSink>(new ZarrShardSink(std::move(store), std::move(array), std::move(path)));
}

Status ZarrShardSink::WriteShard(const stream::EncodedShard& shard) {
  const std::string key = array_->ChunkKey(std::vector<int64_t>(shard.coords.begin(), shard.coords.end()));
  const ShardingCodec* sharding = array_->sharding();
  const size_t n = shard.slots.size();
  // A sharded object:   [index]  chunk  chunk ...  [index]   (the index at its start or its end).
  // Index entry k: (offset from the start of the object, nbytes) of slot k's chunk, or empty.
  const bool index_at_start = sharding && sharding->index_location() == IndexLocation::kStart;
  uint64_t offset = index_at_start ? sharding->IndexEncodedSize(n) : 0;
  ShardIndex index = ShardIndex::AllEmpty(n);
  std::vector<ByteView> chunks;  // the present slots, in slot order
  chunks.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    const stream::EncodedTile& slot = shard.slots[k];
    if (!slot.present) continue;
    index.entries[2 * k] = offset;
    const ByteView encoding = slot.encoding();
    index.entries[2 * k + 1] = encoding.size();
    offset += encoding.size();
    chunks.emplace_back(encoding);
  }
  if (chunks.empty()) return store_->Erase(key);
  if (!sharding) return store_->SetParts(key, chunks);  // unsharded: the one slot is the chunk
  Bytes encoded_index;
  TESSERA_RETURN_IF_ERROR(sharding->EncodeIndex(index, &encoded_index));
  std::vector<ByteView> parts;
  parts.reserve(chunks.size() + 1);
  if (index_at_start) parts.emplace_back(encoded_index);
  parts.insert(parts.end(), chunks.begin(), chunks.end());
  if (!index_at_start) parts.emplace_back(encoded_index);
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

}  // namespace tessera::zarr
