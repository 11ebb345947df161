#include "tessera/spec/array_spec.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "tessera/core/limits.h"
#include "tessera/core/chunk_shape.h"
#include "tessera/core/text.h"
#include "tessera/spec/spec_error.h"

namespace tessera {

namespace {

constexpr std::array<std::string_view, 5> kCodecNames = {"none", "zstd", "gzip", "blosc-lz4", "blosc-zstd"};

// The fields an error can be about, as ResolveSpec spells them at the start of its messages.
constexpr std::array<std::string_view, 30> kSpecFields = {
    "pyramid",        "downsample",    "downsample_factors", "axes",         "voxel_size",
    "dtype",          "shape",         "chunk_shape",   "shard_chunks",       "codec",
    "level",          "fill_value",    "dimension_names", "attributes",       "index_at_start",
    "encoding",       "cseg_block_xyz", "hash",         "resolution_xyz",     "voxel_offset_xyz",
    "scale_key",      "dataset",       "shuffle",       "fletcher32",         "backend",
    "discard",        "threads",       "scale",         "location",
    "format"};

Status Invalid(std::string_view field, const std::string& message) { return InvalidField(field, message); }
Status NotHonoured(std::string_view field, Format format, const std::string& why) {
  return FieldNotHonoured(field, FormatName(format), why);
}

// An optional per-dimension list (empty = the format's default): one positive entry per dimension.
Status CheckOptionalExtents(std::string_view field, const std::vector<int64_t>& values, size_t rank) {
  if (values.empty()) return Status::Ok();
  if (values.size() != rank)
    return Invalid(field, JoinIntegers(values) + " has " + std::to_string(values.size()) + " entries for a rank-" +
                              std::to_string(rank) + " array");
  for (int64_t v : values)
    if (v <= 0) return Invalid(field, "entries must be > 0, not " + JoinIntegers(values));
  return Status::Ok();
}

Status CheckGeometry(const ArraySpec& s) {
  const size_t rank = s.shape.size();
  if (rank == 0) return Invalid("shape", "an array needs at least one dimension");
  if (rank > static_cast<size_t>(kMaxRank))
    return Invalid("shape", "rank " + std::to_string(rank) + " exceeds the limit of " + std::to_string(kMaxRank));
  if (s.shape[0] < 0) return Invalid("shape", "entries must be >= 0 (dimension 0 may be 0: unbounded), not " + JoinIntegers(s.shape));
  for (size_t d = 1; d < rank; ++d)
    if (s.shape[d] <= 0)
      return Invalid("shape", "entries after the first must be > 0, not " + JoinIntegers(s.shape) + " (only dimension 0 may be 0: unbounded)");
  TESSERA_RETURN_IF_ERROR(CheckOptionalExtents("chunk_shape", s.chunk_shape, rank));
  TESSERA_RETURN_IF_ERROR(CheckOptionalExtents("shard_chunks", s.shard_chunks, rank));
  if (!s.dimension_names.empty() && s.dimension_names.size() != rank)
    return Invalid("dimension_names", std::to_string(s.dimension_names.size()) + " names for a rank-" +
                                          std::to_string(rank) + " array");
  if (!s.attributes.is_object()) return Invalid("attributes", "must be a JSON object, not " + s.attributes.dump());
  return Status::Ok();
}

Status CheckLevel(const ArraySpec& s) {
  if (!s.level) return Status::Ok();
  const int l = *s.level;
  switch (*s.codec) {
    case Codec::kNone:
      return Invalid("level", "codec none has no level (got " + std::to_string(l) + ")");
    case Codec::kZstd:
      if (l < -131072 || l > 22) return Invalid("level", "zstd levels are -131072..22, not " + std::to_string(l));
      return Status::Ok();
    case Codec::kGzip:
    case Codec::kBloscLz4:
    case Codec::kBloscZstd:
      if (l < 0 || l > 9)
        return Invalid("level", std::string(CodecName(*s.codec)) + " levels are 0..9, not " + std::to_string(l));
      return Status::Ok();
  }
  return Status::Ok();
}

// The options of the formats other than `format` must be left at their defaults.
Status CheckForeignOptions(const ArraySpec& s, Format format) {
  if (format != Format::kZarr3 && !(s.zarr == ZarrSpecOptions{}))
    return NotHonoured("index_at_start", format, "has no shard index (a Zarr v3 option)");
  if (format != Format::kHdf5) {
    const Hdf5SpecOptions d;
    if (s.hdf5.shuffle != d.shuffle) return NotHonoured("shuffle", format, "has no shuffle filter (an HDF5 option)");
    if (s.hdf5.fletcher32 != d.fletcher32)
      return NotHonoured("fletcher32", format, "has no fletcher32 checksum (an HDF5 option)");
    if (s.hdf5.dataset != d.dataset) return NotHonoured("dataset", format, "has no datasets (an HDF5 option)");
  }
  if (format != Format::kPrecomputed) {
    const PrecomputedSpecOptions d;
    const PrecomputedSpecOptions& p = s.precomputed;
    const char* field = p.encoding != d.encoding               ? "encoding"
                        : p.cseg_block_xyz != d.cseg_block_xyz   ? "cseg_block_xyz"
                        : p.hash != d.hash                       ? "hash"
                        : p.resolution_xyz != d.resolution_xyz   ? "resolution_xyz"
                        : p.voxel_offset_xyz != d.voxel_offset_xyz ? "voxel_offset_xyz"
                        : p.scale_key != d.scale_key             ? "scale_key"
                                                                 : nullptr;
    if (field) return NotHonoured(field, format, "does not take it (a Neuroglancer precomputed option)");
  }
  return Status::Ok();
}

Status ResolveZarr(ArraySpec* s) {
  if (!s->codec) s->codec = Codec::kZstd;
  if (s->zarr.index_at_start && s->shard_chunks.empty())
    return Invalid("index_at_start", "applies to sharded arrays (give shard_chunks)");
  if (s->chunk_shape.empty())
    s->chunk_shape = AutoChunkShape(s->shape, s->shape[0] == 0, ItemSize(s->dtype));
  return Status::Ok();
}

// A relative directory name: no empty, "." or ".." component, no leading '/'.
Status CheckScaleKey(const std::string& key) {
  const Status bad = Invalid("scale_key", "must be a relative directory name, not \"" + key + "\"");
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

Status ResolvePrecomputed(ArraySpec* s) {
  constexpr Format kF = Format::kPrecomputed;
  if (!s->codec) s->codec = Codec::kNone;
  const size_t rank = s->shape.size();
  if (rank != 3 && rank != 4) return Invalid("shape", "precomputed volumes are [c,] z, y, x, not rank " + std::to_string(rank));
  for (int64_t v : s->shape)
    if (v <= 0) return Invalid("shape", "precomputed volumes have a fixed size: every entry must be > 0, not " + JoinIntegers(s->shape));
  if (s->chunk_shape.empty()) return Invalid("chunk_shape", "precomputed volumes need a chunk shape (z, y, x)");
  // Tessera's chunk shape is rank-long; a precomputed chunk holds every channel.
  if (rank == 4 && s->chunk_shape[0] != s->shape[0])
    return NotHonoured("chunk_shape", kF, "chunks hold every channel: chunk_shape[0] must be " + std::to_string(s->shape[0]));
  if (!s->shard_chunks.empty() && rank == 4 && s->shard_chunks[0] != 1)
    return Invalid("shard_chunks", "a precomputed shard holds every channel: shard_chunks[0] must be 1");
  if (*s->codec != Codec::kNone && *s->codec != Codec::kGzip)
    return NotHonoured("codec", kF, "shards take none or gzip, not " + std::string(CodecName(*s->codec)));
  if (*s->codec == Codec::kGzip && s->shard_chunks.empty())
    return NotHonoured("codec", kF, "gzip applies to sharded volumes (give shard_chunks)");
  if (s->level) return NotHonoured("level", kF, "gzip uses a fixed level (6); leave level unset");
  if (!s->fill_value.is_null()) {
    TESSERA_ASSIGN_OR_RETURN(FillValue f, ParseFillValue(s->dtype, s->fill_value));
    if (!f.IsZero())
      return NotHonoured("fill_value", kF, "has no fill value (chunks not stored read as 0)");
  }
  if (!s->dimension_names.empty()) {
    const std::vector<std::string> zyx = {"z", "y", "x"}, czyx = {"c", "z", "y", "x"};
    if (s->dimension_names != (rank == 3 ? zyx : czyx))
      return NotHonoured("dimension_names", kF, std::string("axes are fixed: ") + (rank == 3 ? "z, y, x" : "c, z, y, x"));
  }
  if (!s->attributes.empty()) return NotHonoured("attributes", kF, "info files carry no attributes");
  const PrecomputedSpecOptions& p = s->precomputed;
  static constexpr DataType kTypes[] = {DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64,
                                        DataType::kInt8,  DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
                                        DataType::kFloat32};
  if (std::find(std::begin(kTypes), std::end(kTypes), s->dtype) == std::end(kTypes))
    return NotHonoured("dtype", kF, "volumes hold uint8/16/32/64, int8/16/32/64 or float32, not " +
                                        std::string(DataTypeName(s->dtype)));
  if (p.encoding != "raw" && p.encoding != "compressed_segmentation")
    return Invalid("encoding", "must be raw or compressed_segmentation, not \"" + p.encoding + "\"");
  if (p.encoding == "compressed_segmentation" && s->dtype != DataType::kUInt32 && s->dtype != DataType::kUInt64)
    return NotHonoured("encoding", kF, "compressed_segmentation needs uint32 or uint64, not " +
                                           std::string(DataTypeName(s->dtype)));
  if (p.encoding != "compressed_segmentation" && p.cseg_block_xyz != PrecomputedSpecOptions{}.cseg_block_xyz)
    return NotHonoured("cseg_block_xyz", kF, "raw chunks have no compressed_segmentation blocks");
  if (p.hash != "identity" && p.hash != "murmurhash3_x86_128")
    return Invalid("hash", "must be identity or murmurhash3_x86_128, not \"" + p.hash + "\"");
  if (p.hash != PrecomputedSpecOptions{}.hash && s->shard_chunks.empty())
    return NotHonoured("hash", kF, "unsharded volumes have no shard hash (give shard_chunks)");
  TESSERA_RETURN_IF_ERROR(CheckScaleKey(p.scale_key));
  for (int64_t b : p.cseg_block_xyz)
    if (b <= 0) return Invalid("cseg_block_xyz", "entries must be > 0");
  for (double r : p.resolution_xyz)
    if (!(r > 0)) return Invalid("resolution_xyz", "entries must be > 0");
  return Status::Ok();
}

Status CheckHdf5Attribute(const std::string& name, const nlohmann::json& v) {
  // Integers are stored as int64: an unsigned value above its range would wrap.
  auto number = [](const nlohmann::json& e) {
    return e.is_number() && !(e.is_number_unsigned() && e.get<uint64_t>() > uint64_t{INT64_MAX});
  };
  if (v.is_string() || number(v)) return Status::Ok();
  if (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), number)) return Status::Ok();
  return NotHonoured("attributes", Format::kHdf5,
                     "attributes are numbers (integers within int64), strings or non-empty 1-D arrays of numbers; \"" + name + "\" is " + v.dump());
}

Status ResolveHdf5(ArraySpec* s) {
  constexpr Format kF = Format::kHdf5;
  if (!s->codec) s->codec = Codec::kNone;
  if (s->dtype == DataType::kBool || s->dtype == DataType::kComplex64 || s->dtype == DataType::kComplex128)
    return NotHonoured("dtype", kF, "datasets are written with integer and floating-point types, not " +
                                        std::string(DataTypeName(s->dtype)));
  if (*s->codec != Codec::kNone && *s->codec != Codec::kGzip)
    return NotHonoured("codec", kF, "datasets take none or gzip (the deflate filter), not " + std::string(CodecName(*s->codec)));
  if (*s->codec == Codec::kGzip && !s->level) s->level = 4;  // h5py's default
  if (!s->shard_chunks.empty()) return NotHonoured("shard_chunks", kF, "datasets are not sharded");
  if (!s->dimension_names.empty()) return NotHonoured("dimension_names", kF, "dimension scales are not written");
  if (s->hdf5.dataset.empty() || s->hdf5.dataset == "/")
    return Invalid("dataset", "\"" + s->hdf5.dataset + "\" is the root group; name a dataset such as /data");
  for (const auto& [name, value] : s->attributes.items()) TESSERA_RETURN_IF_ERROR(CheckHdf5Attribute(name, value));
  if (!s->chunk_shape.empty())
    for (size_t d = s->shape[0] == 0 ? 1 : 0; d < s->shape.size(); ++d)
      if (s->chunk_shape[d] > s->shape[d])
        return NotHonoured("chunk_shape", kF, "chunk extent " + std::to_string(s->chunk_shape[d]) +
                                                  " exceeds the fixed extent " + std::to_string(s->shape[d]) +
                                                  " of dimension " + std::to_string(d) +
                                                  " (HDF5 refuses chunks larger than a fixed dimension)");
  if (s->chunk_shape.empty())
    s->chunk_shape = AutoChunkShape(s->shape, s->shape[0] == 0, ItemSize(s->dtype));
  return Status::Ok();
}

// The most levels `auto` makes (a 2^31-element dimension needs 32 halvings).
constexpr int kMaxAutoLevels = 32;

// Levels until every dimension fits one chunk (an unbounded dimension 0 is not counted).
Result<int> AutoLevels(const ArraySpec& s) {
  int levels = 1;
  for (size_t d = s.shape[0] == 0 ? 1 : 0; d < s.shape.size(); ++d) {
    int64_t n = s.shape[d];
    int need = 1;
    while (n > s.chunk_shape[d]) {
      if (s.pyramid.factors[d] == 1 || need == kMaxAutoLevels)
        return Invalid("pyramid", "auto: dimension " + std::to_string(d) + " (" + std::to_string(s.shape[d]) +
                                      ") never fits one chunk (" + std::to_string(s.chunk_shape[d]) +
                                      ") with downsample factor " + std::to_string(s.pyramid.factors[d]));
      n = (n + s.pyramid.factors[d] - 1) / s.pyramid.factors[d];
      ++need;
    }
    levels = std::max(levels, need);
  }
  return levels;
}

// The pyramid and the OME-Zarr image of a spec whose format fields are resolved.
Status ResolvePyramid(ArraySpec* s, Format format) {
  PyramidSpec& p = s->pyramid;
  OmeSpec& ome = s->ome;
  const size_t rank = s->shape.size();
  if (p.levels < 0) return Invalid("pyramid", "levels must be >= 1 (or 0: auto), not " + std::to_string(p.levels));
  const bool pyramid = p.levels != 1;
  if (format == Format::kHdf5 && pyramid)
    return NotHonoured("pyramid", format, "datasets have no multiscale levels (write zarr3 or precomputed)");
  if (!pyramid && (p.method || !p.factors.empty()))
    return Invalid(p.method ? "downsample" : "downsample_factors", "applies to a pyramid (give levels > 1 or auto)");
  if (format != Format::kZarr3 && !(ome == OmeSpec{})) {
    const char* field = !ome.axes.empty() ? "axes" : !ome.voxel_size.empty() || !ome.offset.empty() ? "voxel_size" : "pyramid";
    return NotHonoured(field, format, "is not an OME-Zarr image (a zarr3 option)");
  }
  if (format == Format::kZarr3 && (ome.image || pyramid)) {
    ome.image = true;
    if (ome.axes.empty()) ome.axes = pyramid::DefaultOmeAxes(static_cast<int>(rank), s->dimension_names);
    if (ome.axes.size() != rank)
      return Invalid("axes", std::to_string(ome.axes.size()) + " axes for a rank-" + std::to_string(rank) + " array");
    TESSERA_RETURN_IF_ERROR(pyramid::CheckOmeAxes(ome.axes));
    std::vector<std::string> names;
    for (const pyramid::OmeAxis& a : ome.axes) names.push_back(a.name);
    if (s->dimension_names.empty()) s->dimension_names = names;
    if (s->dimension_names != names)
      return Invalid("axes", "OME-Zarr requires the arrays' dimension_names to be the axes' names");
    for (const auto& [v, what] : {std::pair{&ome.voxel_size, "sizes"}, std::pair{&ome.offset, "offsets"}}) {
      if (!v->empty() && v->size() != rank)
        return Invalid("voxel_size", std::to_string(v->size()) + " " + what + " for a rank-" + std::to_string(rank) +
                                         " array");
    }
    for (double v : ome.voxel_size)
      if (!(v > 0) || !std::isfinite(v)) return Invalid("voxel_size", "entries must be finite and > 0");
    for (double v : ome.offset)
      if (!std::isfinite(v)) return Invalid("voxel_size", "offsets must be finite");
  }
  if (!pyramid) return Status::Ok();
  if (!p.method) {
    const bool labels = format == Format::kPrecomputed && s->precomputed.encoding == "compressed_segmentation";
    p.method = labels ? pyramid::DownsampleMethod::kMode : pyramid::DownsampleMethod::kMean;
  }
  Status st = pyramid::CheckDownsampleMethod(s->dtype, *p.method);
  if (!st.ok()) return FieldError(st.kind(), "downsample", st.message());
  if (p.factors.empty()) {
    if (format == Format::kZarr3) {
      p.factors = pyramid::DefaultFactors(ome.axes);
    } else {  // precomputed: [c,] z, y, x
      p.factors.assign(rank, 2);
      if (rank == 4) p.factors[0] = 1;
    }
  }
  TESSERA_RETURN_IF_ERROR(CheckOptionalExtents("downsample_factors", p.factors, rank));
  if (format == Format::kPrecomputed && rank == 4 && p.factors[0] != 1)
    return NotHonoured("downsample_factors", format, "scales hold every channel: the channel factor must be 1");
  if (std::all_of(p.factors.begin(), p.factors.end(), [](int64_t f) { return f == 1; }))
    return Invalid("downsample_factors", "all factors are 1: every level would be the same");
  if (p.levels == 0) {
    TESSERA_ASSIGN_OR_RETURN(p.levels, AutoLevels(*s));
  }
  return Status::Ok();
}

}  // namespace

