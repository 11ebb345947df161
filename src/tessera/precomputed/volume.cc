#include "tessera/precomputed/volume.h"

#include <algorithm>
#include <cstring>

#include "tessera/codec/gzip_codec.h"
#include "tessera/index/morton.h"
#include "tessera/precomputed/chunk_encoding.h"

namespace tessera::precomputed {
namespace {

constexpr size_t kMaxMinishardCacheEntries = 4096;

std::string JoinKey(const std::string& dir, const std::string& name) { return dir + "/" + name; }

}  // namespace

Result<std::unique_ptr<PrecomputedVolume>> PrecomputedVolume::Open(std::shared_ptr<Store> store, int scale_index) {
  TESSERA_ASSIGN_OR_RETURN(VolumeInfo info, ReadVolumeInfo(*store, scale_index));
  return std::unique_ptr<PrecomputedVolume>(new PrecomputedVolume(std::move(store), std::move(info), scale_index));
}

PrecomputedVolume::PrecomputedVolume(std::shared_ptr<Store> store, VolumeInfo info, int scale_index)
    : store_(std::move(store)), info_(std::move(info)), scale_index_(scale_index) {
  const ScaleInfo& s = scale();
  if (info_.num_channels > 1) {
    shape_.push_back(info_.num_channels);
    chunk_shape_.push_back(info_.num_channels);
  }
  for (int d = 2; d >= 0; --d) {  // (x, y, z) -> C order (z, y, x)
    shape_.push_back(s.size[d]);
    chunk_shape_.push_back(s.chunk_size[d]);
  }
  grid_xyz_ = s.GridXyz();
  fill_ = ZeroFill(info_.dtype);
}

std::string PrecomputedVolume::UnshardedName(const std::array<int64_t, 3>& g) const {
  const ScaleInfo& s = scale();
  std::string name;
  for (int d = 0; d < 3; ++d) {
    const int64_t begin = s.voxel_offset[d] + grid_xyz_.ChunkOrigin(d, g[d]);
    const int64_t end = begin + grid_xyz_.ChunkExtent(d, g[d]);
    name += (d ? "_" : "") + std::to_string(begin) + "-" + std::to_string(end);
  }
  return name;
}

uint64_t PrecomputedVolume::ChunkId(const std::array<int64_t, 3>& g) const {
  return index::CompressedMortonCode(g.data(), grid_xyz_.chunk_count);
}

Result<std::shared_ptr<const std::vector<ChunkEntry>>> PrecomputedVolume::MinishardIndex(const std::string& key,
                                                                                          uint64_t minishard,
                                                                                          uint64_t file_size) const {
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = minishard_cache_.find({key, minishard});
    if (it != minishard_cache_.end()) return it->second;
  }
  const ShardingSpec& spec = *scale().sharding;
  const std::string where = store_->Describe(key);
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> entry, GetExactRange(*store_, key, 16 * minishard, 16));
  if (!entry) return NotFound(where + ": shard disappeared while reading");
  TESSERA_ASSIGN_OR_RETURN(auto range, MinishardIndexRangeFromEntry(spec, *entry, minishard, file_size, where));
  auto entries = std::make_shared<std::vector<ChunkEntry>>();
  if (range.first < range.second) {
    const std::string index_where = where + " minishard index " + ByteRangeText(range.first, range.second);
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> raw, GetExactRange(*store_, key, range.first, range.second - range.first));
    if (!raw) return NotFound(where + ": shard disappeared while reading");
    Result<Bytes> decoded = DecodeShardBytes(spec.minishard_index_encoding, *raw);
    if (!decoded.ok()) return decoded.status().WithContext(index_where);
    TESSERA_ASSIGN_OR_RETURN(*entries, DecodeMinishardIndex(*decoded, spec.ShardIndexBytes(), file_size, index_where));
  }
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (minishard_cache_.size() >= kMaxMinishardCacheEntries) minishard_cache_.clear();
  minishard_cache_[{key, minishard}] = entries;
  return std::shared_ptr<const std::vector<ChunkEntry>>(entries);
}

