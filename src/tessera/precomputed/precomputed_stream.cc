#include "tessera/precomputed/precomputed_stream.h"

#include <algorithm>
#include <cstring>

#include "tessera/core/parallel.h"
#include "tessera/index/index.h"
#include "tessera/index/morton.h"
#include "tessera/precomputed/chunk_encoding.h"
#include "tessera/precomputed/shard_format.h"
#include "tessera/stream/tile_encoder.h"
#include "tessera/spec/spec_error.h"

namespace tessera::precomputed {
namespace {

// Minishards per shard are capped at 2^6: small shard indices, a few chunks per minishard index.
constexpr int kMaxMinishardBits = 6;

int Log2Exact(int64_t v) {
  int k = 0;
  while ((int64_t{1} << k) < v) ++k;
  return (int64_t{1} << k) == v ? k : -1;
}

// Crops the padded tile to the volume, then encodes it (raw / compressed_segmentation, then
// gzip when the shard data is gzip-encoded).
class PrecomputedTileEncoder final : public stream::TileEncoder {
 public:
  PrecomputedTileEncoder(const VolumeInfo& info, const stream::StreamLayout& layout)
      : scale_(info.scales[0]), channels_(info.num_channels), item_(layout.item_bytes), layout_(layout),
        tile_grid_(layout.TileGrid()),
        gzip_data_(scale_.sharding && scale_.sharding->data_encoding == ShardEncoding::kGzip) {}

  Status Encode(const int64_t* tile_coords, ByteView tile, Bytes* out) const override {
    const int spatial = channels_ > 1 ? 1 : 0;
    std::array<int64_t, 3> extent;  // (x, y, z)
    for (int d = 0; d < 3; ++d) {
      const int dim = spatial + 2 - d;  // C order index of x, y, z
      extent[d] = tile_grid_.ChunkExtent(dim, tile_coords[dim]);
    }
    Bytes cropped(static_cast<size_t>(channels_ * extent[2] * extent[1] * extent[0] * item_));
    CopyChunkCorner(extent, scale_.chunk_size, channels_, item_, tile.data(), cropped.data(), /*to_full=*/false);
    TESSERA_ASSIGN_OR_RETURN(Bytes encoded, EncodeChunk(scale_, channels_, layout_.dtype, extent, std::move(cropped)));
    if (gzip_data_) {
      TESSERA_ASSIGN_OR_RETURN(*out, EncodeShardBytes(ShardEncoding::kGzip, encoded));
    } else {
      *out = std::move(encoded);
    }
    return Status::Ok();
  }

