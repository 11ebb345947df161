#include "tessera/precomputed/precomputed_region_target.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "tessera/codec/gzip_codec.h"
#include "tessera/index/morton.h"
#include "tessera/precomputed/chunk_encoding.h"
#include "tessera/precomputed/shard_format.h"

namespace tessera::precomputed {
namespace {

// A conditional write that keeps losing to other writers is the engine's business (it retries);
// Resize, which rewrites shards itself, gives up after this many conflicts on one shard.
constexpr int kMaxResizeAttempts = 16;

// Counting the chunks of murmurhash3 shards visits every chunk of the grid once (about 50 ns
// each); past this many chunks ChunksInObject answers the grid's chunk count instead, an
// over-count that only makes the engine read a shard it might have skipped (a write that covers
// every chunk of a scattered shard covers most of the volume anyway).
constexpr int64_t kMaxCountedChunks = int64_t{1} << 22;

// One stored object as read: the whole value and the generation it was read at.
class PrecomputedObject final : public StoredObject {
 public:
  bool exists() const override { return bytes.has_value(); }

  std::optional<Bytes> bytes;              // the shard file, or the chunk (a .gz sibling gunzipped)
  std::optional<std::string> generation;   // absent with `versioned`: the key did not exist
  bool versioned = false;                  // false: the store keeps no generations
  bool from_gz_sibling = false;            // unsharded: read from "<key>.gz"
  std::string where;                       // the key as the store describes it
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> chunks;  // sharded: chunk id -> byte range
};

// The value of `key` with its generation; on a store that keeps none, the plain value.
Status ReadVersioned(const Store& store, const std::string& key, PrecomputedObject* object) {
  Result<std::optional<VersionedValue>> versioned = store.GetVersioned(key);
  if (versioned.ok()) {
    object->versioned = true;
    if (*versioned) {
      object->bytes = std::move((*versioned)->bytes);
      object->generation = std::move((*versioned)->generation);
    }
    return Status::Ok();
  }
  if (versioned.status().kind() != ErrorKind::kUnsupported) return versioned.status();
  TESSERA_ASSIGN_OR_RETURN(object->bytes, store.Get(key));
  return Status::Ok();
}

// The inverse of index::CompressedMortonCode: the grid cell (x, y, z) of chunk id `code`.
std::array<int64_t, 3> MortonCell(uint64_t code, const int64_t* grid_size) {
  int bits[3], n = 0;
  for (int d = 0; d < 3; ++d) n = std::max(n, bits[d] = index::BitsForExtent(grid_size[d]));
  std::array<int64_t, 3> g{0, 0, 0};
  int j = 0;
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      if (i < bits[d]) g[d] |= static_cast<int64_t>((code >> j++) & 1u) << i;
  return g;
}

std::array<int64_t, 3> ExtentOf(const index::ChunkGrid& grid_xyz, const std::array<int64_t, 3>& g) {
  return {grid_xyz.ChunkExtent(0, g[0]), grid_xyz.ChunkExtent(1, g[1]), grid_xyz.ChunkExtent(2, g[2])};
}

// The cells (x, y, z) of `old_grid` whose box differs in `new_grid` (along some dimension the
// cell is the old or the new last one, or lies past the new end): the chunks a resize rewrites or
// removes. Visits the slabs of changing coordinates only, not the whole grid.
std::vector<std::array<int64_t, 3>> CellsChangedByResize(const index::ChunkGrid& old_grid,
                                                         const index::ChunkGrid& new_grid) {
  std::array<std::vector<int64_t>, 3> changing;
  std::array<std::vector<bool>, 3> is_changing;
  for (int d = 0; d < 3; ++d) {
    is_changing[static_cast<size_t>(d)].assign(static_cast<size_t>(old_grid.chunk_count[d]), false);
    for (int64_t c = 0; c < old_grid.chunk_count[d]; ++c)
      if (c >= new_grid.chunk_count[d] || old_grid.ChunkExtent(d, c) != new_grid.ChunkExtent(d, c)) {
        changing[static_cast<size_t>(d)].push_back(c);
        is_changing[static_cast<size_t>(d)][static_cast<size_t>(c)] = true;
      }
  }
  std::vector<int64_t> all_x(static_cast<size_t>(old_grid.chunk_count[0]));
  for (int64_t c = 0; c < old_grid.chunk_count[0]; ++c) all_x[static_cast<size_t>(c)] = c;
  std::vector<std::array<int64_t, 3>> cells;
  for (int64_t z = 0; z < old_grid.chunk_count[2]; ++z)
    for (int64_t y = 0; y < old_grid.chunk_count[1]; ++y) {
      const bool zy = is_changing[2][static_cast<size_t>(z)] || is_changing[1][static_cast<size_t>(y)];
      for (int64_t x : zy ? all_x : changing[0]) cells.push_back({x, y, z});
    }
  return cells;
}

bool InsideGrid(const index::ChunkGrid& grid, const std::array<int64_t, 3>& g) {
  return g[0] < grid.chunk_count[0] && g[1] < grid.chunk_count[1] && g[2] < grid.chunk_count[2];
}

}  // namespace

Result<std::unique_ptr<PrecomputedRegionTarget>> PrecomputedRegionTarget::Open(std::shared_ptr<Store> store,
                                                                               int scale_index) {
  const std::string where = store->Describe("info");
  TESSERA_ASSIGN_OR_RETURN(VolumeInfo info, ReadVolumeInfo(*store, scale_index));
  const ScaleInfo& s = info.scales[static_cast<size_t>(scale_index)];
  TESSERA_RETURN_IF_ERROR(CheckEncodingWritten(s.encoding, where + ": scale \"" + s.key + "\""));
  return std::unique_ptr<PrecomputedRegionTarget>(new PrecomputedRegionTarget(std::move(store), std::move(info), scale_index));
}

PrecomputedRegionTarget::PrecomputedRegionTarget(std::shared_ptr<Store> store, VolumeInfo info, int scale_index)
    : store_(std::move(store)), info_(std::move(info)), scale_index_(scale_index) {
  channels_ = info_.num_channels;
  item_ = static_cast<int64_t>(ItemSize(info_.dtype));
  fill_ = ZeroFill(info_.dtype);
  SetGeometry();
}

void PrecomputedRegionTarget::SetGeometry() {
  const ScaleInfo& s = scale();
  shape_.clear();
  chunk_shape_.clear();
  if (channels_ > 1) {  // as PrecomputedVolume presents it: [c,] z, y, x, every channel in one chunk
    shape_.push_back(channels_);
    chunk_shape_.push_back(channels_);
  }
  for (int d = 2; d >= 0; --d) {
    shape_.push_back(s.size[static_cast<size_t>(d)]);
    chunk_shape_.push_back(s.chunk_size[static_cast<size_t>(d)]);
  }
  grid_xyz_ = s.GridXyz();
}

std::array<int64_t, 3> PrecomputedRegionTarget::CellOf(std::span<const int64_t> chunk) const {
  const size_t spatial = channels_ > 1 ? 1 : 0;
  return {chunk[spatial + 2], chunk[spatial + 1], chunk[spatial]};
}

std::string PrecomputedRegionTarget::ChunkKey(const index::ChunkGrid& grid_xyz, const std::array<int64_t, 3>& g) const {
  const ScaleInfo& s = scale();
  std::string name = s.key + "/";
  for (int d = 0; d < 3; ++d) {
    const int64_t begin = s.voxel_offset[static_cast<size_t>(d)] + grid_xyz.ChunkOrigin(d, g[static_cast<size_t>(d)]);
    const int64_t end = begin + grid_xyz.ChunkExtent(d, g[static_cast<size_t>(d)]);
    if (d > 0) name += '_';
    name.append(std::to_string(begin)).append(1, '-').append(std::to_string(end));
  }
  return name;
}

std::string PrecomputedRegionTarget::ShardKey(uint64_t shard) const {
  return scale().key + "/" + scale().sharding->ShardFileName(shard);
}

uint64_t PrecomputedRegionTarget::ChunkId(const std::array<int64_t, 3>& g) const {
  return index::CompressedMortonCode(g.data(), grid_xyz_.chunk_count);
}

std::string PrecomputedRegionTarget::ObjectOf(std::span<const int64_t> chunk) const {
  const std::array<int64_t, 3> g = CellOf(chunk);
  if (!scale().sharding) return ChunkKey(grid_xyz_, g);
  return ShardKey(scale().sharding->Locate(ChunkId(g)).shard);
}

std::optional<uint64_t> PrecomputedRegionTarget::ShardNumberOf(const std::string& key) const {
  const std::string prefix = scale().key + "/";
  if (!key.starts_with(prefix) || !key.ends_with(".shard")) return std::nullopt;
  const std::string hex = key.substr(prefix.size(), key.size() - prefix.size() - 6);
  char* end = nullptr;
  const uint64_t shard = std::strtoull(hex.c_str(), &end, 16);
  if (hex.empty() || *end != '\0' || ShardKey(shard) != key) return std::nullopt;
  return shard;
}

int64_t PrecomputedRegionTarget::CountChunksInShardByScan(const std::string& key) const {
  const std::optional<uint64_t> shard = ShardNumberOf(key);
  if (!shard) return 0;
  std::lock_guard<std::mutex> lock(counts_mu_);
  if (!shard_counts_) {
    std::unordered_map<uint64_t, int64_t> counts;
    const ShardingSpec& spec = *scale().sharding;
    std::array<int64_t, 3> g;
    for (g[2] = 0; g[2] < grid_xyz_.chunk_count[2]; ++g[2])
      for (g[1] = 0; g[1] < grid_xyz_.chunk_count[1]; ++g[1])
        for (g[0] = 0; g[0] < grid_xyz_.chunk_count[0]; ++g[0]) ++counts[spec.Locate(ChunkId(g)).shard];
    shard_counts_ = std::move(counts);
  }
  auto it = shard_counts_->find(*shard);
  return it == shard_counts_->end() ? 0 : it->second;
}

int64_t PrecomputedRegionTarget::ChunksInObject(const std::string& key) const {
  const ScaleInfo& s = scale();
  if (!s.sharding) return 1;
  const ShardingSpec& spec = *s.sharding;
  int bits[3], total = 0;
  for (int d = 0; d < 3; ++d) total += bits[d] = index::BitsForExtent(grid_xyz_.chunk_count[d]);
  const int box_bits = spec.preshift_bits + spec.minishard_bits;
  // Identity hash, no shard number wrapping: shard k holds the chunk ids [k << box_bits, (k+1) <<
  // box_bits), an aligned box of 2^got[d] cells along d (clipped to the grid).
  if (spec.hash != ShardHash::kIdentity || box_bits >= 64 || spec.shard_bits < total - box_bits) {
    if (grid_xyz_.ChunkCount() > kMaxCountedChunks) return ShardNumberOf(key) ? grid_xyz_.ChunkCount() : 0;
    return CountChunksInShardByScan(key);
  }
  const std::optional<uint64_t> shard = ShardNumberOf(key);
  if (!shard) return 0;
  if (box_bits < total && *shard >= (uint64_t{1} << (total - box_bits))) return 0;
  if (box_bits >= total && *shard != 0) return 0;
  int got[3];
  index::MortonLowBitsPerDimension(bits, box_bits, got);
  const std::array<int64_t, 3> origin = MortonCell(box_bits >= total ? 0 : *shard << box_bits, grid_xyz_.chunk_count);
  int64_t count = 1;
  for (int d = 0; d < 3; ++d)
    count *= std::clamp<int64_t>(grid_xyz_.chunk_count[d] - origin[static_cast<size_t>(d)], 0, int64_t{1} << got[d]);
  return count;
}

Result<std::unique_ptr<StoredObject>> PrecomputedRegionTarget::Read(const std::string& key) const {
  auto object = std::make_unique<PrecomputedObject>();
  object->where = store_->Describe(key);
  TESSERA_RETURN_IF_ERROR(ReadVersioned(*store_, key, object.get()));
  const ScaleInfo& s = scale();
  if (!s.sharding) {
    if (object->bytes) return std::unique_ptr<StoredObject>(std::move(object));
    // Some writers store gzip-compressed chunks as "<name>.gz": read it; Write stores the plain
    // name (conditional on it still not existing) and removes the sibling.
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> gz, store_->Get(key + ".gz"));
    if (!gz) return std::unique_ptr<StoredObject>(std::move(object));
    Bytes plain;
    Status st = GzipCodec(6).Decode(*gz, &plain);
    if (!st.ok()) return st.WithContext(store_->Describe(key + ".gz"));
    object->bytes = std::move(plain);
    object->from_gz_sibling = true;
    object->where = store_->Describe(key + ".gz");
    return std::unique_ptr<StoredObject>(std::move(object));
  }
  if (!object->bytes) return std::unique_ptr<StoredObject>(std::move(object));
  // Sharded: every chunk's byte range, from the shard index and every minishard index.
  const ShardingSpec& spec = *s.sharding;
  const Bytes& file = *object->bytes;
  if (file.size() < spec.ShardIndexBytes())
    return CorruptData(object->where + ": shard of " + std::to_string(file.size()) + " bytes is shorter than its " +
                       std::to_string(spec.ShardIndexBytes()) + "-byte shard index " +
                       ByteRangeText(0, spec.ShardIndexBytes()));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<ChunkEntry> entries, DecodeShardEntries(spec, file, object->where));
  for (const ChunkEntry& e : entries)
    object->chunks.emplace(e.chunk_id, std::make_pair(e.begin, e.end));  // the first entry wins, as for readers
  return std::unique_ptr<StoredObject>(std::move(object));
}

