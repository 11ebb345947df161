#include "tessera/zarr/array.h"

#include <algorithm>

#include "tessera/codec/registry.h"
#include "tessera/index/chunk_grid.h"
#include "tessera/index/index.h"
#include "tessera/zarr/coalesced_read.h"
#include "tessera/zarr/v2_metadata.h"
#include "tessera/zarr/zarr_region_target.h"

namespace tessera::zarr {
namespace {

std::string JoinKey(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "/" + key;
}

std::string CoordsText(const std::vector<int64_t>& c) {
  std::string s = "(";
  for (size_t d = 0; d < c.size(); ++d) {
    if (d) s += ',';
    s += std::to_string(c[d]);
  }
  return s + ")";
}

}  // namespace

ZarrArray::ZarrArray(std::shared_ptr<Store> store, std::string path, ArrayMetadata metadata, CodecChain codecs)
    : store_(std::move(store)), path_(std::move(path)), metadata_(std::move(metadata)), codecs_(std::move(codecs)) {
  chunk_spec_ = ChunkSpec{metadata_.dtype, metadata_.chunk_shape, metadata_.fill_value};
  read_chunk_shape_ = metadata_.chunk_shape;
  sharding_ = codecs_.sharding();
  if (sharding_) {
    chunks_per_shard_ = sharding_->ChunksPerShard(metadata_.chunk_shape).value();
    read_chunk_shape_ = sharding_->inner_chunk_shape();
  }
}

Result<std::unique_ptr<ZarrArray>> ZarrArray::Open(std::shared_ptr<Store> store, std::string path) {
  const std::string key = JoinKey(path, "zarr.json");
  const std::string where = store->Describe(key);
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> doc, store->Get(key));
  if (!doc) {
    // A Zarr v2 array: read as the v3 array it is equivalent to (v2_metadata.h).
    const std::string v2_key = JoinKey(path, ".zarray");
    const std::string v2_where = store->Describe(v2_key);
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> v2, store->Get(v2_key));
    if (!v2) return NotFound("no Zarr array at " + where + " (neither zarr.json nor .zarray found)");
    TESSERA_ASSIGN_OR_RETURN(nlohmann::json zarray, ParseJsonDocument(std::string(v2->begin(), v2->end()), v2_where));
    nlohmann::json zattrs = nlohmann::json::object();
    const std::string attrs_key = JoinKey(path, ".zattrs");
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> attrs, store->Get(attrs_key));
    if (attrs) {
      TESSERA_ASSIGN_OR_RETURN(zattrs, ParseJsonDocument(std::string(attrs->begin(), attrs->end()), store->Describe(attrs_key)));
    }
    TESSERA_ASSIGN_OR_RETURN(nlohmann::json j, V3DocumentFromV2(zarray, zattrs, v2_where));
    return Open(std::move(store), std::move(path), j);
  }
  TESSERA_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonDocument(std::string(doc->begin(), doc->end()), where));
  return Open(std::move(store), std::move(path), j);
}

Result<std::unique_ptr<ZarrArray>> ZarrArray::Open(std::shared_ptr<Store> store, std::string path,
                                                   const nlohmann::json& j) {
  const std::string where = store->Describe(JoinKey(path, "zarr.json"));
  Result<ArrayMetadata> meta = ArrayMetadata::FromJson(j);
  if (!meta.ok()) return meta.status().WithContext(where);
  ChunkSpec spec{meta->dtype, meta->chunk_shape, meta->fill_value};
  Result<CodecChain> chain = ParseCodecChain(meta->codecs, spec);
  if (!chain.ok()) return chain.status().WithContext(where);
  return std::unique_ptr<ZarrArray>(new ZarrArray(std::move(store), std::move(path), std::move(meta).value(),
                                                  std::move(chain).value()));
}

Result<std::unique_ptr<ZarrArray>> ZarrArray::Create(std::shared_ptr<Store> store, std::string path,
                                                     ArrayMetadata metadata) {
  // Round-trip through JSON so Create validates exactly what Open will.
  nlohmann::json j = metadata.ToJson();
  TESSERA_ASSIGN_OR_RETURN(ArrayMetadata checked, ArrayMetadata::FromJson(j));
  ChunkSpec spec{checked.dtype, checked.chunk_shape, checked.fill_value};
  TESSERA_ASSIGN_OR_RETURN(CodecChain chain, ParseCodecChain(checked.codecs, spec));
  const std::string text = j.dump(2) + "\n";
  TESSERA_RETURN_IF_ERROR(store->Set(JoinKey(path, "zarr.json"), AsView(text)));
  return std::unique_ptr<ZarrArray>(new ZarrArray(std::move(store), std::move(path), std::move(checked), std::move(chain)));
}

