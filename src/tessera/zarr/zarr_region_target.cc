#include "tessera/zarr/zarr_region_target.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include "tessera/core/parallel.h"
#include "tessera/core/text.h"
#include "tessera/index/chunk_grid.h"
#include "tessera/index/index.h"

namespace tessera::zarr {
namespace {

// A shard or chunk as read: its bytes (absent: the key does not exist), the generation to write
// against, and (sharded) its decoded index.
class ZarrObject final : public StoredObject {
 public:
  bool exists() const override { return bytes.has_value(); }

  std::string key;
  std::optional<Bytes> bytes;
  // False when the store keeps no generations: the write back is unconditional.
  bool versioned = false;
  std::optional<std::string> generation;
  std::optional<ShardIndex> index;
};

// "(1, 0)"
std::string CoordsText(std::span<const int64_t> c) { return "(" + JoinIntegers(c, ", ") + ")"; }

// Stores `parts` as `key` (null: removes it), conditionally on what `base` read when there is one
// and its store keeps generations.
Result<bool> StoreObject(Store& store, const std::string& key, const ZarrObject* base,
                         const std::vector<ByteView>* parts) {
  if (base && !base->exists() && !parts) return true;  // absent, and nothing to store
  if (!base || !base->versioned) {
    if (parts) {
      TESSERA_RETURN_IF_ERROR(store.SetParts(key, *parts));
    } else {
      TESSERA_RETURN_IF_ERROR(store.Erase(key));
    }
    return true;
  }
  const WriteCondition condition{base->generation};
  return parts ? store.SetPartsIf(key, *parts, condition) : store.EraseIf(key, condition);
}

}  // namespace

ZarrRegionTarget::ZarrRegionTarget(ZarrArray& array) : array_(&array) {}

ZarrRegionTarget::ZarrRegionTarget(std::unique_ptr<ZarrArray> array) : owned_(std::move(array)), array_(owned_.get()) {}

std::vector<int64_t> ZarrRegionTarget::ObjectShape() const {
  return array_->metadata().chunk_shape;  // the shard shape when sharded
}

std::string ZarrRegionTarget::ObjectOf(std::span<const int64_t> chunk) const {
  std::vector<int64_t> object(chunk.begin(), chunk.end());
  const std::vector<int64_t>& per_shard = array_->chunks_per_shard();
  if (array_->sharding())
    for (size_t d = 0; d < object.size(); ++d) object[d] /= per_shard[d];
  return array_->ChunkKey(object);
}

std::optional<std::vector<int64_t>> ZarrRegionTarget::ObjectCoords(const std::string& key) const {
  // The key is the array's path prefix, then the chunk key encoding's spelling of the coordinates:
  // default "c/1/2" ("c" at rank 0), v2 "1.2" ("0" at rank 0).
  const int rank = array_->metadata().rank();
  const ChunkKeyEncoding& encoding = array_->metadata().chunk_key_encoding;
  const std::vector<int64_t> origin(rank, 0);
  const size_t prefix = array_->ChunkKey(origin).size() - encoding.Key(origin).size();
  std::string_view rest = std::string_view(key).substr(std::min(prefix, key.size()));
  if (encoding.kind == ChunkKeyEncoding::Kind::kDefault) {
    if (rest.substr(0, 1) != "c") return std::nullopt;
    rest.remove_prefix(1);
  } else if (rank == 0) {
    return rest == "0" ? std::optional<std::vector<int64_t>>(std::vector<int64_t>()) : std::nullopt;
  }
  std::vector<int64_t> coords;
  for (int d = 0; d < rank; ++d) {
    if (encoding.kind == ChunkKeyEncoding::Kind::kDefault || d > 0) {
      if (rest.empty() || rest[0] != encoding.separator) return std::nullopt;
      rest.remove_prefix(1);
    }
    int64_t c = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), c);
    if (ec != std::errc() || c < 0) return std::nullopt;
    rest.remove_prefix(static_cast<size_t>(end - rest.data()));
    coords.push_back(c);
  }
  if (!rest.empty() || array_->ChunkKey(coords) != key) return std::nullopt;
  return coords;
}

int64_t ZarrRegionTarget::ChunksInObject(const std::string& key) const {
  const std::optional<std::vector<int64_t>> object = ObjectCoords(key);
  if (!object) return 0;
  if (!array_->sharding()) return 1;
  const index::ChunkGrid grid(shape(), chunk_shape(), array_->chunks_per_shard());
  int64_t n = 1;
  for (int d = 0; d < grid.rank; ++d) {
    const int64_t first = grid.ChunkInShard(d, (*object)[d], 0);
    n *= std::max<int64_t>(0, std::min(grid.chunks_per_shard[d], grid.chunk_count[d] - first));
  }
  return n;
}