Result<Bytes> PrecomputedRegionTarget::DecodeStored(Bytes stored, const std::array<int64_t, 3>& extent,
                                                    const std::string& where) const {
  const ScaleInfo& s = scale();
  TESSERA_ASSIGN_OR_RETURN(Bytes voxels,
                           precomputed::DecodeChunk(s, channels_, info_.dtype, extent, std::move(stored), where));
  Bytes full(static_cast<size_t>(channels_ * s.chunk_size[0] * s.chunk_size[1] * s.chunk_size[2] * item_), 0);
  CopyChunkCorner(extent, s.chunk_size, channels_, item_, voxels.data(), full.data(), /*to_full=*/true);
  return full;
}

Bytes PrecomputedRegionTarget::Crop(ByteView full, const std::array<int64_t, 3>& extent) const {
  Bytes cropped(static_cast<size_t>(channels_ * extent[0] * extent[1] * extent[2] * item_));
  CopyChunkCorner(extent, scale().chunk_size, channels_, item_, full.data(), cropped.data(), /*to_full=*/false);
  return cropped;
}

Result<Bytes> PrecomputedRegionTarget::EncodeCropped(Bytes cropped, const std::array<int64_t, 3>& extent) const {
  const ScaleInfo& s = scale();
  TESSERA_ASSIGN_OR_RETURN(Bytes encoded,
                           precomputed::EncodeChunk(s, channels_, info_.dtype, extent, std::move(cropped)));
  if (s.sharding && s.sharding->data_encoding != ShardEncoding::kRaw)
    return EncodeShardBytes(s.sharding->data_encoding, encoded);
  return encoded;
}

