#include "tessera/precomputed/precomputed_driver.h"

#include <algorithm>
#include <cmath>

#include "tessera/core/chunk_shape.h"
#include "tessera/core/text.h"
#include "tessera/driver/driver_support.h"
#include "tessera/index/index.h"
#include "tessera/index/morton.h"
#include "tessera/precomputed/info.h"
#include "tessera/precomputed/precomputed_region_target.h"
#include "tessera/precomputed/precomputed_stream.h"
#include "tessera/precomputed/stored_volume.h"
#include "tessera/precomputed/volume.h"
#include "tessera/spec/spec_error.h"

namespace tessera::precomputed {
namespace {

constexpr std::string_view kName = "precomputed";

using driver::Member;

Status NotHonoured(std::string_view field, const std::string& why) { return FieldNotHonoured(field, kName, why); }

PrecomputedOptions ToPrecomputedOptions(const ArraySpec& s) {
  PrecomputedOptions o;
  const size_t spatial = s.shape.size() - 3;  // the z, y, x entries start here
  o.dtype = s.dtype;
  o.shape = s.shape;
  o.chunk_shape.assign(s.chunk_shape.begin() + spatial, s.chunk_shape.end());
  if (!s.shard_chunks.empty()) o.shard_chunks.assign(s.shard_chunks.begin() + spatial, s.shard_chunks.end());
  // Validate checked the name: one tessera writes.
  const Result<ChunkEncoding> encoding = ParseChunkEncoding(s.precomputed.encoding, /*written=*/true, "encoding");
  o.encoding = encoding.ok() ? *encoding : ChunkEncoding::kRaw;
  o.cseg_block_xyz = s.precomputed.cseg_block_xyz;
  o.jpeg_quality = s.precomputed.jpeg_quality.value_or(kDefaultJpegQuality);
  o.png_level = s.precomputed.png_level.value_or(kDefaultPngLevel);
  o.gzip = *s.codec == Codec::kGzip;
  o.hash = s.precomputed.hash == "murmurhash3_x86_128" ? ShardHash::kMurmurHash3_x86_128 : ShardHash::kIdentity;
  o.resolution_xyz = s.precomputed.resolution_xyz;
  o.voxel_offset_xyz = s.precomputed.voxel_offset_xyz;
  o.key = s.precomputed.scale_key;
  return o;
}

// A relative directory name: no empty, "." or ".." component, no leading '/'.
Status CheckScaleKey(const std::string& key) {
  const Status bad = InvalidField("scale_key", "must be a relative directory name, not \"" + key + "\"");
  if (key.empty() || key.front() == '/') return bad;
  size_t begin = 0;
  while (begin <= key.size()) {
    size_t end = key.find('/', begin);
    if (end == std::string::npos) end = key.size();
    const std::string_view part(key.data() + begin, end - begin);
    if (part.empty() || part == "." || part == "..") return bad;
    begin = end + 1;
  }
  return Status::Ok();
}

// The shards of a sharded volume as spec fields: the hash, and shard_chunks, the box of chunks a
// shard (identity hash) or a staged part (murmurhash3) holds: the chunks sharing all but the low
// preshift (+ minishard, identity) bits of their compressed Morton codes, whose bits go to x, y, z
// in turn while each still has bits (the inverse of the plan's ShardingForBoxes).
void ShardsOf(const nlohmann::json& sharding, const nlohmann::json& desc, ArraySpec* s) {
  const nlohmann::json* size = Member(desc, "size_xyz");
  const nlohmann::json* chunk = Member(desc, "chunk_size_xyz");
  if (!size || !chunk || !size->is_array() || !chunk->is_array() || size->size() != 3 || chunk->size() != 3) return;
  const std::string hash = sharding.value("hash", "identity");
  const int preshift = sharding.value("preshift_bits", 0), minishard = sharding.value("minishard_bits", 0);
  const int box_bits = hash == "identity" ? preshift + minishard : preshift;
  int bits[3], got[3];
  for (int d = 0; d < 3; ++d)
    bits[d] = index::BitsForExtent(index::CeilDiv((*size)[d].get<int64_t>(), (*chunk)[d].get<int64_t>()));
  index::MortonLowBitsPerDimension(bits, box_bits, got);
  s->shard_chunks.assign(s->shape.size(), 1);
  for (int d = 0; d < 3; ++d) s->shard_chunks[s->shape.size() - 1 - d] = int64_t{1} << got[d];  // z, y, x last
  s->precomputed.hash = hash;
}

// The index of scale `key` in the volume's info; kNotFound naming the info when it has none.
Result<int> ScaleIndexOf(const Store& store, const VolumeInfo& info, const std::string& key) {
  for (size_t k = 0; k < info.scales.size(); ++k)
    if (info.scales[k].key == key) return static_cast<int>(k);
  return NotFound(store.Describe("info") + ": no scale " + key);
}

// The scale `key` of the volume's info as stored.
Result<ScaleInfo> StoredScale(const Store& store, const std::string& key) {
  TESSERA_ASSIGN_OR_RETURN(VolumeInfo info, ReadVolumeInfo(store, 0));
  TESSERA_ASSIGN_OR_RETURN(const int scale, ScaleIndexOf(store, info, key));
  return info.scales[static_cast<size_t>(scale)];
}

// A sharded scale continued to `volume`'s shape keeps its stored shard files only when the final
// chunk grid needs the stored number of compressed Morton bits per dimension (the codes, and so
// every chunk's shard and minishard, stay) and the stored sharding is the one the stream plans
// (a volume another tool wrote may split its codes differently). kUnsupported names which differs.
Status CheckShardsStayValid(const Store& store, const PrecomputedOptions& volume, int64_t stored_rows,
                            const Location& location) {
  const int64_t chunk_z = volume.chunk_shape[0];
  const int stored_bits = index::BitsForExtent(index::CeilDiv(stored_rows, chunk_z));
  const int final_bits = index::BitsForExtent(index::CeilDiv(volume.shape[0], chunk_z));
  if (stored_bits != final_bits)
    return FieldError(ErrorKind::kUnsupported, "shape",
                      location.ToString() + ": a sharded scale of " + std::to_string(index::CeilDiv(stored_rows, chunk_z)) +
                          " chunks along z is not continued to " + std::to_string(index::CeilDiv(volume.shape[0], chunk_z)) +
                          ": z's compressed Morton code bits change from " + std::to_string(stored_bits) + " to " +
                          std::to_string(final_bits) + ", which moves stored chunks to other shards (continue to at most " +
                          std::to_string((int64_t{1} << stored_bits) * chunk_z) + " rows, or write a new scale)");
  TESSERA_ASSIGN_OR_RETURN(PrecomputedPlan plan, PlanPrecomputedStream(volume, 1));
  TESSERA_ASSIGN_OR_RETURN(ScaleInfo s, StoredScale(store, volume.key));
  const nlohmann::json stored = s.sharding ? s.sharding->ToJson() : nlohmann::json(nullptr);
  const nlohmann::json planned = plan.info.scales[0].sharding->ToJson();
  if (stored != planned)
    return FieldError(ErrorKind::kUnsupported, "shard_chunks",
                      location.ToString() + ": scale " + volume.key + "'s sharding " + stored.dump() +
                          " is not the one a stream of it writes (" + planned.dump() +
                          "); its shard files are not continued");
  return Status::Ok();
}

// The chunk files of an unsharded scale continued from `first_row` that the continued scale no
// longer has: along z, the stored chunks from first_row up to the stored rows (`stored_chunk_z`
// rows each) whose extents are not among the continued ones (the old edge chunk, cut at the
// stored rows; every one when the chunks change shape), at every (x, y) chunk.
std::vector<std::string> StaleChunkFiles(const PrecomputedOptions& volume, int64_t stored_chunk_z, int64_t first_row,
                                         int64_t stored_rows) {
  auto z_extents = [first_row](int64_t chunk, int64_t end) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int64_t z = first_row; z < end; z += chunk) out.emplace_back(z, std::min(z + chunk, end));
    return out;
  };
  const std::vector<std::pair<int64_t, int64_t>> continued = z_extents(volume.chunk_shape[0], volume.shape[0]);
  const std::array<int64_t, 3>& o = volume.voxel_offset_xyz;
  const int64_t size_x = volume.shape[2], size_y = volume.shape[1];
  const int64_t cx = volume.chunk_shape[2], cy = volume.chunk_shape[1];
  std::vector<std::string> stale;
  for (const auto& [z0, z1] : z_extents(stored_chunk_z, stored_rows)) {
    if (std::find(continued.begin(), continued.end(), std::make_pair(z0, z1)) != continued.end()) continue;
    for (int64_t x = 0; x < size_x; x += cx)
      for (int64_t y = 0; y < size_y; y += cy)
        stale.push_back(volume.key + "/" + std::to_string(o[0] + x) + "-" + std::to_string(o[0] + std::min(x + cx, size_x)) +
                        "_" + std::to_string(o[1] + y) + "-" + std::to_string(o[1] + std::min(y + cy, size_y)) + "_" +
                        std::to_string(o[2] + z0) + "-" + std::to_string(o[2] + z1));
  }
  return stale;
}