Result<std::unique_ptr<StoredObject>> ZarrRegionTarget::Read(const std::string& key) const {
  Store& store = array_->mutable_store();
  auto object = std::make_unique<ZarrObject>();
  object->key = key;
  Result<std::optional<VersionedValue>> versioned = store.GetVersioned(key);
  if (versioned.ok()) {
    object->versioned = true;
    if (versioned.value()) {
      object->bytes = std::move(versioned.value()->bytes);
      object->generation = std::move(versioned.value()->generation);
    }
  } else if (versioned.status().kind() == ErrorKind::kUnsupported) {
    // No generations on this store: read-modify-write without cross-process protection.
    TESSERA_ASSIGN_OR_RETURN(object->bytes, store.Get(key));
  } else {
    return versioned.status();
  }
  if (const ShardingCodec* sharding = array_->sharding(); sharding && object->bytes) {
    const size_t n = static_cast<size_t>(index::Product(static_cast<int>(array_->chunks_per_shard().size()),
                                                        array_->chunks_per_shard().data()));
    Result<ShardIndex> shard_index = sharding->ReadIndexFromShard(*object->bytes, n);
    if (!shard_index.ok()) return shard_index.status().WithContext("shard " + store.Describe(key));
    object->index = std::move(shard_index).value();
  }
  return std::unique_ptr<StoredObject>(std::move(object));
}

Result<bool> ZarrRegionTarget::DecodeChunk(const StoredObject& stored, std::span<const int64_t> chunk,
                                           Bytes* out) const {
  const auto& object = static_cast<const ZarrObject&>(stored);
  if (!object.bytes) return false;
  const Store& store = array_->store();
  const ShardingCodec* sharding = array_->sharding();
  if (!sharding) {
    Status st = array_->codecs().Decode(array_->chunk_spec(), *object.bytes, out);
    if (!st.ok())
      return st.WithContext("chunk " + store.Describe(object.key) + " " + ByteRangeText(0, object.bytes->size()));
    return true;
  }
  const int rank = static_cast<int>(chunk.size());
  const std::vector<int64_t>& per_shard = array_->chunks_per_shard();
  std::vector<int64_t> within(rank);
  for (int d = 0; d < rank; ++d) within[d] = chunk[d] % per_shard[d];
  const size_t slot = static_cast<size_t>(index::Ravel(rank, per_shard.data(), within.data()));
  if (object.index->IsEmpty(slot)) return false;
  const uint64_t offset = object.index->offset(slot), nbytes = object.index->nbytes(slot);
  const std::string context = "shard " + store.Describe(object.key) + ": inner chunk " + CoordsText(within) +
                              " at " + ByteRangeText(offset, offset + nbytes);
  if (offset > object.bytes->size() || nbytes > object.bytes->size() - offset)
    return CorruptData(context + " lies past the shard's end (" + std::to_string(object.bytes->size()) + " bytes)");
  Status st = sharding->inner_codecs().Decode(sharding->InnerSpec(array_->chunk_spec()),
                                              ByteView(*object.bytes).subspan(offset, nbytes), out);
  if (!st.ok()) return st.WithContext(context);
  return true;
}

Result<Bytes> ZarrRegionTarget::EncodeChunk(std::span<const int64_t> chunk, ByteView decoded) const {
  Bytes out;
  const ShardingCodec* sharding = array_->sharding();
  Status st = sharding ? sharding->inner_codecs().Encode(sharding->InnerSpec(array_->chunk_spec()), decoded, &out)
                       : array_->codecs().Encode(array_->chunk_spec(), decoded, &out);
  if (!st.ok()) return st.WithContext("encoding chunk " + CoordsText(chunk));
  return out;
}

Result<bool> ZarrRegionTarget::Write(const std::string& key, const StoredObject* base,
                                     std::span<const ChunkUpdate> updates) {
  return array_->sharding() ? WriteShard(key, base, updates) : WriteChunk(key, base, updates);
}

Result<bool> ZarrRegionTarget::WriteChunk(const std::string& key, const StoredObject* base,
                                          std::span<const ChunkUpdate> updates) {
  if (updates.size() != 1)
    return InvalidArgument(key + ": " + std::to_string(updates.size()) + " chunk updates for an unsharded chunk");
  const auto* object = static_cast<const ZarrObject*>(base);
  if (!updates[0].encoded) return StoreObject(array_->mutable_store(), key, object, nullptr);
  const std::vector<ByteView> parts = {ByteView(*updates[0].encoded)};
  return StoreObject(array_->mutable_store(), key, object, &parts);
}