Status FieldError(ErrorKind kind, std::string_view field, const std::string& message) {
  return Status(kind, std::string(field) + ": " + message);
}
Status InvalidField(std::string_view field, const std::string& message) {
  return FieldError(ErrorKind::kInvalidArgument, field, message);
}
Status FieldNotHonoured(std::string_view field, std::string_view format_name, const std::string& why) {
  return FieldError(ErrorKind::kUnsupported, field, std::string(format_name) + " " + why);
}

ArraySpec LevelSpec(const ArraySpec& resolved, Format format, int level) {
  ArraySpec s = resolved;
  s.pyramid = PyramidSpec{};
  s.ome = OmeSpec{};
  if (level == 0) return s;
  const size_t rank = s.shape.size();
  for (size_t d = 0; d < rank; ++d) {
    int64_t f = 1;
    for (int k = 0; k < level; ++k) f *= resolved.pyramid.factors[d];
    s.shape[d] = (resolved.shape[d] + f - 1) / f;
    if (format == Format::kPrecomputed && d + 3 >= rank) {  // x, y, z are the last three, reversed
      const size_t xyz = rank - 1 - d;
      s.precomputed.resolution_xyz[xyz] *= static_cast<double>(f);
      const int64_t o = resolved.precomputed.voxel_offset_xyz[xyz];
      s.precomputed.voxel_offset_xyz[xyz] = o >= 0 ? o / f : -((-o + f - 1) / f);  // floor
    }
    if (s.shape[d] == 0) continue;  // unbounded dimension 0 keeps its chunking
    const int64_t chunk = std::min(s.chunk_shape[d], s.shape[d]);
    if (!s.shard_chunks.empty())
      s.shard_chunks[d] = std::min(s.shard_chunks[d], (s.shape[d] + chunk - 1) / chunk);
    s.chunk_shape[d] = chunk;
  }
  if (format == Format::kPrecomputed) {
    // "s0" -> "s<level>"; a key without a trailing number gets "_<level>".
    std::string& key = s.precomputed.scale_key;
    size_t digits = key.size();
    while (digits > 0 && key[digits - 1] >= '0' && key[digits - 1] <= '9') --digits;
    if (digits == key.size() || key.size() - digits > 9) {
      key += "_" + std::to_string(level);
    } else {
      key = key.substr(0, digits) + std::to_string(std::stoll(key.substr(digits)) + level);
    }
  }
  return s;
}