 private:
  const ScaleInfo scale_;
  const int64_t channels_;
  const int64_t item_;
  const stream::StreamLayout layout_;
  const index::ChunkGrid tile_grid_;
  const bool gzip_data_;
};

// The sharding spec whose shards are the boxes of `box_chunks_xyz` chunks, or an error saying
// which box shapes the volume's compressed Morton codes allow.
Result<ShardingSpec> ShardingForBoxes(const index::ChunkGrid& grid_xyz, const std::array<int64_t, 3>& box_xyz,
                                      ShardHash hash, bool gzip) {
  int bits[3], want[3], total = 0, box_bits = 0;
  for (int d = 0; d < 3; ++d) {
    bits[d] = index::BitsForExtent(grid_xyz.chunk_count[d]);
    const int k = Log2Exact(box_xyz[d]);
    if (k < 0) return FieldError(ErrorKind::kInvalidArgument, "shard_chunks", "precomputed shards need powers of two");
    want[d] = std::min(k, bits[d]);  // a box wider than the grid covers the whole dimension
    total += bits[d];
    box_bits += want[d];
  }
  if (total > 64) return Unsupported("precomputed: the chunk grid needs more than 64 bits of compressed Morton code");
  // The low box_bits bits of the compressed Morton code must be exactly want[d] bits of each dim.
  int got[3];
  index::MortonLowBitsPerDimension(bits, box_bits, got);
  if (got[0] != want[0] || got[1] != want[1] || got[2] != want[2]) {
    std::string allowed;  // the boxes of the low 1, 2, ... bits, as Z,Y,X chunk counts
    for (int k = 1; k <= total; ++k) {
      int box[3];
      index::MortonLowBitsPerDimension(bits, k, box);
      allowed += (allowed.empty() ? "" : ", ") + std::to_string(int64_t{1} << box[2]) + "," +
                 std::to_string(int64_t{1} << box[1]) + "," + std::to_string(int64_t{1} << box[0]);
    }
    return FieldError(ErrorKind::kInvalidArgument, "shard_chunks",
                      "precomputed shards are boxes of chunks sharing the high bits of their compressed Morton "
                      "codes; for this volume the allowed Z,Y,X chunk counts are: " + allowed);
  }
  ShardingSpec s;
  s.hash = hash;
  s.minishard_bits = std::min(box_bits, kMaxMinishardBits);
  s.preshift_bits = box_bits - s.minishard_bits;
  s.shard_bits = total - box_bits;
  if (hash == ShardHash::kMurmurHash3_x86_128) {
    // Hashing scatters boxes over shards: keep about as many shards as boxes.
    s.preshift_bits = box_bits;
    s.minishard_bits = std::min(3, total - box_bits);
    s.shard_bits = std::max(0, total - box_bits - s.minishard_bits);
  }
  s.minishard_index_encoding = gzip ? ShardEncoding::kGzip : ShardEncoding::kRaw;
  s.data_encoding = gzip ? ShardEncoding::kGzip : ShardEncoding::kRaw;
  return s;
}

}  // namespace

Result<PrecomputedPlan> PlanPrecomputedStream(const PrecomputedOptions& o, int threads) {
  const size_t rank = o.shape.size();
  if (rank != 3 && rank != 4) return InvalidArgument("shape: precomputed volumes are [c,] z, y, x");
  if (o.chunk_shape.size() != 3) return FieldError(ErrorKind::kInvalidArgument, "chunk_shape", "precomputed chunks are z, y, x");
  if (!o.shard_chunks.empty() && o.shard_chunks.size() != 3)
    return FieldError(ErrorKind::kInvalidArgument, "shard_chunks", "precomputed shards are z, y, x");
  for (int64_t v : o.shape)
    if (v <= 0) return InvalidArgument("shape: precomputed volumes have a fixed size: every entry must be > 0");
  for (int64_t v : o.chunk_shape)
    if (v <= 0) return FieldError(ErrorKind::kInvalidArgument, "chunk_shape", "entries must be > 0");
  static const DataType kTypes[] = {DataType::kUInt8,  DataType::kUInt16, DataType::kUInt32, DataType::kUInt64,
                                    DataType::kInt8,   DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
                                    DataType::kFloat32};
  if (std::find(std::begin(kTypes), std::end(kTypes), o.dtype) == std::end(kTypes))
    return Unsupported("precomputed: data type " + std::string(DataTypeName(o.dtype)) +
                       " (supported: uint8/16/32/64, int8/16/32/64, float32)");
  const int64_t channels = rank == 4 ? o.shape[0] : 1;
  TESSERA_RETURN_IF_ERROR(CheckEncodingHolds(o.encoding, o.dtype, channels, "precomputed: encoding"));
  TESSERA_RETURN_IF_ERROR(CheckEncodingWritten(o.encoding, "precomputed: encoding"));
  if (o.gzip && o.shard_chunks.empty())
    return InvalidArgument("codec: precomputed gzip applies to sharded volumes (give shard_chunks)");

  const size_t s0 = rank - 3;
  PrecomputedPlan p;
  VolumeInfo& info = p.info;
  info.type = IsSegmentationEncoding(o.encoding) ? "segmentation" : "image";
  info.dtype = o.dtype;
  info.num_channels = channels;
  ScaleInfo scale;
  scale.key = o.key;
  for (int d = 0; d < 3; ++d) {
    scale.size[d] = o.shape[s0 + 2 - d];
    scale.chunk_size[d] = o.chunk_shape[2 - d];
  }
  scale.resolution = o.resolution_xyz;
  scale.voxel_offset = o.voxel_offset_xyz;
  scale.encoding = o.encoding;
  scale.compressed_segmentation_block_size = o.cseg_block_xyz;
  if (o.encoding == ChunkEncoding::kJpeg) scale.jpeg_quality = o.jpeg_quality;
  if (o.encoding == ChunkEncoding::kPng) scale.png_level = o.png_level;
  if (!o.shard_chunks.empty()) {
    const std::array<int64_t, 3> box{o.shard_chunks[2], o.shard_chunks[1], o.shard_chunks[0]};
    TESSERA_ASSIGN_OR_RETURN(scale.sharding, ShardingForBoxes(scale.GridXyz(), box, o.hash, o.gzip));
  }
  info.scales.push_back(scale);

  TESSERA_ASSIGN_OR_RETURN(p.layout, PlanPrecomputedLayout(o, threads));
  return p;
}

Result<stream::StreamLayout> PlanPrecomputedLayout(const PrecomputedOptions& o, int threads) {
  const size_t rank = o.shape.size();
  const int64_t channels = rank == 4 ? o.shape[0] : 1;
  stream::LayoutRequest r;
  r.dtype = o.dtype;
  r.shape = o.shape;
  r.tile_shape = o.chunk_shape;
  r.tiles_per_shard = o.shard_chunks.empty() ? std::vector<int64_t>{1, 1, 1} : o.shard_chunks;
  if (rank == 4) {
    r.tile_shape.insert(r.tile_shape.begin(), channels);
    r.tiles_per_shard.insert(r.tiles_per_shard.begin(), 1);
  }
  const int64_t tile_bytes = index::Product(static_cast<int>(rank), r.tile_shape.data()) *
                             static_cast<int64_t>(ItemSize(o.dtype));
  // Worst cases (for the memory plan): compressed_segmentation with 32-bit indices per voxel plus
  // headers and tables; a jpeg of noise at quality 100 (about 1.5x, plus its tables); png's
  // stored deflate blocks and a filter byte per row; gzip's stored blocks add about 0.1%.
  int64_t worst = tile_bytes;
  if (IsSegmentationEncoding(o.encoding)) worst = 3 * tile_bytes + 4096;  // compresso: ids + locations + windows
  if (o.encoding == ChunkEncoding::kJpeg) worst = 2 * tile_bytes + 4096;
  if (o.encoding == ChunkEncoding::kPng) worst = tile_bytes + tile_bytes / 64 + 4096;
  if (o.gzip) worst += worst / 500 + 64;
  r.max_compressed_tile_bytes = worst;
  r.threads = threads;
  return stream::PlanStreamLayout(r);
}

PrecomputedSink::PrecomputedSink(std::shared_ptr<Store> store, ScaleInfo scale, stream::StreamLayout layout,
                                 std::optional<Bytes> previous_info)
    : store_(std::move(store)),
      scale_(std::move(scale)),
      previous_info_(std::move(previous_info)),
      layout_(layout),
      tile_grid_(layout.TileGrid()),
      grid_xyz_(scale_.GridXyz()) {}

std::array<int64_t, 3> PrecomputedSink::ChunkXyz(std::span<const int64_t> shard_coords, int64_t slot) const {
  int64_t position[kMaxRank];
  tile_grid_.PositionOfSlot(slot, position);
  const int spatial = layout_.rank == 4 ? 1 : 0;
  std::array<int64_t, 3> g;
  for (int d = 0; d < 3; ++d) {
    const int dim = spatial + 2 - d;
    g[d] = tile_grid_.ChunkInShard(dim, shard_coords[dim], position[dim]);
  }
  return g;
}

Status PrecomputedSink::WriteShard(const stream::EncodedShard& shard) {
  const ScaleInfo& s = scale_;
  // The box's chunks: (grid cell, encoded bytes), in slot order.
  std::vector<std::pair<std::array<int64_t, 3>, ByteView>> present;
  for (size_t k = 0; k < shard.slots.size(); ++k) {
    if (!shard.slots[k].present) continue;
    present.emplace_back(ChunkXyz(shard.coords, static_cast<int64_t>(k)), shard.slots[k].encoding());
  }
  if (!s.sharding) {
    for (const auto& [g, data] : present) {
      std::string name;
      for (int d = 0; d < 3; ++d) {
        const int64_t begin = s.voxel_offset[d] + grid_xyz_.ChunkOrigin(d, g[d]);
        const int64_t end = begin + grid_xyz_.ChunkExtent(d, g[d]);
        if (d > 0) name += '_';
        name.append(std::to_string(begin)).append(1, '-').append(std::to_string(end));
      }
      TESSERA_RETURN_IF_ERROR(store_->Set(Key(name), data));
    }
    return Status::Ok();
  }
  const ShardingSpec& spec = *s.sharding;
  std::map<uint64_t, std::vector<std::pair<uint64_t, ByteView>>> by_shard;
  for (const auto& [g, data] : present) {
    const uint64_t id = index::CompressedMortonCode(g.data(), grid_xyz_.chunk_count);
    by_shard[spec.Locate(id).shard].emplace_back(id, data);
  }
  const int z_dim = layout_.rank == 4 ? 1 : 0;
  const bool deferred = deferred_shard_z_ >= 0 && shard.coords[z_dim] == deferred_shard_z_;
  for (auto& [shard_number, list] : by_shard) {
    TESSERA_ASSIGN_OR_RETURN(Bytes file, EncodeShard(spec, std::move(list), /*data_encoded=*/true));
    if (spec.hash == ShardHash::kIdentity && !deferred) {
      // The box is the whole shard: store it complete, once.
      TESSERA_RETURN_IF_ERROR(store_->Set(Key(spec.ShardFileName(shard_number)), file));
    } else {
      TESSERA_RETURN_IF_ERROR(StagePart(shard_number, file));
    }
  }
  return Status::Ok();
}

Status PrecomputedSink::StagePart(uint64_t shard, const Bytes& file) {
  const std::string part = Key(scale_.sharding->ShardFileName(shard) + ".part-" + std::to_string(next_part_++));
  TESSERA_RETURN_IF_ERROR(store_->Set(part, file));
  std::lock_guard<std::mutex> lock(parts_mu_);
  parts_[shard].push_back(part);
  return Status::Ok();
}

void PrecomputedSink::ContinueStoredShards(int64_t first_chunk_z, int64_t deferred_shard_z) {
  continued_from_chunk_z_ = first_chunk_z;
  deferred_shard_z_ = deferred_shard_z;
}

int64_t PrecomputedSink::ChunkZOf(uint64_t id) const {
  // The inverse of index::CompressedMortonCode for z alone: walk the same bit order.
  int bits[3], n = 0;
  for (int d = 0; d < 3; ++d) n = std::max(n, bits[d] = index::BitsForExtent(grid_xyz_.chunk_count[d]));
  int64_t z = 0;
  int j = 0;
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      if (i < bits[d]) {
        if (d == 2) z |= static_cast<int64_t>((id >> j) & 1u) << i;
        ++j;
      }
  return z;
}

Status PrecomputedSink::Finish() {
  const ScaleInfo& s = scale_;
  if (!s.sharding) return Status::Ok();
  const ShardingSpec& spec = *s.sharding;
  std::lock_guard<std::mutex> lock(parts_mu_);
  for (auto& [shard, part_keys] : parts_) {
    // One shard at a time: decode every part's chunks and write the merged shard.
    std::vector<Bytes> parts;
    std::vector<std::pair<uint64_t, ByteView>> chunks;
    parts.reserve(part_keys.size() + 1);
    if (continued_from_chunk_z_ >= 0) {
      // A continued scale: the stored shard's chunks below the rows this stream wrote stay, byte for byte.
      const std::string key = Key(spec.ShardFileName(shard));
      TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> stored, store_->Get(key));
      if (stored) {
        parts.push_back(std::move(*stored));
        const Bytes& file = parts.back();
        TESSERA_ASSIGN_OR_RETURN(std::vector<ChunkEntry> entries, DecodeShardEntries(spec, file, store_->Describe(key)));
        for (const ChunkEntry& e : entries)
          if (ChunkZOf(e.chunk_id) < continued_from_chunk_z_)
            chunks.emplace_back(e.chunk_id, ByteView(file).subspan(e.begin, e.end - e.begin));
      }
    }
    for (const std::string& key : part_keys) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> part, store_->Get(key));
      if (!part) return NotFound(store_->Describe(key) + ": staged shard part disappeared");
      parts.push_back(std::move(*part));
      const Bytes& file = parts.back();
      for (uint64_t m = 0; m < spec.num_minishards(); ++m) {
        TESSERA_ASSIGN_OR_RETURN(auto range, MinishardIndexRange(spec, file, m, file.size(), store_->Describe(key)));
        if (range.first == range.second) continue;
        TESSERA_ASSIGN_OR_RETURN(Bytes index, DecodeShardBytes(spec.minishard_index_encoding,
                                                               ByteView(file).subspan(range.first,
                                                                                      range.second - range.first)));
        TESSERA_ASSIGN_OR_RETURN(std::vector<ChunkEntry> entries,
                                 DecodeMinishardIndex(index, spec.ShardIndexBytes(), file.size(), store_->Describe(key)));
        for (const ChunkEntry& e : entries)
          chunks.emplace_back(e.chunk_id, ByteView(file).subspan(e.begin, e.end - e.begin));
      }
    }
    TESSERA_ASSIGN_OR_RETURN(Bytes merged, EncodeShard(spec, std::move(chunks), /*data_encoded=*/true));
    TESSERA_RETURN_IF_ERROR(store_->Set(Key(spec.ShardFileName(shard)), merged));
    for (const std::string& key : part_keys) TESSERA_RETURN_IF_ERROR(store_->Erase(key));
  }
  parts_.clear();
  return Status::Ok();
}