Result<std::unique_ptr<ZarrArray>> ZarrArray::Create(std::shared_ptr<Store> store, std::string path,
                                                     ArrayMetadata metadata, CodecChain codecs) {
  // Round-trip through JSON so Create validates exactly what Open will; the codecs are the caller's.
  nlohmann::json j = metadata.ToJson();
  TESSERA_ASSIGN_OR_RETURN(ArrayMetadata checked, ArrayMetadata::FromJson(j));
  const std::string text = j.dump(2) + "\n";
  TESSERA_RETURN_IF_ERROR(store->Set(JoinKey(path, "zarr.json"), AsView(text)));
  return std::unique_ptr<ZarrArray>(new ZarrArray(std::move(store), std::move(path), std::move(checked), std::move(codecs)));
}

std::unique_ptr<ZarrArray> ZarrArray::Attach(std::shared_ptr<Store> store, std::string path, ArrayMetadata metadata,
                                             CodecChain codecs) {
  return std::unique_ptr<ZarrArray>(new ZarrArray(std::move(store), std::move(path), std::move(metadata), std::move(codecs)));
}

Status CreateGroup(Store& store, const std::string& path, const nlohmann::json& attributes) {
  const std::string text = GroupMetadataJson(attributes).dump(2) + "\n";
  return store.Set(JoinKey(path, "zarr.json"), AsView(text));
}

std::vector<int64_t> ZarrArray::shard_shape() const {
  return sharding_ ? metadata_.chunk_shape : std::vector<int64_t>();
}

std::string ZarrArray::ChunkKey(const std::vector<int64_t>& coords) const {
  return JoinKey(path_, metadata_.chunk_key_encoding.Key(coords));
}

Status ZarrArray::Resize(const std::vector<int64_t>& new_shape) {
  if (new_shape.size() != metadata_.shape.size()) return InvalidArgument("Resize: rank mismatch");
  metadata_.shape = new_shape;
  return PublishMetadata();
}

void ZarrArray::SetExtent0(int64_t extent) { metadata_.shape[0] = extent; }

Status ZarrArray::PublishMetadata() {
  const std::string text = metadata_.ToJson().dump(2) + "\n";
  return store_->Publish(JoinKey(path_, "zarr.json"), AsView(text));
}

ZarrArray::IndexResult ZarrArray::GetShardIndex(const std::string& key) const {
  std::promise<IndexResult> promise;
  std::shared_future<IndexResult> pending;
  {
    std::lock_guard<std::mutex> lock(index_mu_);
    auto it = index_cache_.find(key);
    if (it != index_cache_.end()) {
      pending = it->second.index;
    } else {
      CacheIndexLocked(key, promise.get_future().share());
    }
  }
  if (pending.valid()) return pending.get();
  IndexResult r = ReadShardIndex(key);
  promise.set_value(r);
  if (!r.ok()) {  // errors are not kept: a later read tries again
    std::lock_guard<std::mutex> lock(index_mu_);
    index_cache_.erase(key);
  }
  return r;
}

void ZarrArray::CacheIndexLocked(const std::string& key, std::shared_future<IndexResult> index) const {
  if (index_cache_.size() > 4096) index_cache_.clear();  // bound the cache
  index_cache_.emplace(key, CachedIndex{std::move(index)});
}

ZarrArray::IndexResult ZarrArray::ReadShardIndex(const std::string& key) const {
  const std::string where = store_->Describe(key);
  const uint64_t index_size = IndexBytes();
  // The index and the shard's size: one suffix read for an index at the end (one request on an
  // object store), the size then the first bytes for one at the start.
  std::optional<SuffixRead> read;
  if (sharding_->index_location() == IndexLocation::kEnd) {
    Result<std::optional<SuffixRead>> r = GetExactSuffixAndSize(*store_, key, index_size);
    if (!r.ok() && r.status().kind() == ErrorKind::kOutOfRange) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, store_->Size(key));
      return ShardTooShort(key, size.value_or(0));
    }
    if (!r.ok()) return r.status().WithContext("shard " + where);
    read = std::move(r).value();
  } else {
    TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, store_->Size(key));
    if (size) {
      if (*size < index_size) return ShardTooShort(key, *size);
      Result<std::optional<Bytes>> bytes = GetExactRange(*store_, key, 0, index_size);
      if (!bytes.ok()) return bytes.status().WithContext("shard " + where);
      if (!bytes.value()) return NotFound("shard " + where + " disappeared while reading");
      read = SuffixRead{std::move(**bytes), *size};
    }
  }
  if (!read) return std::shared_ptr<const ShardIndex>();
  return DecodeShardIndex(key, read->bytes, read->value_size);
}

index::ChunkGrid ZarrArray::ReadGrid() const {
  return index::ChunkGrid(metadata_.shape, read_chunk_shape_, chunks_per_shard_);
}

