#include "tessera/api/append_stream.h"

#include <algorithm>
#include <numeric>

#include "tessera/api/array.h"
#include "tessera/api/convert.h"
#include "tessera/api/create_mode.h"
#include "tessera/api/driver_registry.h"
#include "tessera/api/pyramid_stream.h"
#include "tessera/api/stored_method.h"
#include "tessera/api/stream_lifecycle.h"
#include "tessera/core/parallel.h"
#include "tessera/core/text.h"
#include "tessera/pyramid/downsample.h"
#include "tessera/spec/spec_error.h"

namespace tessera::api_internal {
namespace {

// The most bytes of stored rows read back at once while re-feeding them.
constexpr int64_t kRefeedSlabBytes = int64_t{64} << 20;

Status Contradicts(std::string_view field, const std::string& given, const std::string& stored) {
  return FieldError(ErrorKind::kInvalidArgument, field,
                    given + " contradicts the stored array's " + stored +
                        " (mode a continues an array with its stored spec)");
}

// Codec blosc's settings `given` sets, against the stored array's: compared as the chunk codecs
// they write (a typesize given as the dtype's size agrees with one left at its default).
Status CheckBloscAgrees(const driver::FormatDriver& d, const ArraySpec& given, const ArraySpec& stored) {
  const BloscSpecOptions& g = given.zarr.blosc;
  if (!g.given()) return Status::Ok();
  ArraySpec as_stored = stored;
  as_stored.zarr.chunk_codecs = nullptr;
  ArraySpec as_given = as_stored;
  BloscSpecOptions& b = as_given.zarr.blosc;
  if (!g.cname.empty()) b.cname = g.cname;
  if (!g.shuffle.empty()) b.shuffle = g.shuffle;
  if (g.typesize) b.typesize = g.typesize;
  if (g.blocksize) b.blocksize = g.blocksize;
  const nlohmann::json want = d.ChunkCodecsOfSpec(as_given), have = d.ChunkCodecsOfSpec(as_stored);
  if (want == have) return Status::Ok();
  const char* field = !g.cname.empty() ? "cname" : !g.shuffle.empty() ? "shuffle" : g.typesize ? "typesize" : "blocksize";
  return Contradicts(field, "chunk codecs " + (want.is_null() ? std::string("(none: a setting is invalid)") : want.dump()),
                     "chunk codecs " + have.dump());
}

// The first field `given` sets that differs from `stored`, as an error naming it.
Status CheckAgrees(const ArraySpec& given, const ArraySpec& stored) {
  if (!given.shape.empty()) {
    if (given.dtype != stored.dtype)
      return Contradicts("dtype", std::string(DataTypeName(given.dtype)), std::string(DataTypeName(stored.dtype)));
    if (given.shape.size() != stored.shape.size() ||
        !std::equal(given.shape.begin() + 1, given.shape.end(), stored.shape.begin() + 1))
      return Contradicts("shape", JoinIntegers(given.shape),
                         JoinIntegers(stored.shape) + " (dimension 0 grows; the others are fixed)");
  }
  if (!given.chunk_shape.empty() && given.chunk_shape != stored.chunk_shape)
    return Contradicts("chunk_shape", JoinIntegers(given.chunk_shape), JoinIntegers(stored.chunk_shape));
  if (!given.shard_chunks.empty() && given.shard_chunks != stored.shard_chunks)
    return Contradicts("shard_chunks", JoinIntegers(given.shard_chunks),
                       stored.shard_chunks.empty() ? std::string("none (unsharded)") : JoinIntegers(stored.shard_chunks));
  if (given.codec && given.codec != stored.codec)
    return Contradicts("codec", std::string(CodecName(*given.codec)),
                       stored.codec ? std::string(CodecName(*stored.codec)) : std::string("default"));
  if (given.level && given.level != stored.level)
    return Contradicts("level", std::to_string(*given.level), stored.level ? std::to_string(*stored.level) : "default");
  if (!given.fill_value.is_null() && given.fill_value != stored.fill_value)
    return Contradicts("fill_value", given.fill_value.dump(), stored.fill_value.dump());
  if (!given.dimension_names.empty() && given.dimension_names != stored.dimension_names)
    return Contradicts("dimension_names", nlohmann::json(given.dimension_names).dump(),
                       nlohmann::json(stored.dimension_names).dump());
  if (given.pyramid.levels != 1 && given.pyramid.levels != stored.pyramid.levels)
    return Contradicts("levels", std::to_string(given.pyramid.levels), std::to_string(stored.pyramid.levels));
  if (!given.pyramid.factors.empty() && given.pyramid.factors != stored.pyramid.factors)
    return Contradicts("factors", JoinIntegers(given.pyramid.factors), JoinIntegers(stored.pyramid.factors));
  if (given.pyramid.method && given.pyramid.method != stored.pyramid.method)
    return Contradicts("method", std::string(pyramid::DownsampleMethodName(*given.pyramid.method)),
                       stored.pyramid.method ? std::string(pyramid::DownsampleMethodName(*stored.pyramid.method)) : "none");
  return Status::Ok();
}

// Level k of a stored pyramid as the pyramid of its level 0 has it (keys, resolutions, chunks
// but for their rows, codec): kUnsupported naming the first field that differs.
Status CheckLevelAgrees(const Location& location, int k, const ArraySpec& implied, const ArraySpec& stored) {
  auto differs = [&](std::string_view field, const std::string& has, const std::string& implies) {
    return FieldError(ErrorKind::kUnsupported, field,
                      location.ToString() + ": level " + std::to_string(k) + " has " + has + " where a pyramid of its level 0 has " +
                          implies + "; continuing it (mode a) is not supported");
  };
  const std::vector<int64_t> shape(stored.shape.begin() + 1, stored.shape.end()),
      implied_shape(implied.shape.begin() + 1, implied.shape.end());
  if (stored.dtype != implied.dtype || shape != implied_shape)
    return differs("shape", std::string(DataTypeName(stored.dtype)) + " " + JoinIntegers(shape) + " (after dimension 0)",
                   std::string(DataTypeName(implied.dtype)) + " " + JoinIntegers(implied_shape));
  if (!std::equal(stored.chunk_shape.begin() + 1, stored.chunk_shape.end(), implied.chunk_shape.begin() + 1,
                  implied.chunk_shape.end()))
    return differs("chunk_shape", JoinIntegers(stored.chunk_shape), JoinIntegers(implied.chunk_shape));
  if (stored.codec != implied.codec)
    return differs("codec", std::string(CodecName(stored.codec.value_or(Codec::kNone))),
                   std::string(CodecName(implied.codec.value_or(Codec::kNone))));
  const PrecomputedSpecOptions &p = stored.precomputed, &q = implied.precomputed;
  if (p.scale_key != q.scale_key) return differs("scale_key", "\"" + p.scale_key + "\"", "\"" + q.scale_key + "\"");
  if (p.resolution_xyz != q.resolution_xyz)
    return differs("resolution_xyz", nlohmann::json(p.resolution_xyz).dump(), nlohmann::json(q.resolution_xyz).dump());
  if (p.voxel_offset_xyz != q.voxel_offset_xyz)
    return differs("voxel_offset_xyz", nlohmann::json(p.voxel_offset_xyz).dump(), nlohmann::json(q.voxel_offset_xyz).dump());
  if (p.encoding != q.encoding || p.cseg_block_xyz != q.cseg_block_xyz)
    return differs("encoding", p.encoding + " " + nlohmann::json(p.cseg_block_xyz).dump(),
                   q.encoding + " " + nlohmann::json(q.cseg_block_xyz).dump());
  return Status::Ok();
}

// Feeds rows [from, to) of `array` into `stream` again, a slab at a time; an error aborts the stream.
Status Refeed(const Array& array, int64_t from, int64_t to, Stream& stream, const Location& location) {
  const int64_t row_bytes = stream.row_bytes();
  const int64_t slab_rows = std::max<int64_t>(1, kRefeedSlabBytes / std::max<int64_t>(row_bytes, 1));
  Bytes slab(static_cast<size_t>(std::min(slab_rows, std::max<int64_t>(to - from, 0)) * row_bytes));
  for (int64_t row = from; row < to; row += slab_rows) {
    const int64_t n = std::min(slab_rows, to - row);
    Hyperslab sel = Hyperslab::All(array.shape());
    sel.dims[0] = {row, 1, n};
    Status st = array.Read(sel, slab.data());
    if (st.ok()) st = stream.Append(ByteView(slab.data(), static_cast<size_t>(n * row_bytes)));
    if (!st.ok()) {
      stream.Abort();
      return st.WithContext("continuing " + location.ToString() + " (re-reading its rows " + std::to_string(row) +
                            ".." + std::to_string(row + n) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::optional<Format>> ArrayToContinue(const Location& location, const ArraySpec& given,
                                              const StreamOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<Format> stored, StoredFormatAt(location));
  const Format wanted = options.format ? *options.format : stored.value_or(FormatFromName(location));
  if (!stored) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> what, WhatExistsAt(location, wanted));
    if (what)
      return AlreadyExists(location.ToString() + ": " + *what + " exists here; mode a continues an array");
    return std::optional<Format>();
  }
  if (*stored != wanted) {
    TESSERA_ASSIGN_OR_RETURN(std::string what, DriverOf(*stored).DescribeStored(location));
    return AlreadyExists(location.ToString() + ": " + what + " exists here; mode a continues an array of its own format, not " +
                         std::string(FormatName(wanted)));
  }
  TESSERA_ASSIGN_OR_RETURN(bool holds, DriverOf(*stored).HoldsArray(location, given));
  if (!holds) return std::optional<Format>();
  return stored;
}

Result<std::unique_ptr<Stream>> ContinueStream(const Location& location, Format format, const ArraySpec& given,
                                               const StreamOptions& options) {
  OpenOptions open;
  open.format = format;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Array> array, OpenArray(location.ToString(), open));
  const driver::FormatDriver& d = DriverOf(format);
  TESSERA_ASSIGN_OR_RETURN(ArraySpec stored, ConversionSpec(*array, format));
  // The image's levels as stored, each opened once: `array` (level 0), then the levels above.
  std::vector<std::unique_ptr<Array>> upper_levels;
  std::vector<const Array*> stored_levels = {array.get()};
  // An image with a root of its own (an OME-Zarr group) is continued through it, level by level,
  // even with one level; a plain array at the root has no stored pyramid (kNotFound).
  if (array->level_count() > 1 || d.HasMultiscaleRoot()) {
    Result<PyramidSpec> pyramid = d.StoredPyramid(location);
    if (!pyramid.ok() && (pyramid.status().kind() != ErrorKind::kNotFound || array->level_count() > 1))
      return pyramid.status();
    if (pyramid.ok()) {
      stored.pyramid = *pyramid;
      stored.ome.image = d.HasMultiscaleRoot();
    }
    if (stored.pyramid.levels != array->level_count())
      return CorruptData(location.ToString() + ": " + std::to_string(array->level_count()) + " levels open, " +
                         std::to_string(stored.pyramid.levels) + " recorded");
    for (int k = 1; k < stored.pyramid.levels; ++k) {
      OpenOptions level_open;
      level_open.format = format;
      level_open.level = k;
      TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Array> level, OpenArray(location.ToString(), level_open));
      stored_levels.push_back(level.get());
      upper_levels.push_back(std::move(level));
    }
    if (!stored.pyramid.method && stored.pyramid.levels > 1) {
      // Not recorded (precomputed): the method that reproduces the stored levels.
      ArraySpec defaults = stored;
      TESSERA_ASSIGN_OR_RETURN(defaults, ResolveSpec(defaults, format));
      TESSERA_ASSIGN_OR_RETURN(stored.pyramid.method, StoredDownsampleMethod(location, stored_levels, stored,
                                                                             given.pyramid.method,
                                                                             *defaults.pyramid.method));
    }
  }
  TESSERA_RETURN_IF_ERROR(d.CheckContinuable(stored, location));
  TESSERA_RETURN_IF_ERROR(CheckAgrees(given, stored));
  TESSERA_RETURN_IF_ERROR(CheckBloscAgrees(d, given, stored));
  if (options.threads < 0)
    return FieldError(ErrorKind::kInvalidArgument, "threads", "must be >= 0 (0: hardware threads), not " +
                                                                   std::to_string(options.threads));
  const int threads = options.threads > 0 ? options.threads : DefaultThreadCount();
  const driver::WriterSettings settings = SettingsOf(options, threads);
  TESSERA_RETURN_IF_ERROR(DriverOf(format).CheckWriterSettings(settings));