Status PrecomputedSink::DiscardUnpublished() {
  std::lock_guard<std::mutex> lock(parts_mu_);
  Status first;
  for (auto& [shard, part_keys] : parts_)
    for (const std::string& key : part_keys) {
      Status st = store_->Erase(key);
      if (first.ok()) first = st;
    }
  parts_.clear();
  return first;
}

Status PrecomputedSink::Abandon() {
  (void)DiscardUnpublished();
  if (previous_info_) return store_->Set("info", *previous_info_);
  return store_->Erase("info");
}

Result<std::optional<Bytes>> WriteScaleInfo(Store& store, const PrecomputedOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(PrecomputedPlan plan, PlanPrecomputedStream(options, 1));
  const ScaleInfo scale = plan.info.scales[0];
  VolumeInfo info = plan.info;
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> previous, store.Get("info"));
  if (previous) {
    // Another scale of an existing volume: keep its other scales, ordered by resolution.
    const std::string where = store.Describe("info");
    nlohmann::json j = nlohmann::json::parse(previous->begin(), previous->end(), nullptr, false);
    if (j.is_discarded()) return CorruptData(where + ": malformed JSON (not adding a scale to it)");
    Result<VolumeInfo> existing = VolumeInfo::FromJson(j);
    if (!existing.ok()) return existing.status().WithContext(where);
    if (existing->dtype != info.dtype || existing->num_channels != info.num_channels || existing->type != info.type)
      return InvalidArgument(where + " describes a " + existing->type + " volume of " +
                             std::string(DataTypeName(existing->dtype)) + " x " + std::to_string(existing->num_channels) +
                             " channel(s); this stream is " + info.type + " " + std::string(DataTypeName(info.dtype)) +
                             " x " + std::to_string(info.num_channels));
    info = std::move(existing).value();
    std::erase_if(info.scales, [&](const ScaleInfo& s) { return s.key == scale.key; });
    info.scales.push_back(scale);
    std::stable_sort(info.scales.begin(), info.scales.end(),
                     [](const ScaleInfo& a, const ScaleInfo& b) { return a.resolution[0] < b.resolution[0]; });
  }
  const std::string text = info.ToJson().dump(2) + "\n";
  TESSERA_RETURN_IF_ERROR(store.Set("info", AsView(text)));
  return previous;
}