// The scale that `options` name: a volume's levels are its scales.
Result<int> ScaleOf(const OpenOptions& options, const Location& location) {
  if (options.level != 0 && options.scale != 0 && options.level != options.scale)
    return FieldError(ErrorKind::kInvalidArgument, "level", "" + std::to_string(options.level) + " and scale " + std::to_string(options.scale) +
                           " name different scales");
  if (!options.dataset.empty())
    return FieldError(ErrorKind::kInvalidArgument, "dataset", "applies to HDF5 files only; " + location.path + " is precomputed");
  return options.level != 0 ? options.level : options.scale;
}

class Driver final : public driver::FormatDriver {
 public:
  Format format() const override { return Format::kPrecomputed; }
  std::string_view name() const override { return kName; }
  std::vector<std::string_view> aliases() const override { return {"neuroglancer_precomputed"}; }
  bool single_object() const override { return false; }
  std::string_view stored_as() const override { return "precomputed volume (info)"; }

  Result<driver::Detection> Detect(const Location& location) const override {
    return driver::DetectByKeys(location, {"info"});
  }

  Status PrepareSpec(ArraySpec* s) const override {
    for (int64_t v : s->shape)
      if (v <= 0)
        return InvalidField("shape", "precomputed volumes have a fixed size: every entry must be > 0, not " +
                                         JoinIntegers(s->shape));
    if (s->shape.size() == 4) {
      // A multi-channel volume's chunks and shards may be given as z, y, x (every channel together).
      if (s->chunk_shape.size() == 3) s->chunk_shape.insert(s->chunk_shape.begin(), s->shape[0]);
      if (s->shard_chunks.size() == 3) s->shard_chunks.insert(s->shard_chunks.begin(), 1);
    }
    return Status::Ok();
  }

