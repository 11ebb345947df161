#include "tessera/zarr/zarr_sink.h"

#include <optional>
#include <vector>

#include "tessera/codec/sharding_codec.h"
#include "tessera/store/writable_file.h"

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

namespace {

// A Zarr shard written into its file as its chunks come, the index last. The file and the index
// are made with the first present chunk, so a stream holds open only the files (and index memory)
// of the shards it is filling. The first error sticks: a shard that failed is never committed.
class ZarrShardFileWriter final : public stream::ShardWriter {
 public:
  ZarrShardFileWriter(std::shared_ptr<Store> store, std::string key, const ShardingCodec& sharding, size_t num_slots)
      : store_(std::move(store)), key_(std::move(key)), sharding_(sharding), num_slots_(num_slots) {}

  Status Append(std::span<const stream::EncodedTile> slots) override {
    TESSERA_RETURN_IF_ERROR(failed_);
    if (slots.size() > num_slots_ - next_slot_)
      return failed_ = FailedPrecondition(key_ + ": more slots appended than the shard's " + std::to_string(num_slots_));
    for (const stream::EncodedTile& slot : slots) {
      const size_t k = next_slot_++;
      if (slot.present) failed_ = Write(k, slot.encoding());
      TESSERA_RETURN_IF_ERROR(failed_);
    }
    return Status::Ok();
  }

  Status Finish() override {
    TESSERA_RETURN_IF_ERROR(failed_);
    if (!placement_) return failed_ = store_->Erase(key_);  // all fill: no shard, as WriteShard stores it
    Bytes index;
    failed_ = sharding_.EncodeIndex(placement_->index(), &index);
    if (failed_.ok() && index.size() != placement_->index_size())
      failed_ = Unsupported("sharding_indexed: index codecs must have a fixed encoded size");
    if (failed_.ok()) failed_ = file_->WriteAt(placement_->index_offset(), index);
    if (failed_.ok()) failed_ = file_->Commit();
    placement_.reset();
    return failed_;
  }

 private:
  Status Write(size_t k, ByteView chunk) {
    if (!file_) {
      TESSERA_ASSIGN_OR_RETURN(file_, store_->OpenInPlaceFile(key_));
      placement_.emplace(sharding_, num_slots_);
    }
    return file_->WriteAt(placement_->Place(k, chunk.size()), chunk);
  }

  const std::shared_ptr<Store> store_;
  const std::string key_;
  const ShardingCodec& sharding_;
  const size_t num_slots_;
  std::optional<ShardPlacement> placement_;  // with the file: made by the first present chunk
  std::unique_ptr<WritableFile> file_;
  size_t next_slot_ = 0;
  Status failed_;
};

}  // namespace

Result<std::unique_ptr<stream::ShardWriter>> ZarrShardSink::BeginShard(std::span<const int64_t> coords) {
  const ShardingCodec* sharding = array_->sharding();
  if (!sharding || !store_->writes_in_place()) return std::unique_ptr<stream::ShardWriter>();
  TESSERA_ASSIGN_OR_RETURN(const std::vector<int64_t> per_shard,
                           sharding->ChunksPerShard(array_->metadata().chunk_shape));
  size_t slots = 1;
  for (int64_t n : per_shard) slots *= static_cast<size_t>(n);
  const std::string key = array_->ChunkKey(std::vector<int64_t>(coords.begin(), coords.end()));
  return std::unique_ptr<stream::ShardWriter>(new ZarrShardFileWriter(store_, key, *sharding, slots));
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