Result<bool> PrecomputedRegionTarget::DecodeChunk(const StoredObject& stored, std::span<const int64_t> chunk,
                                                  Bytes* out) const {
  const auto& object = static_cast<const PrecomputedObject&>(stored);
  if (!object.bytes) return false;
  const std::array<int64_t, 3> g = CellOf(chunk);
  const std::array<int64_t, 3> extent = ExtentOf(grid_xyz_, g);
  const ScaleInfo& s = scale();
  if (!s.sharding) {
    TESSERA_ASSIGN_OR_RETURN(*out, DecodeStored(*object.bytes, extent, object.where));
    return true;
  }
  const uint64_t id = ChunkId(g);
  auto it = object.chunks.find(id);
  if (it == object.chunks.end()) return false;
  const auto [begin, end] = it->second;
  const std::string where = object.where + " chunk " + std::to_string(id) + " at " + ByteRangeText(begin, end);
  Result<Bytes> data = DecodeShardBytes(s.sharding->data_encoding, ByteView(*object.bytes).subspan(begin, end - begin));
  if (!data.ok()) return data.status().WithContext(where);
  TESSERA_ASSIGN_OR_RETURN(*out, DecodeStored(std::move(data).value(), extent, where));
  return true;
}

Result<Bytes> PrecomputedRegionTarget::EncodeChunk(std::span<const int64_t> chunk, ByteView decoded) const {
  const std::array<int64_t, 3> extent = ExtentOf(grid_xyz_, CellOf(chunk));
  return EncodeCropped(Crop(decoded, extent), extent);
}