size_t ZarrArray::ChunksPerShard() const {
  return static_cast<size_t>(index::Product(static_cast<int>(chunks_per_shard_.size()), chunks_per_shard_.data()));
}

uint64_t ZarrArray::IndexBytes() const { return sharding_->IndexEncodedSize(ChunksPerShard()); }

Status ZarrArray::ShardTooShort(const std::string& key, uint64_t size) const {
  return CorruptData("shard " + store_->Describe(key) + " is truncated: " + std::to_string(size) +
                     " bytes, shorter than its " + std::to_string(IndexBytes()) + "-byte index");
}

ZarrArray::IndexResult ZarrArray::DecodeShardIndex(const std::string& key, ByteView index_bytes,
                                                   uint64_t shard_size) const {
  const uint64_t index_size = IndexBytes();
  const uint64_t begin = sharding_->index_location() == IndexLocation::kStart ? 0 : shard_size - index_size;
  Result<ShardIndex> index = sharding_->DecodeIndex(index_bytes, ChunksPerShard(), shard_size);
  if (!index.ok())
    return index.status().WithContext("shard " + store_->Describe(key) + ": index at " +
                                      ByteRangeText(begin, begin + index_size));
  return std::make_shared<const ShardIndex>(std::move(index).value());
}

ZarrArray::IndexResult ZarrArray::IndexFromShard(const std::string& key, ByteView shard) const {
  const uint64_t index_size = IndexBytes();
  if (shard.size() < index_size) return ShardTooShort(key, shard.size());
  const size_t begin = sharding_->index_location() == IndexLocation::kStart ? 0 : shard.size() - index_size;
  IndexResult r = DecodeShardIndex(key, shard.subspan(begin, index_size), shard.size());
  if (r.ok()) {  // later reads of the shard find its index without a request
    std::promise<IndexResult> ready;
    ready.set_value(r);
    std::lock_guard<std::mutex> lock(index_mu_);
    CacheIndexLocked(key, ready.get_future().share());
  }
  return r;
}

Result<bool> ZarrArray::ReadChunk(std::span<const int64_t> coords, Bytes* out) const {
  return ReadChunkPrefix(coords, SIZE_MAX, out);
}

Status ZarrArray::DecodeChunkObject(const std::string& key, ByteView data, size_t prefix_bytes, Bytes* out) const {
  Status st = codecs_.Decode(chunk_spec_, data, out, prefix_bytes);
  if (!st.ok()) return st.WithContext("chunk " + store_->Describe(key) + " " + ByteRangeText(0, data.size()));
  return Status::Ok();
}

ZarrArray::InnerChunk ZarrArray::LocateInnerChunk(std::span<const int64_t> coords) const {
  const index::ChunkGrid grid = ReadGrid();
  InnerChunk c;
  std::vector<int64_t> shard(static_cast<size_t>(metadata_.rank()));
  grid.ShardAndPosition(coords.data(), shard.data(), c.within);
  c.key = ChunkKey(shard);
  c.slot = static_cast<size_t>(grid.SlotInShard(c.within));
  return c;
}

Result<std::optional<Bytes>> ZarrArray::ReadInnerBytes(const InnerChunk& c, const ShardIndex* index) const {
  if (!index || index->IsEmpty(c.slot)) return std::optional<Bytes>();
  const uint64_t off = index->offset(c.slot), n = index->nbytes(c.slot);
  Result<std::optional<Bytes>> data = GetExactRange(*store_, c.key, off, n);
  if (!data.ok()) return CorruptData(InnerChunkContext(c.key, c.within, off, n) + ": " + data.status().message());
  if (!data.value()) return NotFound(InnerChunkContext(c.key, c.within, off, n) + ": shard disappeared while reading");
  return data;
}

Result<bool> ZarrArray::ReadChunkPrefix(std::span<const int64_t> coords, size_t prefix_bytes, Bytes* out) const {
  if (!sharding_) {
    const std::string key = ChunkKey(std::vector<int64_t>(coords.begin(), coords.end()));
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> data, store_->Get(key));
    if (!data) return false;
    TESSERA_RETURN_IF_ERROR(DecodeChunkObject(key, *data, prefix_bytes, out));
    return true;
  }
  const InnerChunk c = LocateInnerChunk(coords);
  // A writer (another process, or another Array) may replace the shard between the index read and
  // the chunk read: the chunk's bytes then belong to another shard. When the chunk fails to read
  // or decode, the index is read again; if it changed, the chunk is read once more with it, else
  // the shard really is corrupt and the first error stands.
  auto read_with = [&](const ShardIndex* index) -> Result<bool> {
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> data, ReadInnerBytes(c, index));
    if (!data) return false;
    TESSERA_RETURN_IF_ERROR(DecodeInnerChunk(c.key, c.within, index->offset(c.slot), *data, prefix_bytes, out));
    return true;
  };
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const ShardIndex> index, GetShardIndex(c.key));
  Result<bool> got = read_with(index.get());
  if (got.ok()) return got;
  ForgetShardIndex(c.key);
  Result<std::shared_ptr<const ShardIndex>> now = GetShardIndex(c.key);
  if (!now.ok() || SameEntry(index.get(), now->get(), c.slot)) return got.status();
  return read_with(now->get());
}