  Status ResolveSpec(ArraySpec* s) const override {
    if (!s->codec) s->codec = Codec::kNone;
    const size_t rank = s->shape.size();
    if (rank != 3 && rank != 4)
      return InvalidField("shape", "precomputed volumes are [c,] z, y, x, not rank " + std::to_string(rank));
    if (s->chunk_shape.empty()) return InvalidField("chunk_shape", "precomputed volumes need a chunk shape (z, y, x)");
    // Tessera's chunk shape is rank-long; a precomputed chunk holds every channel.
    if (rank == 4 && s->chunk_shape[0] != s->shape[0])
      return NotHonoured("chunk_shape", "chunks hold every channel: chunk_shape[0] must be " + std::to_string(s->shape[0]));
    if (!s->shard_chunks.empty() && rank == 4 && s->shard_chunks[0] != 1)
      return InvalidField("shard_chunks", "a precomputed shard holds every channel: shard_chunks[0] must be 1");
    if (*s->codec != Codec::kNone && *s->codec != Codec::kGzip)
      return NotHonoured("codec", "shards take none or gzip, not " + std::string(CodecName(*s->codec)));
    if (*s->codec == Codec::kGzip && s->shard_chunks.empty())
      return NotHonoured("codec", "gzip applies to sharded volumes (give shard_chunks)");
    if (s->level) return NotHonoured("level", "gzip uses a fixed level (6); leave level unset");
    if (!s->fill_value.is_null()) {
      TESSERA_ASSIGN_OR_RETURN(FillValue f, ParseFillValue(s->dtype, s->fill_value));
      if (!f.IsZero()) return NotHonoured("fill_value", "has no fill value (chunks not stored read as 0)");
    }
    if (!s->dimension_names.empty()) {
      const std::vector<std::string> zyx = {"z", "y", "x"}, czyx = {"c", "z", "y", "x"};
      if (s->dimension_names != (rank == 3 ? zyx : czyx))
        return NotHonoured("dimension_names", std::string("axes are fixed: ") + (rank == 3 ? "z, y, x" : "c, z, y, x"));
    }
    if (!s->attributes.empty()) return NotHonoured("attributes", "info files carry no attributes");
    const PrecomputedSpecOptions& p = s->precomputed;
    static constexpr DataType kTypes[] = {DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64,
                                          DataType::kInt8,  DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
                                          DataType::kFloat32};
    if (std::find(std::begin(kTypes), std::end(kTypes), s->dtype) == std::end(kTypes))
      return NotHonoured("dtype", "volumes hold uint8/16/32/64, int8/16/32/64 or float32, not " +
                                      std::string(DataTypeName(s->dtype)));
    Result<ChunkEncoding> encoding = ParseChunkEncoding(p.encoding, /*written=*/true, "encoding");
    if (!encoding.ok()) return encoding.status().WithField("encoding");
    const int64_t channels = rank == 4 ? s->shape[0] : 1;
    if (Status held = CheckEncodingHolds(*encoding, s->dtype, channels, "encoding"); !held.ok())
      return Status(ErrorKind::kUnsupported, held.message()).WithField("encoding");
    if (*encoding != ChunkEncoding::kCompressedSegmentation && p.cseg_block_xyz != PrecomputedSpecOptions{}.cseg_block_xyz)
      return NotHonoured("cseg_block_xyz", p.encoding + " chunks have no compressed_segmentation blocks");
    if (p.jpeg_quality && *encoding != ChunkEncoding::kJpeg)
      return NotHonoured("jpeg_quality", p.encoding + " chunks have no jpeg quality (give encoding jpeg)");
    if (p.png_level && *encoding != ChunkEncoding::kPng)
      return NotHonoured("png_level", p.encoding + " chunks have no png level (give encoding png)");
    if (p.jpeg_quality && (*p.jpeg_quality < 1 || *p.jpeg_quality > 100))
      return InvalidField("jpeg_quality", "must be 1..100, not " + std::to_string(*p.jpeg_quality));
    if (p.png_level && (*p.png_level < 0 || *p.png_level > 9))
      return InvalidField("png_level", "must be 0..9, not " + std::to_string(*p.png_level));
    if (p.hash != "identity" && p.hash != "murmurhash3_x86_128")
      return InvalidField("hash", "must be identity or murmurhash3_x86_128, not \"" + p.hash + "\"");
    if (p.hash != PrecomputedSpecOptions{}.hash && s->shard_chunks.empty())
      return NotHonoured("hash", "unsharded volumes have no shard hash (give shard_chunks)");
    TESSERA_RETURN_IF_ERROR(CheckScaleKey(p.scale_key));
    for (int64_t b : p.cseg_block_xyz)
      if (b <= 0) return InvalidField("cseg_block_xyz", "entries must be > 0");
    for (double r : p.resolution_xyz)
      if (!(r > 0)) return InvalidField("resolution_xyz", "entries must be > 0");
    return Status::Ok();
  }