Result<bool> PrecomputedRegionTarget::StoreObject(const std::string& key, const StoredObject* base,
                                                  std::span<const ByteView> parts) {
  const auto* object = static_cast<const PrecomputedObject*>(base);
  if (object && object->versioned) {
    const WriteCondition condition{object->generation};
    if (parts.empty()) return store_->EraseIf(key, condition);
    return store_->SetPartsIf(key, parts, condition);
  }
  TESSERA_RETURN_IF_ERROR(parts.empty() ? store_->Erase(key) : store_->SetParts(key, parts));
  return true;
}

Result<bool> PrecomputedRegionTarget::Write(const std::string& key, const StoredObject* base,
                                            std::span<const ChunkUpdate> updates) {
  const ScaleInfo& s = scale();
  for (const ChunkUpdate& u : updates)
    if (ObjectOf(u.chunk) != key)
      return InvalidArgument(store_->Describe(key) + ": an update for a chunk of another object (" +
                             ObjectOf(u.chunk) + ")");
  const auto* object = static_cast<const PrecomputedObject*>(base);
  if (!s.sharding) {
    if (updates.size() != 1)
      return InvalidArgument(store_->Describe(key) + ": an unsharded chunk takes one update, not " +
                             std::to_string(updates.size()));
    const std::optional<Bytes>& encoded = updates[0].encoded;
    std::vector<ByteView> parts;
    if (encoded) parts.emplace_back(*encoded);
    TESSERA_ASSIGN_OR_RETURN(bool written, StoreObject(key, base, parts));
    if (!written) return false;
    // A "<name>.gz" sibling goes: it would show again once the plain name is removed, and
    // cloud-volume's file backend, having met .gz files, may try that extension first.
    if (!encoded || !object || object->from_gz_sibling) TESSERA_RETURN_IF_ERROR(store_->Erase(key + ".gz"));
    return true;
  }
  // Sharded: the kept chunks as stored (views into the shard read), then the updates.
  std::map<uint64_t, ByteView> chunks;
  if (object && object->bytes)
    for (const auto& [id, range] : object->chunks)
      chunks[id] = ByteView(*object->bytes).subspan(range.first, range.second - range.first);
  for (const ChunkUpdate& u : updates) {
    const uint64_t id = ChunkId(CellOf(u.chunk));
    if (u.encoded) {
      chunks[id] = ByteView(*u.encoded);
    } else {
      chunks.erase(id);
    }
  }
  if (chunks.empty()) return StoreObject(key, base, {});
  // Written from its pieces: the kept chunks straight from the shard read, no concatenated copy.
  std::vector<std::pair<uint64_t, ByteView>> list(chunks.begin(), chunks.end());
  Result<ShardPieces> file = AssembleShard(*s.sharding, std::move(list), /*data_encoded=*/true);
  if (!file.ok()) return file.status().WithContext(store_->Describe(key));
  return StoreObject(key, base, file->parts);
}

