#include "tessera/api/convert.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <limits>

#include "tessera/api/create_mode.h"
#include "tessera/api/driver_registry.h"
#include "tessera/api/region_copy.h"
#include "tessera/api/stream_lifecycle.h"
#include "tessera/core/chunk_shape.h"
#include "tessera/index/index.h"
#include "tessera/pyramid/ome.h"
#include "tessera/spec/spec_error.h"

namespace tessera {
namespace {

// The most bytes one slab of a copy holds (unless one row is larger).
constexpr int64_t kMaxSlabBytes = int64_t{256} << 20;

// The fields the destination format does not take, put back to their defaults. An OME-Zarr
// image's voxel size becomes a precomputed volume's resolution when its units give nanometres.
void DropForeignFields(Format format, ArraySpec* s) {
  if (format == Format::kPrecomputed && s->ome.image)
    if (auto nm = pyramid::VoxelSizeNanometresXyz(s->ome.axes, s->ome.voxel_size)) s->precomputed.resolution_xyz = *nm;
  for (const driver::FormatDriver* d : FormatDrivers())
    if (d->format() != format) d->ClearOptions(s);
  // Attributes another implementation wrote but that could not be decoded are not carried.
  for (auto it = s->attributes.begin(); it != s->attributes.end();) {
    if (it->is_object() && it->contains("unreadable")) it = s->attributes.erase(it);
    else ++it;
  }
}

// Gives up `field` of `s` (the field of the error ResolveSpec or the plan refused it with:
// Status::field()) for the format's default; false when the field cannot be given up (the array
// itself does not fit the format).
bool DropField(std::string_view field, Format format, ArraySpec* s) {
  if (field == "codec" || field == "level") {
    s->codec.reset();
    s->level.reset();
  } else if (field == "fill_value") {
    s->fill_value = nullptr;
  } else if (field == "dimension_names") {
    s->dimension_names.clear();
  } else if (field == "axes" || field == "voxel_size" || field == "translation") {
    // The source's OME description as another implementation wrote it: an image of default axes.
    s->ome.axes.clear();
    s->ome.voxel_size.clear();
    s->ome.offset.clear();
  } else if (field == "attributes") {
    // Only the attributes the format refuses go (HDF5 stores numbers and strings).
    nlohmann::json kept = nlohmann::json::object();
    for (const auto& [name, value] : s->attributes.items()) {
      ArraySpec probe = *s;
      probe.attributes = nlohmann::json::object({{name, value}});
      if (ResolveSpec(probe, format).ok()) kept[name] = value;
    }
    if (kept == s->attributes) kept = nlohmann::json::object();
    s->attributes = std::move(kept);
  } else if (field == "shard_chunks" || field == "index_at_start" || field == "hash") {
    s->shard_chunks.clear();
    s->zarr.index_at_start = false;
    s->precomputed.hash = PrecomputedSpecOptions{}.hash;
  } else if (field == "chunk_shape") {
    // First the source's chunks clipped to the shape (HDF5 refuses larger ones), then ~1 MiB ones.
    std::vector<int64_t> clipped = s->chunk_shape;
    for (size_t d = 0; d < clipped.size() && d < s->shape.size(); ++d)
      clipped[d] = std::min(clipped[d], std::max<int64_t>(s->shape[d], 1));
    if (clipped != s->chunk_shape) {
      s->chunk_shape = std::move(clipped);
      return true;
    }
    std::vector<int64_t> auto_chunk = DriverOf(format).FallbackChunkShape(*s);
    if (s->chunk_shape == auto_chunk) return false;
    s->chunk_shape = std::move(auto_chunk);
    s->shard_chunks.clear();
  } else if (field == "encoding" || field == "cseg_block_xyz") {
    s->precomputed.encoding = PrecomputedSpecOptions{}.encoding;
    s->precomputed.cseg_block_xyz = PrecomputedSpecOptions{}.cseg_block_xyz;
  } else {
    return false;
  }
  return true;
}

// Whether two locations name the same place (local paths compared after resolving . and ..).
bool SameLocation(const Location& a, const Location& b) {
  if (a.scheme != b.scheme) return false;
  if (!a.is_file()) return a.path == b.path;
  std::error_code ec;
  return std::filesystem::weakly_canonical(a.path, ec) == std::filesystem::weakly_canonical(b.path, ec);
}

// What of the source's chunk encoding `converted` (the described spec, after every field the
// destination refused went back to its default) no longer holds, in words ("zstd level 3",
// "jpeg chunk encoding", ...); empty when nothing is lost. Codec, level and what only one
// format spells (a Zarr chain as stored, blosc's settings, a precomputed chunk encoding, HDF5's
// shuffle filter) all count: values come through a conversion unchanged, but a user who did not
// choose another codec expects the copy compressed as the source is.
std::string LostEncoding(const ArraySpec& described, const ArraySpec& converted) {
  const Codec codec = described.codec.value_or(Codec::kNone);
  if (codec != Codec::kNone && (converted.codec != described.codec || converted.level != described.level ||
                                (codec == Codec::kBlosc && converted.zarr.blosc != described.zarr.blosc))) {
    std::string what(CodecName(codec));
    if (codec == Codec::kBlosc && !described.zarr.blosc.cname.empty())
      what += " (" + described.zarr.blosc.cname +
              (described.zarr.blosc.shuffle.empty() ? "" : ", " + described.zarr.blosc.shuffle) + ")";
    if (described.level) what += " level " + std::to_string(*described.level);
    return what;
  }
  if (!described.zarr.chunk_codecs.is_null() && converted.zarr.chunk_codecs != described.zarr.chunk_codecs)
    return "chunk codecs " + described.zarr.chunk_codecs.dump();
  const std::string& encoding = described.precomputed.encoding;
  if (encoding != PrecomputedSpecOptions{}.encoding && converted.precomputed.encoding != encoding)
    return encoding + " chunk encoding";
  if (described.hdf5.shuffle && !converted.hdf5.shuffle) return "shuffle filter";
  if (described.hdf5.fletcher32 && !converted.hdf5.fletcher32) return "fletcher32 filter";
  return "";
}

}  // namespace

Result<ArraySpec> ConversionSpec(const Array& source, Format format, bool codec_chosen) {
  if (source.element_type())
    return Unsupported(source.location().ToString() + ": its elements are " + source.element_type()->description +
                       ", which tessera writes in no format (conversion keeps the dtype)");
  if (source.object_type())
    return Unsupported(source.location().ToString() + ": its elements are variable-length (" +
                       source.object_type()->name + "), which tessera writes in no format (string arrays are read-only)");
  ArraySpec s;
  s.dtype = source.dtype();
  s.shape = source.shape();
  s.chunk_shape = source.chunk_shape();
  s.fill_value = FillValueToJson(source.dtype(), source.fill_value());
  DriverOf(source.format())
      .DescribeSpec({source.metadata(), source.description(), source.chunk_shape(), source.shard_shape(), source.level()},
                    &s);
  const ArraySpec described = s;
  const std::string converting = "converting " + source.location().ToString() + " to " + std::string(FormatName(format));
  // A conversion never drops the source's codec without being asked: unless the caller chooses
  // one, a codec the destination cannot write is an error naming it.
  auto keeps_encoding = [&](const ArraySpec& converted, const Status& refusal) -> Status {
    if (codec_chosen) return Status::Ok();
    const std::string lost = LostEncoding(described, converted);
    if (lost.empty()) return Status::Ok();
    const std::string field = refusal.ok() ? "codec" : refusal.field();
    std::string why;
    if (!refusal.ok()) {
      why = refusal.message();
      if (refusal.field_leads_message()) why = why.substr(std::min(why.size(), refusal.field().size() + 2));
      why = " (" + why + ")";
    }
    return Status(ErrorKind::kUnsupported, field + ": " + std::string(FormatName(format)) + " does not write the source's " +
                                               lost + why + "; choose the codec to convert anyway (--codec / codec=, "
                                               "--encoding / encoding= for precomputed; none stores the chunks uncompressed)")
        .WithField(field)
        .WithContext(converting);
  };
  DropForeignFields(format, &s);
  Status first_refusal;
  // Whatever the destination refuses goes back to its default, field by field.
  for (int tries = 0; tries < 16; ++tries) {
    // Resolved, and a layout the format's writer can plan (precomputed shards, say, must be Morton boxes).
    Result<ArraySpec> resolved = ResolveSpec(s, format);
    Status st = resolved.ok() ? DriverOf(format).Plan(*resolved, 1).status() : resolved.status();
    if (st.ok()) {
      TESSERA_RETURN_IF_ERROR(keeps_encoding(s, first_refusal));
      return s;
    }
    // The field the error is about, from the error itself (never from its text): what a plan
    // checks beyond ResolveSpec is the shard layout (precomputed shards must be Morton boxes).
    const std::string_view field = SpecFieldOfError(st);
    if (first_refusal.ok() && (field == "codec" || field == "level" || field == "encoding")) first_refusal = st;
    if (!DropField(field, format, &s)) return st.WithContext(converting);
  }
  return Unsupported(converting + ": no spec the format takes");
}

int64_t CopySlabRows(const Array& source, const ArraySpec& destination) {
  const std::vector<int64_t>& shape = source.shape();
  int64_t row_bytes = static_cast<int64_t>(ItemSize(source.dtype()));
  for (size_t d = 1; d < shape.size(); ++d) row_bytes *= shape[d];
  const int64_t source_rows = std::max<int64_t>(1, source.chunk_shape()[0]);
  int64_t shard_rows = destination.chunk_shape.empty() ? 1 : destination.chunk_shape[0];
  if (!destination.shard_chunks.empty()) shard_rows *= destination.shard_chunks[0];
  int64_t rows = index::CeilDiv(std::max<int64_t>(shard_rows, 1), source_rows) * source_rows;
  const int64_t cap = std::max<int64_t>(1, kMaxSlabBytes / std::max<int64_t>(row_bytes, 1));
  if (rows > cap) rows = cap >= source_rows ? cap / source_rows * source_rows : cap;
  return std::clamp<int64_t>(rows, 1, std::max<int64_t>(shape[0], 1));
}

Status CopyArray(const Array& source, Stream& stream, const CopyOptions& options) {
  const ArraySpec& spec = stream.spec();
  const std::vector<int64_t>& shape = source.shape();
  const std::string what = "copying " + source.location().ToString();
  auto refuse = [&](const std::string& why) {
    stream.Abort();
    return InvalidArgument(what + ": " + why);
  };
  if (source.element_type())
    return refuse("its elements are " + source.element_type()->description + ", which no stream takes");
  if (source.object_type())
    return refuse("its elements are variable-length (" + source.object_type()->name + "), which no stream takes");
  if (spec.dtype != source.dtype())
    return refuse("the stream takes " + std::string(DataTypeName(spec.dtype)) + ", the source is " +
                  std::string(DataTypeName(source.dtype())) + " (conversion does not change the dtype)");
  if (spec.shape.size() != shape.size() || !std::equal(shape.begin() + 1, shape.end(), spec.shape.begin() + 1) ||
      (spec.shape[0] != 0 && spec.shape[0] != shape[0]))
    return refuse("the stream's shape does not take the source's rows");
  const int64_t rows = shape[0];
  const int64_t row_bytes = stream.row_bytes();
  const int64_t slab_rows = CopySlabRows(source, spec);
  const auto start = std::chrono::steady_clock::now();
  ReadOptions read;
  read.threads = options.read_threads;
  // Two slabs: one read (on another thread) while the other is appended.
  Bytes slabs[2] = {Bytes(static_cast<size_t>(std::min(slab_rows, std::max<int64_t>(rows, 1)) * row_bytes)),
                    Bytes(static_cast<size_t>(rows > slab_rows ? slab_rows * row_bytes : 0))};
  auto read_slab = [&](int64_t first, Bytes* out) {
    Hyperslab sel = Hyperslab::All(shape);
    sel.dims[0] = {first, 1, std::min(slab_rows, rows - first)};
    return source.Read(sel, out->data(), read);
  };
  std::future<Status> next;
  if (rows > 0) next = std::async(std::launch::async, read_slab, 0, &slabs[0]);
  for (int64_t first = 0, k = 0; first < rows; first += slab_rows, ++k) {
    Status got = next.get();
    if (!got.ok()) {
      stream.Abort();
      return got.WithContext(what + " (rows " + std::to_string(first) + ".." +
                             std::to_string(std::min(rows, first + slab_rows)) + ")");
    }
    const int64_t n = std::min(slab_rows, rows - first);
    Bytes& slab = slabs[k % 2];
    if (first + slab_rows < rows) next = std::async(std::launch::async, read_slab, first + slab_rows, &slabs[(k + 1) % 2]);
    Status appended = stream.Append(ByteView(slab.data(), static_cast<size_t>(n * row_bytes)));
    if (!appended.ok()) {
      if (next.valid()) next.wait();  // the reader still writes into a slab this frame owns
      return appended;
    }
    if (options.progress) {
      CopyProgress p;
      p.bytes_done = (first + n) * row_bytes;
      p.bytes_total = rows * row_bytes;
      p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      options.progress(p);
    }
  }
  return Status::Ok();
}

Result<StreamStatistics> Convert(const Array& source, const std::string& location, const ArraySpec& spec,
                                 const StreamOptions& stream_options, const CopyOptions& copy_options) {
  // Replacing (w) or continuing (a) the source itself would remove or change what is being read.
  TESSERA_ASSIGN_OR_RETURN(const Location destination, ParseLocation(location, stream_options.storage));
  if (spec.reorders_arrival())
    return FieldError(ErrorKind::kUnsupported, "arrival_order", "a conversion reads its source in stored order");
  if (stream_options.mode != Mode::kCreate && SameLocation(destination, source.location()))
    return InvalidArgument("converting " + source.location().ToString() + " into itself (mode " +
                           std::string(ModeName(stream_options.mode)) + ") would change what it reads");
  if (stream_options.mode == Mode::kCreate || stream_options.mode == Mode::kOverwrite) {
    TESSERA_ASSIGN_OR_RETURN(api_internal::Resolved r, api_internal::Resolve(location, spec, stream_options));
    if (api_internal::CopiesByRegions(r, stream_options))
      return api_internal::CopyByRegions(source, r, stream_options, copy_options);
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, CreateStream(location, spec, stream_options));
  TESSERA_RETURN_IF_ERROR(CopyArray(source, *stream, copy_options));
  TESSERA_RETURN_IF_ERROR(stream->Close());
  return stream->stats();
}

Result<std::string> PlanConversion(const Array& source, const std::string& location, const ArraySpec& spec,
                                   const StreamOptions& stream_options) {
  TESSERA_ASSIGN_OR_RETURN(api_internal::Resolved r, api_internal::Resolve(location, spec, stream_options));
  if (api_internal::CopiesByRegions(r, stream_options)) {
    // The plan of a copy Convert would refuse (w-: something exists there) is that refusal.
    if (stream_options.mode == Mode::kCreate) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> what, api_internal::WhatExistsAt(r.location, r.format));
      if (what) return api_internal::ExistsError(r.location, *what);
    }
    return api_internal::PlanRegionCopy(source, r);
  }
  TESSERA_ASSIGN_OR_RETURN(std::string plan, PlanStream(location, spec, stream_options));
  const int64_t slab_rows = CopySlabRows(source, r.spec);
  int64_t row_bytes = static_cast<int64_t>(ItemSize(source.dtype()));
  for (size_t d = 1; d < source.shape().size(); ++d) row_bytes *= source.shape()[d];
  char line[160];
  std::snprintf(line, sizeof line, "read slabs:             2 x %lld rows (%.1f MiB each; one read while one is encoded)\n",
                static_cast<long long>(slab_rows), static_cast<double>(slab_rows * row_bytes) / (1 << 20));
  return line + plan;
}

}  // namespace tessera