Result<std::optional<Bytes>> PrecomputedVolume::ReadShardedChunk(const std::array<int64_t, 3>& g,
                                                                  std::string* where) const {
  const ShardingSpec& spec = *scale().sharding;
  const uint64_t id = ChunkId(g);
  const ShardLocation loc = spec.Locate(id);
  const std::string key = JoinKey(scale().key, spec.ShardFileName(loc.shard));
  *where = store_->Describe(key) + " (chunk id " + std::to_string(id) + ")";
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, store_->Size(key));
  if (!size) return std::optional<Bytes>();
  if (*size < spec.ShardIndexBytes())
    return CorruptData(store_->Describe(key) + ": shard of " + std::to_string(*size) + " bytes is shorter than its " +
                       std::to_string(spec.ShardIndexBytes()) + "-byte shard index");
  TESSERA_ASSIGN_OR_RETURN(auto entries, MinishardIndex(key, loc.minishard, *size));
  for (const ChunkEntry& e : *entries) {
    if (e.chunk_id != id) continue;
    *where = store_->Describe(key) + " chunk " + std::to_string(id) + " at " + ByteRangeText(e.begin, e.end);
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> data, GetExactRange(*store_, key, e.begin, e.end - e.begin));
    if (!data) return NotFound(*where + ": shard disappeared while reading");
    Result<Bytes> decoded = DecodeShardBytes(spec.data_encoding, *data);
    if (!decoded.ok()) return decoded.status().WithContext(*where);
    return std::optional<Bytes>(std::move(decoded).value());
  }
  return std::optional<Bytes>();
}

Result<std::optional<Bytes>> PrecomputedVolume::ReadStoredChunk(const std::array<int64_t, 3>& g,
                                                                 std::string* where) const {
  if (scale().sharding) return ReadShardedChunk(g, where);
  const std::string key = JoinKey(scale().key, UnshardedName(g));
  *where = store_->Describe(key);
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> data, store_->Get(key));
  if (data) return data;
  // Some writers store gzip-compressed chunks as "<name>.gz".
  TESSERA_ASSIGN_OR_RETURN(data, store_->Get(key + ".gz"));
  if (!data) return std::optional<Bytes>();
  *where = store_->Describe(key + ".gz");
  Bytes out;
  Status st = GzipCodec(6).Decode(*data, &out);
  if (!st.ok()) return st.WithContext(*where);
  return std::optional<Bytes>(std::move(out));
}

Result<bool> PrecomputedVolume::ReadChunk(std::span<const int64_t> coords, Bytes* out) const {
  const ScaleInfo& s = scale();
  const size_t spatial = info_.num_channels > 1 ? 1 : 0;
  std::array<int64_t, 3> g, extent;
  for (int d = 0; d < 3; ++d) {
    g[d] = coords[spatial + 2 - d];
    extent[d] = grid_xyz_.ChunkExtent(d, g[d]);
  }
  std::string where;
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> stored, ReadStoredChunk(g, &where));
  if (!stored) return false;
  const int64_t item = static_cast<int64_t>(ItemSize(info_.dtype));
  const int64_t channels = info_.num_channels;
  TESSERA_ASSIGN_OR_RETURN(Bytes voxels,
                           DecodeChunk(s, channels, info_.dtype, extent, std::move(stored).value(), where));
  // Stored: C order [c, ez, ey, ex]; out: the full chunk [c, cz, cy, cx], zero past the volume.
  out->assign(static_cast<size_t>(channels * s.chunk_size[0] * s.chunk_size[1] * s.chunk_size[2] * item), 0);
  CopyChunkCorner(extent, s.chunk_size, channels, item, voxels.data(), out->data(), /*to_full=*/true);
  return true;
}

}  // namespace tessera::precomputed