Status PrecomputedRegionTarget::PublishSize(const std::array<int64_t, 3>& size_xyz) {
  VolumeInfo resized = info_;
  resized.scales[static_cast<size_t>(scale_index_)].size = size_xyz;
  const std::string text = resized.ToJson().dump(2) + "\n";
  TESSERA_RETURN_IF_ERROR(store_->Publish("info", AsView(text)));
  info_ = std::move(resized);
  return Status::Ok();
}

Status PrecomputedRegionTarget::Resize(const std::vector<int64_t>& shape) {
  const std::string where = store_->Describe("info");
  if (shape.size() != shape_.size())
    return InvalidArgument(where + ": resize to rank " + std::to_string(shape.size()) + "; the volume has rank " +
                           std::to_string(shape_.size()));
  if (channels_ > 1 && shape[0] != channels_)
    return Unsupported(where + ": the number of channels (" + std::to_string(channels_) + ") cannot change");
  for (int64_t v : shape)
    if (v <= 0) return InvalidArgument(where + ": precomputed volumes need every size > 0 (resize)");
  if (shape == shape_) return Status::Ok();
  if (info_.scales.size() > 1)
    return Unsupported(where + ": resizing one scale of a volume of " + std::to_string(info_.scales.size()) +
                       " scales would leave the others describing another volume; resize volumes of one scale");
  ScaleInfo resized = scale();
  const size_t spatial = channels_ > 1 ? 1 : 0;
  for (int d = 0; d < 3; ++d) resized.size[static_cast<size_t>(d)] = shape[spatial + 2 - static_cast<size_t>(d)];
  TESSERA_RETURN_IF_ERROR(resized.sharding ? ResizeSharded(resized) : ResizeUnsharded(resized));
  SetGeometry();
  std::lock_guard<std::mutex> lock(counts_mu_);
  shard_counts_.reset();
  return Status::Ok();
}