  Status CheckOptionsUnset(const ArraySpec& s, std::string_view writing) const override {
    const PrecomputedSpecOptions d;
    const PrecomputedSpecOptions& p = s.precomputed;
    const char* field = p.encoding != d.encoding                 ? "encoding"
                        : p.cseg_block_xyz != d.cseg_block_xyz     ? "cseg_block_xyz"
                        : p.jpeg_quality != d.jpeg_quality         ? "jpeg_quality"
                        : p.png_level != d.png_level               ? "png_level"
                        : p.hash != d.hash                         ? "hash"
                        : p.resolution_xyz != d.resolution_xyz     ? "resolution_xyz"
                        : p.voxel_offset_xyz != d.voxel_offset_xyz ? "voxel_offset_xyz"
                        : p.scale_key != d.scale_key               ? "scale_key"
                                                                   : nullptr;
    if (field) return FieldNotHonoured(field, writing, "does not take it (a Neuroglancer precomputed option)");
    return Status::Ok();
  }
  void ClearOptions(ArraySpec* s) const override { s->precomputed = {}; }

  // A pyramid is the volume's scales: labels (compressed_segmentation) downsample by mode, and
  // every scale holds every channel.
  Status ResolveMultiscale(ArraySpec* s) const override {
    PyramidSpec& p = s->pyramid;
    if (p.levels == 1) return Status::Ok();
    const size_t rank = s->shape.size();
    const Result<ChunkEncoding> encoding = ParseChunkEncoding(s->precomputed.encoding, /*written=*/false, "encoding");
    if (!p.method && encoding.ok() && IsSegmentationEncoding(*encoding)) p.method = pyramid::DownsampleMethod::kMode;
    if (p.factors.empty()) {
      p.factors.assign(rank, 2);
      if (rank == 4) p.factors[0] = 1;
    }
    if (rank == 4 && p.factors.size() == 4 && p.factors[0] != 1)
      return NotHonoured("downsample_factors", "scales hold every channel: the channel factor must be 1");
    return Status::Ok();
  }