Result<PrecomputedSinkAndWriter> OpenPrecomputedStream(std::shared_ptr<Store> store, const PrecomputedOptions& options,
                                                stream::StreamWriterOptions writer_options) {
  const int threads = writer_options.threads > 0 ? writer_options.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(PrecomputedPlan plan, PlanPrecomputedStream(options, threads));
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> previous, WriteScaleInfo(*store, options));
  PrecomputedSinkAndWriter s;
  s.sink = std::make_unique<PrecomputedSink>(store, plan.info.scales[0], plan.layout, std::move(previous));
  Result<std::unique_ptr<stream::StreamWriter>> writer =
      stream::StreamWriter::Create(plan.layout, std::make_shared<PrecomputedTileEncoder>(plan.info, plan.layout),
                                   ZeroFill(options.dtype), s.sink.get(), writer_options);
  if (!writer.ok()) {
    (void)s.sink->Abandon();
    return writer.status();
  }
  s.writer = std::move(writer).value();
  return s;
}

Result<PrecomputedSinkAndWriter> OpenPrecomputedRegionStream(std::shared_ptr<Store> store, const PrecomputedOptions& volume,
                                                      const PrecomputedOptions& region,
                                                      std::vector<int64_t> shard_offset,
                                                      stream::StreamWriterOptions writer_options) {
  if (!volume.shard_chunks.empty() && volume.hash != ShardHash::kIdentity)
    return Unsupported("hash: a region of a murmurhash3_x86_128-sharded volume shares its shard files with other "
                       "regions; write it with one stream (identity hash shards are whole boxes)");
  const int threads = writer_options.threads > 0 ? writer_options.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(PrecomputedPlan whole, PlanPrecomputedStream(volume, threads));
  TESSERA_ASSIGN_OR_RETURN(PrecomputedPlan part, PlanPrecomputedStream(region, threads));
  PrecomputedSinkAndWriter s;
  s.sink = std::make_unique<PrecomputedSink>(store, whole.info.scales[0], whole.layout, std::nullopt);
  s.region_sink = std::make_unique<stream::OffsetShardSink>(s.sink.get(), std::move(shard_offset));
  TESSERA_ASSIGN_OR_RETURN(s.writer, stream::StreamWriter::Create(
                                         part.layout, std::make_shared<PrecomputedTileEncoder>(part.info, part.layout),
                                         ZeroFill(region.dtype), s.region_sink.get(), writer_options));
  return s;
}