// The chunks whose names change are the edge chunks along a dimension whose size changes (the
// old and the new last chunk) and the chunks past the new end. Each such chunk that stays inside
// is rewritten (cropped, or padded with 0) under its new name; then, after the info says the new
// size (Resize publishes it), the old names are removed. A crash in between leaves the old
// names as unreferenced files, never a chunk missing from either info.
Status PrecomputedRegionTarget::ResizeUnsharded(const ScaleInfo& resized) {
  const index::ChunkGrid old_grid = grid_xyz_, new_grid = resized.GridXyz();
  std::vector<std::string> old_keys;
  for (const std::array<int64_t, 3>& g : CellsChangedByResize(old_grid, new_grid)) {
    const std::string old_key = ChunkKey(old_grid, g);
    old_keys.push_back(old_key);
    if (!InsideGrid(new_grid, g)) continue;  // wholly outside: only removed
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<StoredObject> object, Read(old_key));
    const auto& stored = static_cast<const PrecomputedObject&>(*object);
    if (!stored.bytes) continue;
    TESSERA_ASSIGN_OR_RETURN(Bytes full, DecodeStored(*stored.bytes, ExtentOf(old_grid, g), stored.where));
    // Past the old end the padded box holds 0: the chunk's new extent, cropped from it, holds 0
    // past the old end (growing) and leaves out what lies past the new end (shrinking).
    const std::array<int64_t, 3> keep = ExtentOf(new_grid, g);
    Bytes cropped = Crop(full, keep);
    if (IsAllFill(cropped, fill_)) continue;
    TESSERA_ASSIGN_OR_RETURN(Bytes encoded, EncodeCropped(std::move(cropped), keep));
    TESSERA_RETURN_IF_ERROR(store_->Set(ChunkKey(new_grid, g), encoded));
  }
  // The old names go once the info names the new ones. Every visited chunk's name changed (one of
  // its dimensions did) or it lies outside: none of the old names is a new one.
  TESSERA_RETURN_IF_ERROR(PublishSize(resized.size));
  for (const std::string& key : old_keys) {
    TESSERA_RETURN_IF_ERROR(store_->Erase(key));
    TESSERA_RETURN_IF_ERROR(store_->Erase(key + ".gz"));
  }
  return Status::Ok();
}

