#include "tessera/api/append_stream.h"

#include <algorithm>
#include <numeric>

#include "tessera/api/array.h"
#include "tessera/api/convert.h"
#include "tessera/api/create_mode.h"
#include "tessera/api/driver_registry.h"
#include "tessera/api/pyramid_stream.h"
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
  }
  TESSERA_RETURN_IF_ERROR(d.CheckContinuable(stored, location));
  TESSERA_RETURN_IF_ERROR(CheckAgrees(given, stored));
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
  if (total_rows != 0 && stored.pyramid.levels > 1)
    return FieldError(ErrorKind::kUnsupported, "shape",
                      "a pyramid is continued unbounded (shape[0] 0), not to " + std::to_string(total_rows) + " rows");
  ArraySpec continued = stored;
  continued.shape[0] = total_rows;
  Result<ArraySpec> resolved_or = ResolveSpec(continued, format);
  if (!resolved_or.ok() && total_rows == 0)
    return FieldError(ErrorKind::kInvalidArgument, "shape",
                      location.ToString() + " is a " + std::string(FormatName(format)) +
                          " array of a fixed shape: give the rows it ends with (shape[0] >= its " +
                          std::to_string(stored_rows) + ")");
  TESSERA_ASSIGN_OR_RETURN(ArraySpec resolved, std::move(resolved_or));
  // The restart row: a shard-row boundary of every level (level k's rows are level 0's divided
  // by its factor along dimension 0), so each level restarts at a boundary of its own and its
  // downsampled rows from there are exactly those one stream computes.
  const int levels = resolved.level_count();
  int64_t align = 1, factor = 1;
  std::vector<ArraySpec> level_specs;
  for (int k = 0; k < levels; ++k) {
    level_specs.push_back(LevelSpec(resolved, format, k));
    const ArraySpec& l = level_specs.back();
    const int64_t shard_rows = l.chunk_shape[0] * (l.shard_chunks.empty() ? 1 : l.shard_chunks[0]);
    align = std::lcm(align, shard_rows * factor);
    if (k + 1 < levels) factor *= resolved.pyramid.factors.empty() ? 1 : resolved.pyramid.factors[0];
  }
  const int64_t first_row = stored_rows / align * align;
  std::unique_ptr<Stream> stream;
  if (!resolved.multiscale()) {
    TESSERA_ASSIGN_OR_RETURN(driver::FormatWriter writer, d.OpenAppendWriter(resolved, location, settings, first_row, stored_rows));
    stream = MakeFormatStream(format, resolved, threads, std::move(writer), first_row, stored_rows);
  } else {
    int next = 0;
    int64_t level_factor = 1;
    auto open_level = [&](const ArraySpec& level, const Location& where) -> Result<std::unique_ptr<Stream>> {
      const int k = next++;
      if (k > 0) level_factor *= resolved.pyramid.factors[0];
      OpenOptions level_open;
      level_open.format = format;
      level_open.level = k;
      TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Array> stored_level, OpenArray(location.ToString(), level_open));
      const int64_t level_rows = stored_level->shape()[0];
      TESSERA_ASSIGN_OR_RETURN(driver::FormatWriter writer,
                               d.OpenAppendWriter(level, where, settings, first_row / level_factor, level_rows));
      return MakeFormatStream(format, level, threads, std::move(writer), first_row / level_factor, level_rows);
    };
    TESSERA_ASSIGN_OR_RETURN(stream, CreatePyramidStream(format, resolved, location, options, threads, open_level,
                                                         /*create_group=*/false));
  }

  // The stored rows of the last, partial shard row go through the stream again.
  const int64_t row_bytes = stream->row_bytes();
  const int64_t slab_rows = std::max<int64_t>(1, kRefeedSlabBytes / std::max<int64_t>(row_bytes, 1));
  Bytes slab(static_cast<size_t>(std::min(slab_rows, std::max<int64_t>(stored_rows - first_row, 0)) * row_bytes));
  for (int64_t row = first_row; row < stored_rows; row += slab_rows) {
    const int64_t n = std::min(slab_rows, stored_rows - row);
    Hyperslab sel = Hyperslab::All(array->shape());
    sel.dims[0] = {row, 1, n};
    Status st = array->Read(sel, slab.data());
    if (st.ok()) st = stream->Append(ByteView(slab.data(), static_cast<size_t>(n * row_bytes)));
    if (!st.ok()) {
      stream->Abort();
      return st.WithContext("continuing " + location.ToString() + " (re-reading its rows " + std::to_string(row) +
                            ".." + std::to_string(row + n) + ")");
    }
  }
  return stream;
}

}  // namespace tessera::api_internal