Result<bool> ZarrRegionTarget::WriteShard(const std::string& key, const StoredObject* base,
                                          std::span<const ChunkUpdate> updates) {
  const ShardingCodec& sharding = *array_->sharding();
  const std::vector<int64_t>& per_shard = array_->chunks_per_shard();
  const int rank = static_cast<int>(per_shard.size());
  const auto* object = static_cast<const ZarrObject*>(base);
  // Slot i: the bytes it keeps from the shard as read, or its new encoding; never copied.
  std::vector<std::optional<ByteView>> slots(static_cast<size_t>(index::Product(rank, per_shard.data())));
  if (object && object->index) {
    for (size_t i = 0; i < slots.size(); ++i)
      if (!object->index->IsEmpty(i))
        slots[i] = ByteView(*object->bytes).subspan(object->index->offset(i), object->index->nbytes(i));
  }
  std::vector<int64_t> within(rank);
  for (const ChunkUpdate& u : updates) {
    for (int d = 0; d < rank; ++d) within[d] = u.chunk[d] % per_shard[d];
    const size_t slot = static_cast<size_t>(index::Ravel(rank, per_shard.data(), within.data()));
    slots[slot] = u.encoded ? std::optional<ByteView>(ByteView(*u.encoded)) : std::nullopt;
  }
  TESSERA_ASSIGN_OR_RETURN(const ShardLayout shard, sharding.AssembleShard(slots));
  Result<bool> written = StoreObject(array_->mutable_store(), key, object, shard.empty() ? nullptr : &shard.parts());
  array_->ForgetShardIndex(key);
  return written;
}

Status ZarrRegionTarget::Resize(const std::vector<int64_t>& new_shape) {
  const std::vector<int64_t> old_shape = shape();
  const int rank = static_cast<int>(old_shape.size());
  if (static_cast<int>(new_shape.size()) != rank)
    return InvalidArgument("resize: shape " + CoordsText(new_shape) + " has rank " + std::to_string(new_shape.size()) +
                           ", the array " + std::to_string(rank));
  for (int d = 0; d < rank; ++d)
    if (new_shape[d] < 0) return InvalidArgument("resize: shape " + CoordsText(new_shape) + " has a negative extent");
  const std::vector<int64_t> object_shape = ObjectShape();
  // The new object grid, padded: objects reaching past it are wholly outside the new shape.
  std::vector<int64_t> padded(rank);
  for (int d = 0; d < rank; ++d)
    padded[d] = index::CeilDiv(new_shape[d], object_shape[d]) * object_shape[d];

  // 1. Clear the elements of straddling objects that the new shape leaves out: per shrunk
  // dimension d, positions [new_d, min(old_d, padded_d)) by every position inside the kept objects
  // along the other dimensions. Fill everywhere: every such chunk left all fill is dropped.
  const Bytes& fill = fill_value().bytes;
  SourceView fill_source;  // every stride 0: one value broadcast
  fill_source.base = fill.data();
  std::vector<PendingWrite> clears;
  for (int d = 0; d < rank; ++d) {
    const int64_t end = std::min(old_shape[d], padded[d]);
    if (new_shape[d] >= end) continue;
    Hyperslab region;
    for (int j = 0; j < rank; ++j) {
      const int64_t begin_j = j == d ? new_shape[d] : 0;
      const int64_t end_j = j == d ? end : std::min(old_shape[j], padded[j]);
      region.dims.push_back(index::DimSlice{begin_j, 1, std::max<int64_t>(0, end_j - begin_j)});
      region.dropped.push_back(false);
    }
    clears.push_back(PendingWrite{std::move(region), fill_source});
  }
  if (!clears.empty()) TESSERA_RETURN_IF_ERROR(WriteSelections(*this, clears).WithContext("resize"));

  // 2. Remove the objects wholly outside the new shape (enumerating the old object grid).
  std::vector<int64_t> old_count(rank), kept_count(rank);
  for (int d = 0; d < rank; ++d) {
    old_count[d] = index::CeilDiv(old_shape[d], object_shape[d]);
    kept_count[d] = index::CeilDiv(new_shape[d], object_shape[d]);
  }
  const int64_t total = index::Product(rank, old_count.data());
  Store& store = array_->mutable_store();
  const int threads = std::max(DefaultThreadCount(), io_concurrency());
  TESSERA_RETURN_IF_ERROR(ParallelFor(total, threads, [&](int64_t i, int) -> Status {
    std::vector<int64_t> object(rank);
    index::Unravel(rank, old_count.data(), i, object.data());
    bool outside = false;
    for (int d = 0; d < rank; ++d) outside |= object[d] >= kept_count[d];
    if (!outside) return Status::Ok();
    const std::string key = array_->ChunkKey(object);
    TESSERA_RETURN_IF_ERROR(store.Erase(key).WithContext("resize"));
    if (array_->sharding()) array_->ForgetShardIndex(key);
    return Status::Ok();
  }));

  // 3. Publish the new shape.
  return array_->Resize(new_shape);
}

}  // namespace tessera::zarr