// Sharded: the chunk ids (and so the shards) depend on the bits per dimension of the grid, so only
// a resize that keeps them is possible; the edge chunks are re-encoded to their new extent and the
// chunks past the new end dropped, shard by shard, each rewrite conditional like a region write.
Status PrecomputedRegionTarget::ResizeSharded(const ScaleInfo& resized) {
  const index::ChunkGrid old_grid = grid_xyz_, new_grid = resized.GridXyz();
  static const char* kAxis[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d)
    if (index::BitsForExtent(old_grid.chunk_count[d]) != index::BitsForExtent(new_grid.chunk_count[d]))
      return Unsupported(store_->Describe("info") + ": a sharded volume's chunk ids (compressed Morton codes) use " +
                         std::to_string(index::BitsForExtent(old_grid.chunk_count[d])) + " bits along " + kAxis[d] +
                         " for " + std::to_string(old_grid.chunk_count[d]) + " chunks and would need " +
                         std::to_string(index::BitsForExtent(new_grid.chunk_count[d])) + " for " +
                         std::to_string(new_grid.chunk_count[d]) +
                         ": every chunk would move to another shard; write a new volume instead");
  // The shards holding a changing chunk: the old and new edge chunks and those past the new end.
  std::map<std::string, std::vector<std::array<int64_t, 3>>> by_shard;
  for (const std::array<int64_t, 3>& g : CellsChangedByResize(old_grid, new_grid))
    by_shard[ShardKey(scale().sharding->Locate(ChunkId(g)).shard)].push_back(g);
  for (const auto& [key, cells] : by_shard) {
    bool written = false;
    for (int attempt = 0; attempt < kMaxResizeAttempts && !written; ++attempt) {
      TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<StoredObject> object, Read(key));
      const auto& stored = static_cast<const PrecomputedObject&>(*object);
      if (!stored.bytes) {
        written = true;
        break;
      }
      std::vector<ChunkUpdate> updates;
      for (const std::array<int64_t, 3>& cell : cells) {
        const uint64_t id = ChunkId(cell);
        if (!stored.chunks.count(id)) continue;
        ChunkUpdate u;
        u.chunk = channels_ > 1 ? std::vector<int64_t>{0, cell[2], cell[1], cell[0]}
                                : std::vector<int64_t>{cell[2], cell[1], cell[0]};
        if (InsideGrid(new_grid, cell)) {
          Bytes full;
          TESSERA_ASSIGN_OR_RETURN(bool present, DecodeChunk(stored, u.chunk, &full));
          if (!present) continue;
          const std::array<int64_t, 3> keep = ExtentOf(new_grid, cell);
          Bytes cropped = Crop(full, keep);
          if (!IsAllFill(cropped, fill_)) {
            TESSERA_ASSIGN_OR_RETURN(u.encoded, EncodeCropped(std::move(cropped), keep));
          }
        }
        updates.push_back(std::move(u));
      }
      TESSERA_ASSIGN_OR_RETURN(written, Write(key, object.get(), updates));
    }
    if (!written)
      return IoError(store_->Describe(key) + ": gave up after " + std::to_string(kMaxResizeAttempts) +
                     " conflicting writes (resize)");
  }
  return PublishSize(resized.size);
}

}  // namespace tessera::precomputed