Result<PrecomputedSinkAndWriter> OpenPrecomputedContinuation(std::shared_ptr<Store> store,
                                                             const PrecomputedOptions& volume, int64_t first_row,
                                                             int64_t stored_rows,
                                                             stream::StreamWriterOptions writer_options) {
  const int64_t chunk_z = volume.chunk_shape[0];
  const int64_t shard_rows = chunk_z * (volume.shard_chunks.empty() ? 1 : volume.shard_chunks[0]);
  if (volume.shape.size() != 3 || first_row % shard_rows != 0 || first_row > stored_rows || stored_rows > volume.shape[0])
    return InvalidArgument("precomputed scale " + volume.key + ": a continuation starts at a shard boundary along z "
                           "(every " + std::to_string(shard_rows) + " rows) at or below the stored rows (" +
                           std::to_string(stored_rows) + "), not at row " + std::to_string(first_row));
  const int threads = writer_options.threads > 0 ? writer_options.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(PrecomputedPlan whole, PlanPrecomputedStream(volume, threads));
  PrecomputedOptions rows = volume;  // the writer's rows: from first_row on
  rows.shape[0] -= first_row;
  // The layout only: the rows' own grid may allow other shard boxes than the volume's; the
  // encoder crops and encodes each chunk as the volume's (its tiles are the volume's chunks).
  TESSERA_ASSIGN_OR_RETURN(stream::StreamLayout layout, PlanPrecomputedLayout(rows, threads));
  PrecomputedSinkAndWriter s;
  s.sink = std::make_unique<PrecomputedSink>(store, whole.info.scales[0], whole.layout, std::nullopt);
  if (!volume.shard_chunks.empty()) {
    // Parts an interrupted stream staged (killed before it merged them) are no reader's: they go,
    // so that this stream's parts are the only ones and nothing of them is left after it.
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> keys, store->List(volume.key + "/"));
    for (const std::string& key : keys)
      if (key.find(".shard.part-") != std::string::npos) TESSERA_RETURN_IF_ERROR(store->Erase(key));
    // The stored edge chunk row grows when the stored rows end inside a chunk.
    const bool edge_grows = stored_rows % chunk_z != 0 && stored_rows < volume.shape[0];
    s.sink->ContinueStoredShards(first_row / chunk_z, edge_grows ? first_row / shard_rows : -1);
  }
  s.region_sink = std::make_unique<stream::OffsetShardSink>(s.sink.get(), std::vector<int64_t>{first_row / shard_rows, 0, 0});
  TESSERA_ASSIGN_OR_RETURN(s.writer, stream::StreamWriter::Create(
                                         layout, std::make_shared<PrecomputedTileEncoder>(whole.info, layout),
                                         ZeroFill(volume.dtype), s.region_sink.get(), writer_options));
  return s;
}

}  // namespace tessera::precomputed
