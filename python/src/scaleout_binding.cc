// tessera.convert's library half and the calls tessera.dask makes: the defaults a conversion takes
// from its source, converting an open array, and writing one array from many
// processes (api/shared_write.h). The user-facing functions are Python (tessera/__init__.py,
// tessera/dask.py); these are private (_tessera._*).
#include <cstdio>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include "bindings.h"
#include "buffers.h"
#include "common.h"
#include "errors.h"
#include "handles.h"
#include "json_convert.h"
#include "tessera/api/driver_registry.h"
#include "tessera/api/convert.h"
#include "tessera/api/shared_write.h"
#include "tessera/spec/array_spec_json.h"

namespace tessera::python {
namespace {

// ConversionSpec in its JSON form (spec/array_spec_json.h), as tessera.create takes it (spec=).
nb::object ConversionDefaults(const ArrayHandle& h, const std::string& format_name, bool codec_chosen) {
  Result<Format> format = ParseFormat(format_name);
  ThrowIfError(format.status());
  Result<ArraySpec> spec = ConversionSpec(*h.Get(), *format, codec_chosen);
  ThrowIfError(spec.status());
  return PythonOfJson(ArraySpecToJson(*spec));
}

// A copy's options: `progress` (None, or a callable taking bytes done, bytes in all and seconds)
// called with the GIL held; an exception it raises is reported as unraisable, not propagated.
CopyOptions CopyOptionsOf(const nb::object& progress, int read_threads) {
  CopyOptions options;
  options.read_threads = read_threads;
  if (!progress.is_none()) {
    options.progress = [&progress](const CopyProgress& p) {
      nb::gil_scoped_acquire gil;
      try {
        progress(p.bytes_done, p.bytes_total, p.seconds);
      } catch (nb::python_error& e) {
        e.discard_as_unraisable("tessera.convert progress callback");
      }
    };
  }
  return options;
}

// tessera.convert of a tessera source: Convert (region by region where the destination allows).
StreamStatistics ConvertInto(const ArrayHandle& a, nb::handle location, nb::dict kw, nb::object progress) {
  const CreateRequest r = CreateRequestOfKwargs(location, kw);
  std::shared_ptr<const Array> array = a.Get();
  const CopyOptions options = CopyOptionsOf(progress, r.options.threads);
  Result<StreamStatistics> stats = Status();
  {
    nb::gil_scoped_release release;
    stats = Convert(*array, r.location, r.spec, r.options, options);
  }
  ThrowIfSpecError(stats.status());
  return *stats;
}

std::string FormatOfLocation(nb::handle location, nb::handle format) {
  Result<Format> f = FormatForNew(LocationText(location), format.is_none() ? "" : nb::cast<std::string>(format));
  ThrowIfError(f.status());
  return std::string(FormatName(*f));
}

// What tessera.dask needs to know of a shared array: its format and, per level, the shape and the
// shard shape.
nb::dict Describe(const CreateRequest& r, const ArraySpec& resolved) {
  const Format format = *r.options.format;
  nb::list levels;
  for (int j = 0; j < resolved.level_count(); ++j) {
    Result<std::vector<int64_t>> shard = LevelShardShape(resolved, format, j);
    ThrowIfError(shard.status());
    nb::dict level;
    level["shape"] = TupleOf(LevelSpec(resolved, format, j).shape);
    level["shard_shape"] = TupleOf(*shard);
    levels.append(level);
  }
  nb::dict out;
  out["format"] = std::string(FormatName(format));
  out["dtype"] = NumpyDtype(resolved.dtype);
  out["levels"] = levels;
  out["factors"] = resolved.level_count() > 1 ? TupleOf(resolved.pyramid.factors)
                                             : TupleOf(std::vector<int64_t>(resolved.shape.size(), 1));
  return out;
}

nb::dict SharedPrepare(nb::handle location, nb::dict kw, const std::string& job) {
  const CreateRequest r = CreateRequestOfKwargs(location, kw);
  Result<ArraySpec> resolved = Status();
  {
    nb::gil_scoped_release release;
    resolved = PrepareSharedJob(r.location, r.spec, r.options, job);
  }
  ThrowIfSpecError(resolved.status());
  return Describe(r, *resolved);
}

int SharedWrite(nb::handle location, nb::dict kw, int level, nb::handle origin, nb::handle data, bool write_own_level,
                const std::string& job) {
  const CreateRequest r = CreateRequestOfKwargs(location, kw);
  BufferView buf(data, /*writable=*/false, "data");
  buf.RequireContiguous();
  buf.RequireDtype(r.spec.dtype);
  Region region;
  region.level = level;
  region.origin = IntsOf(origin, "origin");
  region.shape = buf.shape();
  Result<int> last = Status();
  {
    nb::gil_scoped_release release;
    last = WriteRegion(r.location, r.spec, r.options, region,
                       ByteView(buf.data(), static_cast<size_t>(buf.size_bytes())), write_own_level, job);
  }
  ThrowIfError(last.status());
  return *last;
}

nb::list SharedRegions(nb::handle location, nb::dict kw, int level) {
  const CreateRequest r = CreateRequestOfKwargs(location, kw);
  Result<ArraySpec> resolved = ResolveSpec(r.spec, *r.options.format);
  ThrowIfSpecError(resolved.status());
  Result<std::vector<Region>> regions = RegionsFor(*resolved, *r.options.format, level);
  ThrowIfError(regions.status());
  nb::list out;
  for (const Region& g : *regions) out.append(nb::make_tuple(TupleOf(g.origin), TupleOf(g.shape)));
  return out;
}

std::unique_ptr<ArrayHandle> SharedOpenLevel(nb::handle location, nb::dict kw, int level) {
  const CreateRequest r = CreateRequestOfKwargs(location, kw);
  Result<std::unique_ptr<Array>> array = Status();
  {
    nb::gil_scoped_release release;
    array = OpenUnpublishedLevel(r.location, r.spec, r.options, level);
  }
  ThrowIfError(array.status());
  auto h = std::make_unique<ArrayHandle>();
  h->array = std::move(array).value();
  return h;
}

void SharedCheckJob(nb::handle location, nb::dict kw, const std::string& job) {
  const CreateRequest r = CreateRequestOfKwargs(location, kw);
  nb::gil_scoped_release release;
  const Status st = CheckSharedJob(r.location, r.options, job);
  nb::gil_scoped_acquire gil;
  ThrowIfError(st);
}

void SharedPublish(nb::handle location, nb::dict kw, const std::string& job) {
  const CreateRequest r = CreateRequestOfKwargs(location, kw);
  nb::gil_scoped_release release;
  const Status st = PublishSharedJob(r.location, r.spec, r.options, job);
  nb::gil_scoped_acquire gil;
  ThrowIfError(st);
}

void SharedAbandon(nb::handle location, nb::dict kw, const std::string& job) {
  const CreateRequest r = CreateRequestOfKwargs(location, kw);
  nb::gil_scoped_release release;
  (void)AbandonSharedArray(r.location, r.spec, r.options, job);
}

// tessera.dask.cleanup: kw holds format and storage_options only (no array to describe).
void SharedCleanup(nb::handle location, nb::dict kw) {
  nb::dict with_shape(kw);
  with_shape["shape"] = nb::make_tuple(1);
  with_shape["dtype"] = "uint8";
  const CreateRequest r = CreateRequestOfKwargs(location, with_shape);
  nb::gil_scoped_release release;
  const Status st = CleanupSharedLocation(r.location, r.options);
  nb::gil_scoped_acquire gil;
  ThrowIfError(st);
}

}  // namespace

void BindScaleOut(nb::module_& m) {
  m.def("_conversion_defaults", &ConversionDefaults, nb::arg("array"), nb::arg("format"),
        nb::arg("codec_chosen") = false,
        "The spec (its JSON form, for tessera.create's spec=) that gives `array`'s chunking, codec, ... in "
        "`format`; a codec `format` cannot write is an error naming it unless `codec_chosen`.");
  m.def("_convert", &ConvertInto, nb::arg("array"), nb::arg("location"), nb::arg("kwargs"), nb::arg("progress").none(),
        "Convert (api/convert.h) of an open array into a new one; returns its StreamStats.");
  m.def("_format_of", &FormatOfLocation, nb::arg("location"), nb::arg("format").none(),
        "The format name a location gets: `format`, else from the location's name.");
  // tessera.dask's job (api/shared_write.h): prepare (marker, no metadata), regions written by
  // tasks of the job, levels read back by spec, publish last; abandon or clean up after a failure.
  m.def("_shared_prepare", &SharedPrepare, nb::arg("location"), nb::arg("kwargs"), nb::arg("job"));
  m.def("_shared_write", &SharedWrite, nb::arg("location"), nb::arg("kwargs"), nb::arg("level"), nb::arg("origin"),
        nb::arg("data"), nb::arg("write_own_level") = true, nb::arg("job") = "");
  m.def("_shared_regions", &SharedRegions, nb::arg("location"), nb::arg("kwargs"), nb::arg("level"));
  m.def("_shared_open_level", &SharedOpenLevel, nb::arg("location"), nb::arg("kwargs"), nb::arg("level"));
  m.def("_shared_check_job", &SharedCheckJob, nb::arg("location"), nb::arg("kwargs"), nb::arg("job"));
  m.def("_shared_publish", &SharedPublish, nb::arg("location"), nb::arg("kwargs"), nb::arg("job"));
  m.def("_shared_abandon", &SharedAbandon, nb::arg("location"), nb::arg("kwargs"), nb::arg("job") = "");
  m.def("_shared_cleanup", &SharedCleanup, nb::arg("location"), nb::arg("kwargs"));
}

}  // namespace tessera::python