Result<std::optional<Bytes>> ZarrArray::ReadEncodedChunk(std::span<const int64_t> coords, Bytes* decoded) const {
  if (!sharding_) {
    const std::string key = ChunkKey(std::vector<int64_t>(coords.begin(), coords.end()));
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> data, store_->Get(key));
    if (data) TESSERA_RETURN_IF_ERROR(DecodeChunkObject(key, *data, SIZE_MAX, decoded));
    return data;
  }
  const InnerChunk c = LocateInnerChunk(coords);
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const ShardIndex> index, GetShardIndex(c.key));
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> data, ReadInnerBytes(c, index.get()));
  if (data) TESSERA_RETURN_IF_ERROR(DecodeInnerChunk(c.key, c.within, index->offset(c.slot), *data, SIZE_MAX, decoded));
  return data;
}

bool ZarrArray::SameEntry(const ShardIndex* a, const ShardIndex* b, size_t slot) {
  if (!a || !b) return a == b;
  if (a->IsEmpty(slot) || b->IsEmpty(slot)) return a->IsEmpty(slot) && b->IsEmpty(slot);
  return a->offset(slot) == b->offset(slot) && a->nbytes(slot) == b->nbytes(slot);
}

std::string ZarrArray::InnerChunkContext(const std::string& key, const int64_t* within, uint64_t offset,
                                         uint64_t nbytes) const {
  return "shard " + store_->Describe(key) + ": inner chunk " +
         CoordsText(std::vector<int64_t>(within, within + metadata_.rank())) + " at " +
         ByteRangeText(offset, offset + nbytes);
}

Status ZarrArray::DecodeInnerChunk(const std::string& key, const int64_t* within, uint64_t offset, ByteView encoded,
                                   size_t prefix_bytes, Bytes* out) const {
  Status st = sharding_->inner_codecs().Decode(sharding_->InnerSpec(chunk_spec_), encoded, out, prefix_bytes);
  if (!st.ok()) return st.WithContext(InnerChunkContext(key, within, offset, encoded.size()));
  return Status::Ok();
}

std::unique_ptr<ChunkBatch> ZarrArray::BeginBatch(std::span<const std::vector<int64_t>> chunks) const {
  if (!sharding_ || store_->io_concurrency() == 0) return nullptr;  // local reads are cheap one by one
  return std::make_unique<CoalescedShardBatch>(*this, chunks);
}

Status ZarrArray::Read(const Hyperslab& selection, uint8_t* out, const ReadOptions& options) const {
  return ReadHyperslab(*this, selection, out, options);
}

Status ZarrArray::WriteRegion(const std::vector<int64_t>& origin, const std::vector<int64_t>& extent,
                              ByteView data, int threads) {
  const int rank = metadata_.rank();
  if (static_cast<int>(origin.size()) != rank || static_cast<int>(extent.size()) != rank)
    return InvalidArgument("WriteRegion: origin/extent rank does not match the array rank " + std::to_string(rank));
  Hyperslab region;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    if (origin[d] < 0 || extent[d] < 0 || origin[d] + extent[d] > metadata_.shape[d])
      return OutOfRange("WriteRegion: region " + CoordsText(origin) + " + " + CoordsText(extent) +
                        " is outside the array shape " + CoordsText(metadata_.shape));
    region.dims.push_back(index::DimSlice{origin[d], 1, extent[d]});
    region.dropped.push_back(false);
    n *= extent[d];
  }
  const size_t item = ItemSize(metadata_.dtype);
  if (data.size() != static_cast<size_t>(n) * item)
    return InvalidArgument("WriteRegion: got " + std::to_string(data.size()) + " bytes for a region of " +
                           std::to_string(n) + " elements of " + std::to_string(item) + " bytes");
  ZarrRegionTarget target(*this);
  const PendingWrite write{region, SourceView::Contiguous(data.data(), region, item)};
  return WriteSelections(target, {&write, 1}, WriteOptions{.threads = threads});
}

void ZarrArray::ForgetShardIndex(const std::string& key) const {
  std::lock_guard<std::mutex> lock(index_mu_);
  index_cache_.erase(key);
}

}  // namespace tessera::zarr