  const int64_t stored_rows = stored.shape[0];
  // The rows the array ends with: given (a format with a fixed shape needs them: precomputed), or
  // as many as the stream brings (0: unbounded).
  const int64_t total_rows = given.shape.empty() ? 0 : given.shape[0];
  if (total_rows != 0 && total_rows < stored_rows)
    return Contradicts("shape", JoinIntegers(given.shape),
                       JoinIntegers(stored.shape) + " (mode a only adds rows)");
  if (total_rows != 0 && stored.pyramid.levels > 1 && d.HasMultiscaleRoot())
    return FieldError(ErrorKind::kUnsupported, "shape",
                      "an OME-Zarr pyramid is continued unbounded (shape[0] 0), not to " + std::to_string(total_rows) + " rows");
  ArraySpec continued = stored;
  continued.shape[0] = total_rows;
  Result<ArraySpec> resolved_or = ResolveSpec(continued, format);
  if (!resolved_or.ok() && total_rows == 0)
    return FieldError(ErrorKind::kInvalidArgument, "shape",
                      location.ToString() + " is a " + std::string(FormatName(format)) +
                          " array of a fixed shape: give the rows it ends with (shape[0] >= its " +
                          std::to_string(stored_rows) + ")");
  TESSERA_ASSIGN_OR_RETURN(ArraySpec resolved, std::move(resolved_or));
  // The levels as stored (a pyramid): each must be the level its level 0 implies (keys,
  // resolutions, chunks), and a level a crash cut short holds fewer rows than level 0 implies.
  const int levels = resolved.level_count();
  const int64_t factor0 = resolved.pyramid.factors.empty() ? 1 : resolved.pyramid.factors[0];
  std::vector<ArraySpec> level_specs;
  std::vector<int64_t> level_factor;
  std::vector<bool> rewritten;  // a level whose chunks change shape: written anew from its row 0
  int64_t covered = stored_rows;  // level 0's rows every level holds the reduction of
  int64_t factor = 1;
  for (int k = 0; k < levels; ++k, factor *= factor0) {
    level_specs.push_back(LevelSpec(resolved, format, k));
    level_factor.push_back(factor);
    rewritten.push_back(false);
    if (!resolved.multiscale()) break;  // a plain array: no level streams
    const Array* level = stored_levels[static_cast<size_t>(k)];
    if (k > 0) {
      TESSERA_ASSIGN_OR_RETURN(ArraySpec level_stored, ConversionSpec(*level, format));
      TESSERA_RETURN_IF_ERROR(CheckLevelAgrees(location, k, level_specs[k], level_stored));
      covered = std::min(covered, level->shape()[0] * factor);
      // A level of fewer rows than a chunk has its chunks cut to them (as one stream of them
      // would); more rows make them whole: every chunk changes.
      rewritten[k] = level_stored.chunk_shape[0] != level_specs[k].chunk_shape[0];
      if (rewritten[k] && !level_specs[k].shard_chunks.empty())
        return FieldError(ErrorKind::kUnsupported, "shape",
                          location.ToString() + ": level " + std::to_string(k) + "'s chunks hold " +
                              std::to_string(level_stored.chunk_shape[0]) + " rows (all it has); continued to " +
                              JoinIntegers(level_specs[k].shape) + " they hold " +
                              std::to_string(level_specs[k].chunk_shape[0]) +
                              ", which changes every stored chunk of its shards (continue a sharded pyramid once "
                              "every level has at least a chunk of rows)");
    }
  }
  // The restart row: a group boundary of every level (level k's rows are level 0's divided by
  // its factor along dimension 0) and a shard-row boundary of every level not written anew, so
  // each restarts at a boundary of its own and its downsampled rows from there are exactly those
  // one stream computes.
  int64_t align = 1;
  for (int k = 0; k < levels; ++k) {
    const ArraySpec& l = level_specs[k];
    const int64_t shard_rows = l.chunk_shape[0] * (l.shard_chunks.empty() ? 1 : l.shard_chunks[0]);
    align = std::lcm(align, rewritten[k] ? level_factor[k] : shard_rows * level_factor[k]);
  }
  const int64_t first_row = covered / align * align;
  std::unique_ptr<Stream> stream;
  if (!resolved.multiscale()) {
    TESSERA_ASSIGN_OR_RETURN(driver::FormatWriter writer, d.OpenAppendWriter(resolved, location, settings, first_row, stored_rows));
    stream = MakeFormatStream(format, resolved, threads, std::move(writer), first_row, stored_rows);
  } else {
    int next = 0;
    auto open_level = [&](const ArraySpec& level, const Location& where) -> Result<std::unique_ptr<Stream>> {
      const int k = next++;
      const Array& stored_level = *stored_levels[static_cast<size_t>(k)];
      const int64_t level_rows = stored_level.shape()[0];
      const int64_t level_first = first_row / level_factor[k];  // where the downsampled rows start
      const int64_t restart = rewritten[k] ? 0 : level_first;
      TESSERA_ASSIGN_OR_RETURN(driver::FormatWriter writer, d.OpenAppendWriter(level, where, settings, restart, level_rows));
      std::unique_ptr<Stream> level_stream = MakeFormatStream(format, level, threads, std::move(writer), restart, level_rows);
      // A level written anew takes its stored rows below the downsampled ones from itself.
      TESSERA_RETURN_IF_ERROR(Refeed(stored_level, restart, level_first, *level_stream, location));
      return level_stream;
    };
    TESSERA_ASSIGN_OR_RETURN(stream, CreatePyramidStream(format, resolved, location, options, threads, open_level,
                                                         /*create_group=*/false));
  }

  // The stored rows of the last, partial shard row go through the stream again.
  TESSERA_RETURN_IF_ERROR(Refeed(*array, first_row, stored_rows, *stream, location));
  return stream;
}

}  // namespace tessera::api_internal