  // Each scale: the resolution times the factors, the voxel offset divided (floored), the next key.
  void ScaleLevelSpec(const ArraySpec& resolved, int level, ArraySpec* s) const override {
    const size_t rank = s->shape.size();
    for (size_t d = rank - 3; d < rank; ++d) {  // x, y, z are the last three, reversed
      int64_t f = 1;
      for (int k = 0; k < level; ++k) f *= resolved.pyramid.factors[d];
      const size_t xyz = rank - 1 - d;
      s->precomputed.resolution_xyz[xyz] = resolved.precomputed.resolution_xyz[xyz] * static_cast<double>(f);
      s->precomputed.voxel_offset_xyz[xyz] = index::FloorDiv(resolved.precomputed.voxel_offset_xyz[xyz], f);
    }
    // "s0" -> "s<level>"; a key without a trailing number gets "_<level>".
    std::string& key = s->precomputed.scale_key;
    size_t digits = key.size();
    while (digits > 0 && key[digits - 1] >= '0' && key[digits - 1] <= '9') --digits;
    if (digits == key.size() || key.size() - digits > 9) {
      key += "_" + std::to_string(level);
    } else {
      key = key.substr(0, digits) + std::to_string(std::stoll(key.substr(digits)) + level);
    }
  }

  int OpenLevelOf(int level) const override { return level; }

  std::vector<int64_t> FallbackChunkShape(const ArraySpec& s) const override {
    if (s.shape.size() != 4) return FormatDriver::FallbackChunkShape(s);
    // A precomputed chunk holds every channel: ~1 MiB over z, y, x.
    std::vector<int64_t> zyx(s.shape.begin() + 1, s.shape.end());
    std::vector<int64_t> chunk = AutoChunkShape(zyx, false, ItemSize(s.dtype) * static_cast<size_t>(s.shape[0]));
    chunk.insert(chunk.begin(), s.shape[0]);
    return chunk;
  }

  Status AbandonShared(const ArraySpec&, Store& root) const override { return root.Erase("info"); }