std::string_view FormatName(Format format) {
  switch (format) {
    case Format::kZarr3: return "zarr3";
    case Format::kPrecomputed: return "precomputed";
    case Format::kHdf5: return "hdf5";
  }
  return "?";
}

Result<Format> ParseFormat(std::string_view name) {
  if (name == "zarr3" || name == "zarr") return Format::kZarr3;
  if (name == "precomputed" || name == "neuroglancer_precomputed") return Format::kPrecomputed;
  if (name == "hdf5" || name == "h5") return Format::kHdf5;
  return FieldError(ErrorKind::kUnsupported, "format", "\"" + std::string(name) + "\" (supported: zarr3, precomputed, hdf5)");
}

std::string_view CodecName(Codec codec) { return kCodecNames[static_cast<size_t>(codec)]; }

Result<Codec> ParseCodec(std::string_view name) {
  for (size_t i = 0; i < kCodecNames.size(); ++i)
    if (kCodecNames[i] == name) return static_cast<Codec>(i);
  std::string quoted = "\"";
  quoted.append(name).append("\" (supported: none, zstd, gzip, blosc-lz4, blosc-zstd)");
  return FieldError(ErrorKind::kUnsupported, "codec", quoted);
}

Result<ArraySpec> ResolveSpec(const ArraySpec& spec, Format format) {
  ArraySpec s = spec;
  if (format == Format::kPrecomputed)
    for (int64_t v : s.shape)
      if (v <= 0) return Invalid("shape", "precomputed volumes have a fixed size: every entry must be > 0, not " + JoinIntegers(s.shape));
  if (format == Format::kPrecomputed && s.shape.size() == 4) {
    // A multi-channel volume's chunks and shards may be given as z, y, x (every channel together).
    if (s.chunk_shape.size() == 3) s.chunk_shape.insert(s.chunk_shape.begin(), s.shape[0]);
    if (s.shard_chunks.size() == 3) s.shard_chunks.insert(s.shard_chunks.begin(), 1);
  }
  TESSERA_RETURN_IF_ERROR(CheckGeometry(s));
  if (!s.fill_value.is_null()) {
    Result<FillValue> f = ParseFillValue(s.dtype, s.fill_value);
    if (!f.ok()) return FieldError(f.status().kind(), "fill_value", f.status().message());
  }
  TESSERA_RETURN_IF_ERROR(CheckForeignOptions(s, format));
  switch (format) {
    case Format::kZarr3: TESSERA_RETURN_IF_ERROR(ResolveZarr(&s)); break;
    case Format::kPrecomputed: TESSERA_RETURN_IF_ERROR(ResolvePrecomputed(&s)); break;
    case Format::kHdf5: TESSERA_RETURN_IF_ERROR(ResolveHdf5(&s)); break;
  }
  TESSERA_RETURN_IF_ERROR(CheckLevel(s));
  TESSERA_RETURN_IF_ERROR(ResolvePyramid(&s, format));
  return s;
}

std::string_view SpecFieldOfError(const Status& status) {
  const std::string& m = status.message();
  const size_t colon = m.find(": ");
  if (colon == std::string::npos) return {};
  const std::string_view head(m.data(), colon);
  for (std::string_view f : kSpecFields)
    if (f == head) return f;
  return {};
}

Status RespellSpecField(const Status& status, std::string_view spelling) {
  const std::string_view field = SpecFieldOfError(status);
  if (field.empty()) return status;
  return Status(status.kind(), std::string(spelling) + status.message().substr(field.size()));
}

}  // namespace tessera