  Result<std::string> DescribeStored(const Location& location) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(std::optional<StoredVolume> volume, ReadStoredVolume(*store));
    return volume ? DescribeStoredVolume(*volume) : std::string("no precomputed volume");
  }

  // The volume holds the scale when its info lists the spec's scale key.
  Result<bool> HoldsArray(const Location& location, const ArraySpec& resolved) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(std::optional<StoredVolume> volume, ReadStoredVolume(*store));
    if (!volume) return false;
    const std::vector<std::string>& keys = volume->scale_keys;
    return std::find(keys.begin(), keys.end(), resolved.precomputed.scale_key) != keys.end();
  }

  // A volume of several scales as a pyramid: levels are its scales, the factors per dimension the
  // ratio of consecutive scales' resolutions (integers, the same for every scale: a pyramid tessera
  // continues). The info does not record the downsampling method: left unset here (the caller
  // finds it from the stored values, api/stored_method.h).
  Result<PyramidSpec> StoredPyramid(const Location& location) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(VolumeInfo info, ReadVolumeInfo(*store, 0));
    PyramidSpec p;
    p.levels = static_cast<int>(info.scales.size());
    if (p.levels == 1) return p;
    std::array<int64_t, 3> factor_xyz{};
    for (size_t k = 1; k < info.scales.size(); ++k)
      for (int d = 0; d < 3; ++d) {
        const double ratio = info.scales[k].resolution[d] / info.scales[k - 1].resolution[d];
        const int64_t f = static_cast<int64_t>(std::llround(ratio));
        const bool integral = f >= 1 && std::abs(ratio - static_cast<double>(f)) <= 1e-9 * ratio;
        if (!integral || (k > 1 && f != factor_xyz[d]))
          return Unsupported(store->Describe("info") + ": scale " + info.scales[k].key +
                             "'s resolution is not scale " + info.scales[k - 1].key + "'s times the integer factors of "
                             "every other scale; continuing it (mode a) as a pyramid is not supported");
        factor_xyz[d] = f;
      }
    if (info.num_channels > 1) p.factors.push_back(1);
    for (int d = 2; d >= 0; --d) p.factors.push_back(factor_xyz[d]);  // z, y, x
    return p;
  }

  // The info, then the scale folders it lists (stored_volume.h).
  Status Remove(const Location& location) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(std::optional<StoredVolume> volume, ReadStoredVolume(*store));
    return volume ? RemoveStoredVolume(*store, *volume) : Status::Ok();
  }

  void DescribeSpec(const driver::StoredArray& a, ArraySpec* s) const override {
    const nlohmann::json& desc = a.description;
    const nlohmann::json* sharding = Member(desc, "sharding");
    s->codec = sharding && sharding->is_object() && sharding->value("data_encoding", "raw") == "gzip" ? Codec::kGzip
                                                                                                     : Codec::kNone;
    PrecomputedSpecOptions& p = s->precomputed;
    if (sharding && sharding->is_object()) ShardsOf(*sharding, desc, s);
    p.encoding = desc.value("encoding", "raw");
    if (const nlohmann::json* key = Member(desc, "key"); key && key->is_string()) p.scale_key = key->get<std::string>();
    if (const nlohmann::json* r = Member(desc, "resolution_nm_xyz"); r && r->is_array() && r->size() == 3)
      for (int d = 0; d < 3; ++d) p.resolution_xyz[d] = (*r)[d].get<double>();
    if (const nlohmann::json* o = Member(desc, "voxel_offset_xyz"); o && o->is_array() && o->size() == 3)
      for (int d = 0; d < 3; ++d) p.voxel_offset_xyz[d] = (*o)[d].get<int64_t>();
    // The compressed_segmentation block size is in the scale's entry of the info.
    const nlohmann::json* scales = Member(a.metadata, "scales");
    if (scales && scales->is_array() && a.level < static_cast<int>(scales->size())) {
      const nlohmann::json& scale = (*scales)[static_cast<size_t>(a.level)];
      if (const nlohmann::json* b = Member(scale, "compressed_segmentation_block_size");
          b && b->is_array() && b->size() == 3)
        for (int d = 0; d < 3; ++d) p.cseg_block_xyz[d] = (*b)[d].get<int64_t>();
      // The encoder settings the scale records (a copy keeps them), as VolumeInfo read them.
      if (const nlohmann::json* q = Member(scale, "jpeg_quality"); q && q->is_number_integer() && p.encoding == "jpeg")
        p.jpeg_quality = q->get<int>();
      if (const nlohmann::json* l = Member(scale, "png_level"); l && l->is_number_integer() && p.encoding == "png")
        p.png_level = l->get<int>();
    }
  }

  // A volume's info gives its whole size from the start (as a stream's does): it is written when
  // the copy opens, its scale then written through like any region.
  Result<driver::CopyTarget> OpenCopyTarget(const ArraySpec& spec, const Location& location) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/true));
    TESSERA_RETURN_IF_ERROR(WriteScaleInfo(*store, ToPrecomputedOptions(spec)).status());
    TESSERA_ASSIGN_OR_RETURN(VolumeInfo info, ReadVolumeInfo(*store, 0));
    TESSERA_ASSIGN_OR_RETURN(const int scale, ScaleIndexOf(*store, info, spec.precomputed.scale_key));
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<PrecomputedRegionTarget> target, PrecomputedRegionTarget::Open(store, scale));
    driver::CopyTarget out;
    out.target = std::move(target);
    out.publish_rows = [](int64_t) { return Status::Ok(); };
    return out;
  }

  Result<driver::OpenedArray> Open(const Location& location, const OpenOptions& options) const override {
    TESSERA_ASSIGN_OR_RETURN(const int scale, ScaleOf(options, location));
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<PrecomputedVolume> volume, PrecomputedVolume::Open(store, scale));
    const ScaleInfo& s = volume->scale();
    driver::OpenedArray out;
    out.description = {{"type", volume->info().type},
                       {"num_channels", volume->info().num_channels},
                       {"scale", scale},
                       {"scales", volume->info().scales.size()},
                       {"key", s.key},
                       {"size_xyz", s.size},
                       {"voxel_offset_xyz", s.voxel_offset},
                       {"chunk_size_xyz", s.chunk_size},
                       {"resolution_nm_xyz", s.resolution},
                       {"encoding", ChunkEncodingName(s.encoding)},
                       {"sharding", s.sharding ? s.sharding->ToJson() : nlohmann::json(nullptr)}};
    out.metadata = volume->info().ToJson();
    out.level = scale;
    out.level_count = static_cast<int>(volume->info().scales.size());
    out.source = std::move(volume);
    return out;
  }

  Result<std::unique_ptr<RegionTarget>> OpenRegionTarget(const Location& location,
                                                         const OpenOptions& options) const override {
    TESSERA_ASSIGN_OR_RETURN(const int scale, ScaleOf(options, location));
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<PrecomputedRegionTarget> target, PrecomputedRegionTarget::Open(store, scale));
    return std::unique_ptr<RegionTarget>(std::move(target));
  }

  Result<stream::StreamLayout> Plan(const ArraySpec& spec, int threads) const override {
    TESSERA_ASSIGN_OR_RETURN(PrecomputedPlan plan, PlanPrecomputedStream(ToPrecomputedOptions(spec), threads));
    return plan.layout;
  }

  Result<driver::FormatWriter> OpenWriter(const ArraySpec& spec, const Location& location,
                                          const driver::WriterSettings& settings) const override {
    int64_t queue_bytes = 0;
    TESSERA_ASSIGN_OR_RETURN(
        std::shared_ptr<Store> store,
        driver::OpenStreamStore(location, settings, [&] { return Plan(spec, settings.threads); }, &queue_bytes));
    TESSERA_ASSIGN_OR_RETURN(PrecomputedSinkAndWriter ps, OpenPrecomputedStream(store, ToPrecomputedOptions(spec),
                                                                         driver::StreamWriterOptionsOf(settings)));
    // The volume's info exists (another scale's stream reads it) when the stream opens.
    TESSERA_RETURN_IF_ERROR(store->Flush());
    return driver::HoldStream(std::move(ps), store, queue_bytes, [](PrecomputedSinkAndWriter& p) { return p.sink->Finish(); });
  }

  Result<driver::FormatWriter> OpenRegionWriter(const ArraySpec& array, const ArraySpec& region,
                                                const Location& location, const driver::WriterSettings& settings,
                                                std::vector<int64_t> shard_offset) const override {
    int64_t queue_bytes = 0;
    TESSERA_ASSIGN_OR_RETURN(
        std::shared_ptr<Store> store,
        driver::OpenStreamStore(location, settings, [&] { return Plan(region, settings.threads); }, &queue_bytes));
    TESSERA_ASSIGN_OR_RETURN(PrecomputedSinkAndWriter ps,
                             OpenPrecomputedRegionStream(store, ToPrecomputedOptions(array), ToPrecomputedOptions(region),
                                                         std::move(shard_offset), driver::StreamWriterOptionsOf(settings)));
    return driver::HoldRegionStream(std::move(ps), std::move(store), queue_bytes);
  }

  // A multi-channel volume's stream grows its dimension 0, the channel: more channels change every
  // chunk (each holds every channel) and the info's num_channels, which all scales share, so
  // nothing stored would be kept: it is written anew (mode w), not continued.
  Status CheckContinuable(const ArraySpec& stored, const Location& location) const override {
    if (stored.shape.size() == 3) return Status::Ok();
    return FieldError(ErrorKind::kUnsupported, "shape",
                      location.ToString() + ": a multi-channel volume (shape " + JoinIntegers(stored.shape) +
                          ") is not continued: its stream grows dimension 0, the channel, and every chunk of every "
                          "scale holds all channels, so more channels rewrite the whole volume (write it anew with mode w)");
  }

  // A 3-d scale grows along z. Its chunks from first_row on are written by the stream while the
  // info still gives the old extent (readers see the stored rows); at Close the info takes the new
  // size. Unsharded: chunk files under the new extent's names; the old edge chunk files (cut at
  // the old extent) go after the info. Sharded: only while the final grid needs the stored number
  // of compressed Morton bits per dimension (then every stored chunk keeps its shard, and the
  // sharding is the stored one); see PrecomputedSink::ContinueStoredShards for which shard files
  // are replaced when. A multi-channel volume is refused: its stream grows dimension 0, the
  // channel, and every chunk holds every channel.
  Result<driver::FormatWriter> OpenAppendWriter(const ArraySpec& spec, const Location& location,
                                                const driver::WriterSettings& settings, int64_t first_row,
                                                int64_t stored_rows) const override {
    TESSERA_RETURN_IF_ERROR(CheckContinuable(spec, location));
    const PrecomputedOptions volume = ToPrecomputedOptions(spec);
    int64_t queue_bytes = 0;
    TESSERA_ASSIGN_OR_RETURN(
        std::shared_ptr<Store> store,
        driver::OpenStreamStore(location, settings,
                                [&]() -> Result<stream::StreamLayout> {
                                  PrecomputedOptions rows = volume;  // the writer's rows: from first_row on
                                  rows.shape[0] -= first_row;
                                  return PlanPrecomputedLayout(rows, settings.threads);
                                },
                                &queue_bytes));
    if (!volume.shard_chunks.empty())
      TESSERA_RETURN_IF_ERROR(CheckShardsStayValid(*store, volume, stored_rows, location));
    TESSERA_ASSIGN_OR_RETURN(PrecomputedSinkAndWriter ps,
                             OpenPrecomputedContinuation(store, volume, first_row, stored_rows,
                                                         driver::StreamWriterOptionsOf(settings)));
    // Unsharded: the stored chunk files the continued scale replaces under other names.
    std::vector<std::string> stale;
    if (volume.shard_chunks.empty()) {
      TESSERA_ASSIGN_OR_RETURN(ScaleInfo stored, StoredScale(*store, volume.key));
      const int64_t stored_chunk_z = stored.chunk_size[2];
      if (stored_chunk_z != volume.chunk_shape[0] && first_row % stored_chunk_z != 0)
        return InvalidArgument("precomputed scale " + volume.key + ": its chunks change shape, so it is continued from "
                               "a row of both chunk grids, not " + std::to_string(first_row));
      stale = StaleChunkFiles(volume, stored_chunk_z, first_row, stored_rows);
    }
    return driver::HoldStream(std::move(ps), store, queue_bytes, [store, volume, stale](PrecomputedSinkAndWriter& p) {
      // Every shard file complete and stored before the info gives the new size.
      TESSERA_RETURN_IF_ERROR(p.sink->Finish());
      TESSERA_RETURN_IF_ERROR(store->Flush());
      TESSERA_RETURN_IF_ERROR(WriteScaleInfo(*store, volume).status());
      for (const std::string& key : stale) TESSERA_RETURN_IF_ERROR(store->Erase(key));
      return Status::Ok();
    });
  }

  Status CreateMetadata(const ArraySpec& spec, const Location& location) const override {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/true));
    return WriteScaleInfo(*store, ToPrecomputedOptions(spec)).status();
  }
};

}  // namespace

const driver::FormatDriver& PrecomputedDriver() {
  static const Driver driver;
  return driver;
}

}  // namespace tessera::precomputed
