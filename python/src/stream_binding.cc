// tessera.Stream, tessera.StreamStats and tessera.create.
#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include "bindings.h"
#include "handles.h"
#include "buffers.h"
#include "common.h"
#include "errors.h"
#include "json_convert.h"
#include "tessera/api/driver_registry.h"
#include "tessera/api/stream.h"
#include "tessera/spec/array_spec_json.h"

namespace tessera::python {
namespace {

constexpr const char* kStreamDoc = R"doc(A stream writing one array, made by :func:`tessera.create`.

Lifecycle: append (and flush) any number of times, then close; or abort at any point. As a
context manager, leaving the ``with`` block normally closes the stream and leaving it by an
exception aborts it (nothing that looks like a valid array is left: no zarr.json, no info, no
.h5 file). A stream that is garbage-collected without being closed is aborted.

Thread safety: one producer drives a Stream. Calls from several threads are serialized (each
waits for the one running), never interleaved; the GIL is released while a call runs.)doc";

// The shapes append takes, for a stream of shape (S0, S1, ..., Sr-1): any whole number of rows of
// a trailing sub-shape, i.e. (n, S1, ..., Sr-1) (frames), or (k, Sj+1, ..., Sr-1) with k <= Sj for
// some j >= 1 (k rows of a frame's dimension j: one frame is k = S1, a plane of (t, c, y, x) is
// (1, y, x) or (y, x)). The stream holds the rows of a partial frame until the frame completes.
bool AppendableShape(const std::vector<int64_t>& shape, const std::vector<int64_t>& in) {
  const size_t r = shape.size(), m = in.size();
  if (m == r - 1 && std::equal(in.begin(), in.end(), shape.begin() + 1)) return true;  // one frame (also 0-d)
  if (m == 0 || m > r) return false;
  if (!std::equal(in.begin() + 1, in.end(), shape.end() - static_cast<std::ptrdiff_t>(m - 1))) return false;
  return m == r || in[0] <= shape[r - m];
}

std::string AppendableShapesText(const std::vector<int64_t>& shape) {
  const size_t r = shape.size();
  auto tuple = [&](const std::string& lead, size_t from) {
    std::string t = "(" + lead;
    for (size_t d = from; d < r; ++d) t += ", " + std::to_string(shape[d]);
    return t + (from == r ? ",)" : ")");
  };
  std::string text = tuple("n", 1) + " (frames)";
  for (size_t j = 1; j < r; ++j) {
    const std::string k = std::to_string(shape[j]);
    text += ", " + tuple("k", j + 1) + " with k <= " + k + (j == 1 ? " (one frame: k = " + k + ")" : "");
  }
  return text;
}

// Calls create(progress=...)'s function with the stream's counters (the GIL held).
void ReportProgress(StreamHandle& h, bool final) {
  if (!h.progress.is_valid() || (final && !h.progress_is_line)) return;
  StreamStatistics stats;
  (void)Locked(h, [&](Stream& s) {
    stats = s.stats();
    return Status::Ok();
  });
  const nb::object total = h.progress_total >= 0 ? nb::object(nb::int_(h.progress_total)) : nb::none();
  if (h.progress_is_line) {
    h.progress(stats.bytes_in, total, stats.seconds, final);
  } else {
    h.progress(stats.bytes_in, total, stats.seconds);
  }
}

void Append(StreamHandle& h, nb::handle data) {
  h.RequireOpen("append");
  const ArraySpec& spec = h.stream->spec();
  BufferView buf(data, /*writable=*/false, "append");
  buf.RequireContiguous();
  buf.RequireDtype(spec.dtype);
  const std::vector<int64_t> in = buf.shape();
  // Rows arrive in the stream's arrival order (arrival_order): their shape is the arriving one.
  const std::vector<int64_t> arriving = spec.arrival_shape();
  if (!AppendableShape(arriving, in)) {
    const std::string order = spec.reorders_arrival() ? " in its arrival order" : "";
    throw StatusError(ErrorKind::kInvalidArgument, "append: expected whole rows of the stream's shape" + order + " " +
                                                       ShapeText(arriving) + ": " + AppendableShapesText(arriving) +
                                                       "; got an array of shape " + ShapeText(in));
  }
  // The caller's memory is borrowed for this call only: Append copies it into the stream's own
  // buffers before returning (the buffer export keeps numpy from freeing or resizing it meanwhile).
  const ByteView bytes(buf.data(), static_cast<size_t>(buf.size_bytes()));
  ThrowIfError(Locked(h, [&](Stream& s) { return s.Append(bytes); }));
  ReportProgress(h, /*final=*/false);
}

void Close(StreamHandle& h) {
  if (h.stream->state() == StreamState::kClosed) return;
  h.RequireOpen("close");
  ThrowIfError(Locked(h, [](Stream& s) { return s.Close(); }));  // a failed Close aborts the stream
  ReportProgress(h, /*final=*/true);
}

void Abort(StreamHandle& h) {
  if (h.stream->state() != StreamState::kOpen) return;  // never undo a closed stream
  (void)Locked(h, [](Stream& s) {
    s.Abort();
    return Status::Ok();
  });
}

template <typename Options>
void RequireFormat(const std::optional<Options>& given, const char* name, Format owner, Format format) {
  if (given && owner != format) {
    throw StatusError(ErrorKind::kUnsupported, std::string(name) + ": an option of " + std::string(FormatName(owner)) +
                                                   " arrays; this array is " + std::string(FormatName(format)));
  }
}

std::array<int64_t, 3> Xyz(nb::handle obj, const char* what) {
  std::vector<int64_t> v = IntsOf(obj, what);
  if (v.size() != 3) {
    throw StatusError(ErrorKind::kInvalidArgument, std::string(what) + ": expected 3 values (x, y, z), got " +
                                                       std::to_string(v.size()));
  }
  return {v[0], v[1], v[2]};
}

// The spec's JSON form given as `spec=` (a dict), checked; its errors name the JSON path.
nlohmann::json SpecJsonOfPython(nb::handle spec) {
  if (!PyDict_Check(spec.ptr())) {
    throw nb::type_error(("spec: expected a dict (a spec's JSON form, as Array.spec gives it), got " + TypeName(spec)).c_str());
  }
  nlohmann::json j = JsonOfPython(spec, "spec");
  ThrowIfError(ArraySpecFromJson(j).status());
  return j;
}

// arrival_order given by name: the stored dimension each name is, among the array's dimension
// names (dimension_names, else its OME axes, else the default axes an OME image would get).
std::vector<int64_t> ArrivalOrderOfNames(const ArraySpec& spec, const std::vector<std::string>& names) {
  std::vector<std::string> dims = spec.dimension_names;
  if (dims.empty()) {
    const std::vector<pyramid::OmeAxis> axes =
        spec.ome.axes.empty() ? pyramid::DefaultOmeAxes(static_cast<int>(spec.shape.size()), {}) : spec.ome.axes;
    for (const pyramid::OmeAxis& a : axes) dims.push_back(a.name);
  }
  std::string listed;
  for (const std::string& d : dims) listed += (listed.empty() ? "" : ", ") + d;
  std::vector<int64_t> order;
  for (const std::string& name : names) {
    const auto it = std::find(dims.begin(), dims.end(), name);
    if (it == dims.end())
      throw StatusError(ErrorKind::kInvalidArgument, "arrival_order: '" + name +
                                                         "' is not one of the array's dimension names (" + listed + ")");
    order.push_back(it - dims.begin());
  }
  return order;
}

// tessera.create's keyword arguments (as a dict: the scale-out calls take the same ones) as a
// location, a spec and stream options; checked and refused in the library's words. The spec is
// built in one place: the keyword arguments become a patch of its JSON form, laid over `spec=`
// (or an empty spec) and read by ArraySpecFromJson.
CreateRequest BuildCreateRequest(nb::handle location, nb::dict kw) {
  using nlohmann::json;
  static const char* const kKnown[] = {
      "dtype", "shape", "format", "chunks", "shard_chunks", "codec", "level", "fill_value", "dimension_names",
      "attributes", "threads", "backend", "index_location", "dataset", "shuffle", "fletcher32", "encoding",
      "cseg_block", "jpeg_quality", "png_level", "hash", "resolution", "voxel_offset", "scale_key", "discard",
      "pyramid", "downsample",
      "downsample_factors", "axes", "voxel_size", "translation", "ome", "spec", "mode",
      "cname", "typesize", "blocksize", "arrival_order", "storage_options"};
  for (auto [key, value] : kw) {
    const std::string k = nb::cast<std::string>(key);
    if (std::find_if(std::begin(kKnown), std::end(kKnown), [&](const char* n) { return k == n; }) == std::end(kKnown))
      throw nb::type_error(("create() got an unexpected keyword argument '" + k + "'").c_str());
  }
  auto get = [&](const char* k) -> nb::handle { return kw.contains(k) ? nb::handle(kw[k]) : nb::handle(nb::none()); };
  auto str = [&](const char* k) -> std::optional<std::string> {
    if (get(k).is_none()) return std::nullopt;
    if (!PyUnicode_Check(get(k).ptr())) throw nb::type_error((std::string(k) + ": expected str, got " + TypeName(get(k))).c_str());
    return nb::cast<std::string>(get(k));
  };
  auto flag = [&](const char* k) -> std::optional<bool> {
    if (get(k).is_none()) return std::nullopt;
    if (!PyBool_Check(get(k).ptr())) throw nb::type_error((std::string(k) + ": expected bool, got " + TypeName(get(k))).c_str());
    return get(k).ptr() == Py_True;
  };
  auto integer = [&](const char* k) -> std::optional<int> {
    if (get(k).is_none()) return std::nullopt;
    if (!PyLong_Check(get(k).ptr()) || PyBool_Check(get(k).ptr()))
      throw nb::type_error((std::string(k) + ": expected int, got " + TypeName(get(k))).c_str());
    return nb::cast<int>(get(k));
  };
  const json base = get("spec").is_none() ? json::object() : SpecJsonOfPython(get("spec"));
  // mode 'a' continues a stored array with its spec: dtype and shape, if given, must agree with it.
  const bool appending = str("mode").value_or("") == "a";
  if (!appending &&
      ((!kw.contains("dtype") && !base.contains("dtype")) || (!kw.contains("shape") && !base.contains("shape"))))
    throw nb::type_error("create() missing required keyword argument(s): dtype and shape");
  const nb::handle dtype = get("dtype"), shape = get("shape"), chunks = get("chunks"), shard_chunks = get("shard_chunks"),
                   fill_value = get("fill_value"), dimension_names = get("dimension_names"),
                   attributes = get("attributes"), cseg_block = get("cseg_block"), resolution = get("resolution"),
                   voxel_offset = get("voxel_offset"), pyramid = get("pyramid"),
                   downsample_factors = get("downsample_factors"), axes = get("axes"), voxel_size = get("voxel_size"),
                   translation = get("translation");
  const std::optional<std::string> format = str("format"), codec = str("codec"), index_location = str("index_location"),
                                   dataset = str("dataset"), encoding = str("encoding"), hash = str("hash"),
                                   scale_key = str("scale_key"), downsample = str("downsample");
  const std::optional<int> level = integer("level"), jpeg_quality = integer("jpeg_quality"),
                           png_level = integer("png_level");
  // Codec blosc's settings (zarr3).
  const std::optional<std::string> cname = str("cname");
  const std::optional<int> typesize = integer("typesize"), blocksize = integer("blocksize");
  const int threads = integer("threads").value_or(0);
  const std::string backend = str("backend").value_or("cpu");
  const std::optional<bool> fletcher32 = flag("fletcher32"), ome = flag("ome");
  // shuffle: a bool or a blosc shuffle name (what it means depends on the format: below).
  const nb::handle shuffle = get("shuffle");
  if (!shuffle.is_none() && !PyBool_Check(shuffle.ptr()) && !PyUnicode_Check(shuffle.ptr()))
    throw nb::type_error(("shuffle: expected bool or str, got " + TypeName(shuffle)).c_str());
  const bool discard = flag("discard").value_or(false);
  CreateRequest request;
  request.location = LocationText(location);
  const std::string& where = request.location;
  StreamOptions& options = request.options;
  Result<Format> chosen = FormatForNew(where, format.value_or(""));
  ThrowIfError(chosen.status());
  options.format = *chosen;
  const Format fmt = *chosen;
  options.threads = threads;
  Result<stream::Backend> b = stream::ParseBackend(backend);
  ThrowIfError(b.status());
  options.backend = *b;
  options.discard = discard;
  options.storage = StoreOptionsOf(get("storage_options"));
  if (const std::optional<std::string> mode = str("mode")) {
    Result<Mode> parsed = ParseMode(*mode);
    ThrowIfError(parsed.status());
    options.mode = *parsed;
  }

  // The keyword arguments given (None: not given), as a patch of the spec's JSON form.
  json patch = json::object();
  if (kw.contains("dtype")) patch["dtype"] = std::string(DataTypeName(DataTypeOfNumpy(dtype, "dtype")));
  if (kw.contains("shape")) patch["shape"] = IntsOf(shape, "shape");
  if (!chunks.is_none()) patch["chunk_shape"] = IntsOf(chunks, "chunks");
  if (!shard_chunks.is_none()) patch["shard_chunks"] = IntsOf(shard_chunks, "shard_chunks");
  if (codec) patch["codec"] = *codec;
  if (level) patch["level"] = *level;
  // Codec blosc's settings (zarr3); shuffle is HDF5's filter for an HDF5 file, else blosc's.
  auto require_zarr3 = [&](bool given, const char* name) {
    if (given && fmt != Format::kZarr3)
      throw StatusError(ErrorKind::kUnsupported, std::string(name) + ": a setting of codec blosc, which only zarr3 "
                                                     "arrays take; this array is " + std::string(FormatName(fmt)));
  };
  require_zarr3(cname.has_value(), "cname");
  require_zarr3(typesize.has_value(), "typesize");
  require_zarr3(blocksize.has_value(), "blocksize");
  if (!shuffle.is_none() && fmt == Format::kPrecomputed)
    throw StatusError(ErrorKind::kUnsupported, "shuffle: an option of zarr3 (codec blosc) and hdf5 arrays; this array is precomputed");
  if (cname) patch["zarr3"]["cname"] = *cname;
  if (typesize) patch["zarr3"]["typesize"] = *typesize;
  if (blocksize) patch["zarr3"]["blocksize"] = *blocksize;
  if (!shuffle.is_none()) {
    const bool is_bool = PyBool_Check(shuffle.ptr());
    const std::string name = is_bool ? std::string() : nb::cast<std::string>(shuffle);
    if (fmt == Format::kHdf5) {
      // HDF5's shuffle filter is the byte shuffle: on (True, 'shuffle', 'byte') or off.
      if (!is_bool && name != "shuffle" && name != "byte" && name != "noshuffle" && name != "none")
        throw StatusError(ErrorKind::kInvalidArgument, "shuffle: HDF5's shuffle filter is the byte shuffle (True or "
                                                       "False, 'shuffle' or 'noshuffle'), not '" + name + "'");
      patch["hdf5"]["shuffle"] = is_bool ? shuffle.ptr() == Py_True : name == "shuffle" || name == "byte";
    } else {
      patch["zarr3"]["shuffle"] = is_bool ? (shuffle.ptr() == Py_True ? "shuffle" : "noshuffle") : name;
    }
  }
  const bool blosc_given = cname || typesize || blocksize || (!shuffle.is_none() && fmt != Format::kHdf5);
  // A codec, level or blosc setting given replaces the chunk codecs a source's spec carried as stored.
  if (codec || level || blosc_given) patch["zarr3"]["chunk_codecs"] = nullptr;
  if (!fill_value.is_none()) patch["fill_value"] = FillValueJsonOfPython(fill_value);
  if (!dimension_names.is_none()) {
    if (PyUnicode_Check(dimension_names.ptr()) || !PySequence_Check(dimension_names.ptr())) {
      throw nb::type_error("dimension_names: expected a sequence of str");
    }
    json names = json::array();
    for (nb::handle name : dimension_names) {
      if (!PyUnicode_Check(name.ptr())) throw nb::type_error(("dimension_names: expected str, got " + TypeName(name)).c_str());
      names.push_back(nb::cast<std::string>(name));
    }
    patch["dimension_names"] = std::move(names);
  }
  // arrival_order: stored dimensions by index, or by name (resolved below, once the names are known).
  std::vector<std::string> arrival_names;
  if (const nb::handle order = get("arrival_order"); !order.is_none()) {
    if (PyUnicode_Check(order.ptr()) || !PySequence_Check(order.ptr()))
      throw nb::type_error("arrival_order: expected a sequence of dimension indices (int) or names (str)");
    json indices = json::array();
    for (nb::handle d : order) {
      if (PyUnicode_Check(d.ptr())) {
        arrival_names.push_back(nb::cast<std::string>(d));
      } else if (PyLong_Check(d.ptr()) && !PyBool_Check(d.ptr())) {
        indices.push_back(nb::cast<int64_t>(d));
      } else {
        throw nb::type_error(("arrival_order: expected int or str entries, got " + TypeName(d)).c_str());
      }
    }
    if (!arrival_names.empty() && !indices.empty())
      throw nb::type_error("arrival_order: give every dimension by index or every one by name, not both");
    if (arrival_names.empty()) patch["arrival_order"] = std::move(indices);
  }
  if (!attributes.is_none()) {
    if (!PyDict_Check(attributes.ptr())) throw nb::type_error(("attributes: expected a dict, got " + TypeName(attributes)).c_str());
    patch["attributes"] = JsonOfPython(attributes, "attributes");
  }

  // Options only one format has: refused (not ignored) for the others.
  RequireFormat(index_location, "index_location", Format::kZarr3, fmt);
  if (index_location) {
    if (*index_location != "end" && *index_location != "start") {
      throw StatusError(ErrorKind::kInvalidArgument, "index_location: expected 'end' or 'start', got '" + *index_location + "'");
    }
    patch["zarr3"]["index_at_start"] = *index_location == "start";
  }
  RequireFormat(dataset, "dataset", Format::kHdf5, fmt);
  RequireFormat(fletcher32, "fletcher32", Format::kHdf5, fmt);
  if (dataset) patch["hdf5"]["dataset"] = *dataset;
  if (fletcher32) patch["hdf5"]["fletcher32"] = *fletcher32;
  RequireFormat(encoding, "encoding", Format::kPrecomputed, fmt);
  RequireFormat(hash, "hash", Format::kPrecomputed, fmt);
  RequireFormat(scale_key, "scale_key", Format::kPrecomputed, fmt);
  auto given = [](nb::handle h) { return h.is_none() ? std::nullopt : std::optional<bool>(true); };
  RequireFormat(given(cseg_block), "cseg_block", Format::kPrecomputed, fmt);
  RequireFormat(jpeg_quality, "jpeg_quality", Format::kPrecomputed, fmt);
  RequireFormat(png_level, "png_level", Format::kPrecomputed, fmt);
  RequireFormat(given(resolution), "resolution", Format::kPrecomputed, fmt);
  RequireFormat(given(voxel_offset), "voxel_offset", Format::kPrecomputed, fmt);
  if (encoding) patch["precomputed"]["encoding"] = *encoding;
  if (hash) patch["precomputed"]["hash"] = *hash;
  if (scale_key) patch["precomputed"]["scale_key"] = *scale_key;
  if (!cseg_block.is_none()) patch["precomputed"]["cseg_block_xyz"] = Xyz(cseg_block, "cseg_block");
  if (jpeg_quality) patch["precomputed"]["jpeg_quality"] = *jpeg_quality;
  if (png_level) patch["precomputed"]["png_level"] = *png_level;
  if (!voxel_offset.is_none()) patch["precomputed"]["voxel_offset_xyz"] = Xyz(voxel_offset, "voxel_offset");
  if (!resolution.is_none()) patch["precomputed"]["resolution_xyz"] = FloatsOf(resolution, 3, "resolution");

  // Pyramid and OME-Zarr image.
  if (!pyramid.is_none()) {
    if (PyUnicode_Check(pyramid.ptr())) {
      if (nb::cast<std::string>(pyramid) != "auto")
        throw StatusError(ErrorKind::kInvalidArgument, "pyramid: expected a level count or 'auto', got '" +
                                                           nb::cast<std::string>(pyramid) + "'");
      patch["pyramid"]["levels"] = 0;
    } else {
      if (!PyLong_Check(pyramid.ptr())) throw nb::type_error(("pyramid: expected an int or 'auto', got " + TypeName(pyramid)).c_str());
      const int64_t n = nb::cast<int64_t>(pyramid);
      if (n < 1 || n > 64) throw StatusError(ErrorKind::kInvalidArgument, "pyramid: levels must be 1..64 (or 'auto'), got " + std::to_string(n));
      patch["pyramid"]["levels"] = n;
    }
  }
  if (downsample) patch["pyramid"]["method"] = *downsample;
  if (!downsample_factors.is_none()) patch["pyramid"]["factors"] = IntsOf(downsample_factors, "downsample_factors");
  if (!axes.is_none()) {
    if (PyUnicode_Check(axes.ptr())) {
      patch["ome"]["axes"] = nb::cast<std::string>(axes);  // "name:type[:unit],...", parsed by the library
    } else {
      if (!PySequence_Check(axes.ptr())) throw nb::type_error("axes: expected 'name:type[:unit],...' or a sequence of (name, type[, unit])");
      json list = json::array();
      for (nb::handle a : axes) {
        if (PyUnicode_Check(a.ptr()) || !PySequence_Check(a.ptr()) || nb::len(a) < 2 || nb::len(a) > 3)
          throw nb::type_error("axes: each axis is a (name, type) or (name, type, unit) tuple of str");
        json axis = {{"name", nb::cast<std::string>(a[0])}, {"type", nb::cast<std::string>(a[1])}};
        if (nb::len(a) == 3 && !a[2].is_none()) axis["unit"] = nb::cast<std::string>(a[2]);
        list.push_back(std::move(axis));
      }
      patch["ome"]["axes"] = std::move(list);
    }
  }
  if (!voxel_size.is_none()) {
    const json rank_of = patch.contains("shape") ? patch["shape"] : base.value("shape", json());
    patch["ome"]["voxel_size"] = FloatsOf(voxel_size, rank_of.is_array() ? rank_of.size() : 0, "voxel_size");
  }
  if (!translation.is_none()) {
    const json rank_of = patch.contains("shape") ? patch["shape"] : base.value("shape", json());
    patch["ome"]["offset"] = FloatsOf(translation, rank_of.is_array() ? rank_of.size() : 0, "translation");
  }
  if (ome) patch["ome"]["image"] = *ome;

  // An argument given as None is the field's default: over `spec=`, it takes the field back out.
  static constexpr std::pair<const char*, std::pair<const char*, const char*>> kPathOf[] = {
      {"chunks", {"chunk_shape", nullptr}},       {"shard_chunks", {"shard_chunks", nullptr}},
      {"codec", {"codec", nullptr}},              {"level", {"level", nullptr}},
      {"fill_value", {"fill_value", nullptr}},    {"dimension_names", {"dimension_names", nullptr}},
      {"attributes", {"attributes", nullptr}},    {"index_location", {"zarr3", "index_at_start"}},
      {"dataset", {"hdf5", "dataset"}},           {"cname", {"zarr3", "cname"}},
      {"typesize", {"zarr3", "typesize"}},        {"blocksize", {"zarr3", "blocksize"}},
      {"fletcher32", {"hdf5", "fletcher32"}},     {"encoding", {"precomputed", "encoding"}},
      {"cseg_block", {"precomputed", "cseg_block_xyz"}}, {"hash", {"precomputed", "hash"}},
      {"jpeg_quality", {"precomputed", "jpeg_quality"}}, {"png_level", {"precomputed", "png_level"}},
      {"resolution", {"precomputed", "resolution_xyz"}}, {"voxel_offset", {"precomputed", "voxel_offset_xyz"}},
      {"scale_key", {"precomputed", "scale_key"}}, {"pyramid", {"pyramid", "levels"}},
      {"downsample", {"pyramid", "method"}},      {"downsample_factors", {"pyramid", "factors"}},
      {"axes", {"ome", "axes"}},                  {"voxel_size", {"ome", "voxel_size"}},
      {"translation", {"ome", "offset"}},         {"arrival_order", {"arrival_order", nullptr}},
      {"ome", {"ome", "image"}}};
  if (kw.contains("shuffle") && shuffle.is_none()) patch[fmt == Format::kHdf5 ? "hdf5" : "zarr3"]["shuffle"] = nullptr;
  for (const auto& [argument, path] : kPathOf) {
    if (!kw.contains(argument) || !get(argument).is_none()) continue;
    if (path.second == nullptr) {
      patch[path.first] = nullptr;
    } else {
      patch[path.first][path.second] = nullptr;
    }
  }

  json spec = base;
  ThrowIfError(PatchSpecJson(&spec, patch));
  Result<ArraySpec> built = ArraySpecFromJson(spec);
  ThrowIfSpecError(built.status());  // errors of the keyword arguments' values, named as the arguments
  request.spec = std::move(built).value();
  if (!arrival_names.empty()) request.spec.arrival_order = ArrivalOrderOfNames(request.spec, arrival_names);
  return request;
}

std::unique_ptr<StreamHandle> Create(nb::handle location, nb::kwargs kwargs) {
  // progress belongs to this call, not to the spec (the scale-out calls that share the keyword
  // arguments report their own way).
  nb::object progress = nb::none();
  nb::dict spec_kwargs;
  for (auto [key, value] : kwargs) {
    if (nb::cast<std::string>(key) == "progress") progress = nb::borrow(value);
    else spec_kwargs[key] = value;
  }
  if (!progress.is_none() && !PyBool_Check(progress.ptr()) && !PyCallable_Check(progress.ptr()))
    throw nb::type_error(("progress: expected a bool or a callable, got " + TypeName(progress)).c_str());
  const CreateRequest r = BuildCreateRequest(location, spec_kwargs);
  Result<std::unique_ptr<Stream>> created = Status();
  {
    nb::gil_scoped_release release;
    created = CreateStream(r.location, r.spec, r.options);
  }
  ThrowIfSpecError(created.status());
  auto h = std::make_unique<StreamHandle>();
  h->stream = std::move(created).value();
  if (progress.ptr() == Py_True) {
    // The line convert prints, from the package (it throttles itself).
    h->progress = nb::module_::import_("tessera").attr("_progress_function")(true);
    h->progress_is_line = true;
  } else if (!progress.is_none() && progress.ptr() != Py_False) {
    h->progress = progress;
  }
  const std::vector<int64_t>& shape = h->stream->spec().shape;
  if (shape[0] > 0 && r.options.mode != Mode::kAppend) h->progress_total = shape[0] * h->stream->row_bytes();
  return h;
}

constexpr const char* kCreateSig =
    "def create(location: str | os.PathLike[str], *, dtype: numpy.typing.DTypeLike | None = None, "
    "shape: int | typing.Sequence[int] | None = None, format: str | None = None, "
    "chunks: int | typing.Sequence[int] | None = None, shard_chunks: int | typing.Sequence[int] | None = None, "
    "codec: str | None = None, level: int | None = None, cname: str | None = None, "
    "typesize: int | None = None, blocksize: int | None = None, fill_value: typing.Any = None, "
    "dimension_names: typing.Sequence[str] | None = None, attributes: dict[str, typing.Any] | None = None, "
    "threads: int = 0, backend: str = 'cpu', index_location: str | None = None, dataset: str | None = None, "
    "shuffle: bool | str | None = None, fletcher32: bool | None = None, encoding: str | None = None, "
    "cseg_block: typing.Sequence[int] | None = None, jpeg_quality: int | None = None, "
    "png_level: int | None = None, hash: str | None = None, "
    "resolution: typing.Sequence[float] | None = None, voxel_offset: typing.Sequence[int] | None = None, "
    "scale_key: str | None = None, discard: bool = False, pyramid: int | str | None = None, "
    "downsample: str | None = None, downsample_factors: typing.Sequence[int] | None = None, "
    "axes: str | typing.Sequence[typing.Sequence[str]] | None = None, "
    "voxel_size: typing.Sequence[float] | None = None, translation: typing.Sequence[float] | None = None, "
    "ome: bool = False, arrival_order: typing.Sequence[int | str] | None = None, "
    "spec: dict[str, typing.Any] | None = None, mode: str = 'w-', "
    "progress: bool | typing.Callable[[int, int | None, float], typing.Any] | None = None) -> Stream";

constexpr const char* kCreateDoc = R"doc(Creates an array and returns the stream that writes it.

The array is published at ``location`` as soon as the stream exists (empty, or with its
declared shape) and grows as rows arrive along dimension 0.

``mode``: 'w-' (default): if anything exists at ``location`` (an array or image of any format,
an HDF5 file, another file, a non-empty directory) raise AlreadyExistsError (a FileExistsError)
naming it, before writing anything; 'w': remove the array there wholly first (tessera writes
whole HDF5 files: 'w' replaces the file, other datasets in it included); 'a': continue the
Zarr array at ``location`` along dimension 0 with its stored spec (``dtype`` and ``shape`` may be
left out; options given must agree with it; an OME-Zarr pyramid too), ending as one stream of
all the rows would have written it, or create it when nothing is there; precomputed: continue a
single-channel scale to the rows ``shape`` gives (a sharded one while its chunk grid keeps its
compressed Morton bits per dimension), or add a scale the volume lacks.

A stream that fails, or is left by an exception inside ``with``, keeps what it published (what
a crash at that moment would leave: the rows of the last flush or completed shard row); an
HDF5 file appears only at close.

``format``: 'zarr3', 'precomputed' or 'hdf5'; default: from the location's name (.h5, .hdf5,
.he5, .nc: hdf5; anything else: zarr3).
``dtype``: anything numpy.dtype accepts (bool, int8..int64, uint8..uint64, float16/32/64,
complex64/128; precomputed and hdf5 take subsets).
``shape``: elements per dimension, dimension 0 slowest; ``shape[0] == 0`` makes dimension 0
unbounded (the array is as long as what is appended). Precomputed: (z, y, x) or (c, z, y, x).
``chunks``: the chunk (sharded: inner chunk) shape; default: the format's (about 1 MiB).
``shard_chunks``: chunks per shard along each dimension (zarr3, precomputed); default unsharded.
``codec``: 'none', 'zstd', 'gzip', 'blosc-lz4', 'blosc-zstd', 'blosc'; default zstd for zarr3,
none for precomputed and hdf5. ``level``: the codec's level (blosc's clevel, 0..9, default 5).
``codec='blosc'`` (zarr3) takes blosc's settings, each defaulting as zarr-python's BloscCodec():
``cname`` 'blosclz', 'lz4', 'lz4hc', 'zlib' or 'zstd' (default); ``shuffle`` 'noshuffle',
'shuffle' or 'bitshuffle' (also 'none', 'byte', 'bit'; True: 'shuffle', False: 'noshuffle';
default bitshuffle for 1-byte dtypes, else shuffle); ``typesize`` (1..255; default: the dtype's
size); ``blocksize`` (bytes; default 0: blosc chooses). Given with another codec they are an
error; 'blosc-lz4' and 'blosc-zstd' are blosc lz4 / zstd with the byte shuffle.
``fill_value``: what unwritten elements read as (a number, bool, complex, NaN/inf, or the Zarr
v3 JSON spelling such as "0x7fc00000"); default the dtype's zero.
``dimension_names``: one name per dimension. ``attributes``: a JSON-like dict stored with the
array (hdf5: numbers, strings and 1-D lists of numbers).
``storage_options``: how to reach an ``s3://`` store instead of (or on top of) the environment,
as :func:`tessera.open` takes them (endpoint_url, region, profile, addressing_style, anonymous,
retry_timeout, and access keys only if you pass them).
``threads``: compression threads (0: one per core). ``backend``: 'cpu' or 'cuda'.
``discard``: run the whole pipeline but store nothing (zarr3, precomputed; for benchmarks).

Multiscale pyramid (zarr3, precomputed), built while streaming:
``pyramid``: the number of levels including full resolution, or 'auto' (until every dimension
fits one chunk); zarr3 then writes an OME-Zarr 0.5 image (a group with arrays "0", "1", ...),
precomputed more scales of the same info. ``downsample``: 'mean' (default), 'min', 'max',
'median', 'mode' (default for compressed_segmentation), 'stride'; each level equals
tensorstore's downsample of the level above. ``downsample_factors``: per dimension (default 2
along space axes, 1 along time and channel). ``axes`` (zarr3): 't:time:second,y:space:micrometer,...'
or [(name, type, unit), ...] (default from dimension_names, else z, y, x with c and t before).
``voxel_size`` (zarr3): level 0's scale per dimension. ``translation`` (zarr3): level 0's
translation per dimension (the position of its first voxel's centre; the other levels' follow).
``attributes`` of an OME-Zarr image are the group's ('omero' goes inside its 'ome'). ``ome``
(zarr3): write an OME-Zarr image even without a pyramid.

``arrival_order``: the order the appended data's dimensions arrive in, when it is not the stored
order: for each dimension of the arriving data, the stored dimension it is, by index or by name
(``dimension_names``, else the OME axes), dimension 0 first. Frames arriving ``(t, z, c, y, x)``
for an array stored ``(t, c, z, y, x)``: ``arrival_order=(0, 2, 1, 3, 4)`` or
``('t', 'z', 'c', 'y', 'x')``. ``append`` then takes rows of the arriving shape (the stored array
is ``numpy.transpose(arriving, numpy.argsort(arrival_order))``); each element goes straight to its
stored chunk, with no copy of the input. CPU backend only.

Options of one format (refused with UnsupportedError for the others):
  zarr3: ``index_location`` 'end' (default) or 'start' (the shard index before the chunks).
  hdf5: ``dataset`` (default '/data'; groups on the way are created), ``shuffle`` (the byte
  shuffle filter: True or False), ``fletcher32``.
  precomputed: ``encoding`` 'raw', 'compressed_segmentation' (uint32/uint64), 'jpeg' (uint8,
  1 or 3 channels; ``jpeg_quality`` 1..100, default 75) or 'png' (uint8/uint16, 1 to 4 channels;
  ``png_level`` 0..9, default 6), ``cseg_block`` (x, y, z),
  ``hash`` 'identity' or 'murmurhash3_x86_128', ``resolution`` (x, y, z nanometres),
  ``voxel_offset`` (x, y, z), ``scale_key`` (default 's0'). These three-value options are in
  Neuroglancer's x, y, z order, as the info file writes them; shapes stay in C order.

``spec``: the whole spec as a dict in its JSON form, as :attr:`Array.spec` and ``tessera info
--json`` give it ({"dtype": "uint16", "shape": [...], "chunk_shape": [...], "codec": "zstd",
"zarr3": {...}, "precomputed": {...}, "hdf5": {...}, "pyramid": {...}, "ome": {...}}); the other
arguments change it (``dtype`` and ``shape`` may then be left out; an argument given as None takes
its field back to the default). An error in it names the JSON
path of the field ("precomputed.resolution_xyz[1]: must be a number").

``progress``: True prints bytes, GB/s and, for a bounded new array, its total and the time left
on stderr (at most twice a second; the last line at close); a callable is called after each
append with ``(bytes_done, bytes_total, seconds)``: ``bytes_total`` is None when dimension 0 is
unbounded or the stream continues a stored array (``mode='a'``), ``seconds`` since the stream
was created.

Invalid specs raise InvalidArgumentError (a ValueError) or UnsupportedError whose message starts
with the argument it is about ("chunks: ...").)doc";


}  // namespace

CreateRequest CreateRequestOfKwargs(nb::handle location, nb::dict kwargs) { return BuildCreateRequest(location, kwargs); }


void BindStream(nb::module_& m) {
  nb::class_<StreamStatistics>(m, "StreamStats", "Counters of a stream, as of the moment they were read.")
      .def_ro("bytes_in", &StreamStatistics::bytes_in, "Bytes appended.")
      .def_ro("bytes_out", &StreamStatistics::bytes_out, "Encoded bytes handed to storage.")
      .def_ro("rows_published", &StreamStatistics::rows_published,
              "Rows of dimension 0 durably stored and visible to readers.")
      .def_ro("shards_written", &StreamStatistics::shards_written, "Shards (or chunks, unsharded) written.")
      .def_ro("seconds", &StreamStatistics::seconds, "Seconds since the stream was created.")
      .def_prop_ro("gbps", &StreamStatistics::GigabytesPerSecond, "bytes_in / seconds, in GB/s (1e9 bytes).")
      .def("__repr__", [](const StreamStatistics& s) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "StreamStats(bytes_in=%lld, bytes_out=%lld, rows_published=%lld, shards_written=%lld, "
                      "seconds=%.3f, gbps=%.3f)",
                      static_cast<long long>(s.bytes_in), static_cast<long long>(s.bytes_out),
                      static_cast<long long>(s.rows_published), static_cast<long long>(s.shards_written), s.seconds,
                      s.GigabytesPerSecond());
        return std::string(buf);
      });

  nb::class_<StreamHandle>(m, "Stream", kStreamDoc)
      .def("append", &Append, nb::arg("data"), nb::sig("def append(self, data: typing.Any, /) -> None"),
           "Appends whole rows: one frame (an array of shape ``shape[1:]``), several (shape\n"
           "``(n,) + shape[1:]``), or ``k`` rows of a frame's dimension ``j`` (shape ``(k,) + shape[j+1:]``,\n"
           "``k <= shape[j]``; a ``(y, x)`` plane of a ``(t, c, y, x)`` stream). The rows of a partial\n"
           "frame are held until the frame completes; closing with a partial frame is an error. With\n"
           "``arrival_order``, these shapes are the arriving ones (``shape`` in that order).\n\n"
           "``data``: a C-contiguous numpy array, or any object with the buffer protocol or\n"
           "``__array_interface__``, of exactly the stream's dtype. It is read in place while the call\n"
           "runs (GIL released) and never kept afterwards; it is never converted or copied by tessera\n"
           "on your behalf: a wrong dtype raises TypeError, a non-contiguous array or a wrong shape\n"
           "InvalidArgumentError (a ValueError). Blocks while the pipeline is busy (backpressure).")
      .def("flush", [](StreamHandle& h) {
             h.RequireOpen("flush");
             ThrowIfError(Locked(h, [](Stream& s) { return s.Flush(); }));
           },
           "Stores and publishes everything appended so far (readers see it); appending may continue.")
      .def("set_attributes",
           [](StreamHandle& h, nb::handle attributes) {
             h.RequireOpen("set_attributes");
             const nlohmann::json j = JsonOfPython(attributes, "attributes");
             ThrowIfSpecError(Locked(h, [&](Stream& s) { return s.SetAttributes(j); }));
           },
           nb::arg("attributes"),
           "Replaces the array's attributes (an OME-Zarr image's: its group's, ``omero`` inside ``ome``);\n"
           "they are published at the next flush and at close. Zarr v3 only (UnsupportedError otherwise).")
      .def("close", &Close,
           "Stores the rest, publishes the array and ends the stream. A bounded array must have\n"
           "received exactly shape[0] rows. A failed close aborts the stream. Closing a closed\n"
           "stream does nothing.")
      .def("abort", &Abort,
           "Ends the stream without storing anything more and removes what would make the array\n"
           "look valid. Does nothing on a stream that is already closed or aborted.")
      .def_prop_ro("closed", [](const StreamHandle& h) { return h.stream->state() != StreamState::kOpen; },
                   "True once the stream was closed or aborted (an error from append, flush or close\n"
                   "aborts it).")
      .def_prop_ro("stats",
                   [](StreamHandle& h) {
                     StreamStatistics stats;
                     (void)Locked(h, [&](Stream& s) {
                       stats = s.stats();
                       return Status::Ok();
                     });
                     return stats;
                   },
                   "A StreamStats snapshot: bytes_in, bytes_out, rows_published, shards_written, seconds, gbps.")
      .def_prop_ro("shape", [](const StreamHandle& h) { return TupleOf(h.stream->spec().shape); },
                   nb::for_getter(nb::sig("def shape(self, /) -> tuple[int, ...]")),
                   "The declared shape (shape[0] == 0: unbounded).")
      .def_prop_ro("dtype", [](const StreamHandle& h) { return NumpyDtype(h.stream->spec().dtype); },
                   nb::for_getter(nb::sig("def dtype(self, /) -> numpy.dtype[typing.Any]")),
                   "The element type, as a numpy dtype.")
      .def_prop_ro("chunks", [](const StreamHandle& h) { return TupleOf(h.stream->spec().chunk_shape); },
                   nb::for_getter(nb::sig("def chunks(self, /) -> tuple[int, ...]")),
                   "The chunk (sharded: inner chunk) shape, the format's default filled in.")
      .def_prop_ro("shard_chunks",
                   [](const StreamHandle& h) -> nb::object {
                     const ArraySpec& spec = h.stream->spec();
                     if (spec.shard_chunks.empty()) return nb::none();
                     return TupleOf(spec.shard_chunks);
                   },
                   nb::for_getter(nb::sig("def shard_chunks(self, /) -> tuple[int, ...] | None")),
                   "Chunks per shard along each dimension; None when unsharded.")
      .def_prop_ro("format", [](const StreamHandle& h) { return std::string(FormatName(h.stream->format())); },
                   "'zarr3', 'precomputed' or 'hdf5'.")
      .def_prop_ro("plan",
                   [](StreamHandle& h) {
                     std::string plan;
                     (void)Locked(h, [&](Stream& s) {
                       plan = s.DescribePlan();
                       return Status::Ok();
                     });
                     return plan;
                   },
                   "The layout and memory plan, as ``tessera stream --plan`` prints it.")
      .def("__repr__",
           [](const StreamHandle& h) {
             const StreamState st = h.stream->state();
             const char* state = st == StreamState::kOpen ? "open" : st == StreamState::kClosed ? "closed" : "aborted";
             return "<tessera.Stream " + std::string(FormatName(h.stream->format())) + " " + state +
                    " shape=" + ShapeText(h.stream->spec().shape) + " dtype=" +
                    std::string(DataTypeName(h.stream->spec().dtype)) + ">";
           })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); }, nb::sig("def __enter__(self, /) -> Stream"))
      .def(
          "__exit__",
          [](StreamHandle& h, nb::handle exc_type, nb::handle, nb::handle) {
            if (exc_type.is_none()) Close(h);
            else Abort(h);
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("traceback").none(),
          nb::sig("def __exit__(self, exc_type: typing.Any, exc: typing.Any, traceback: typing.Any, /) -> None"),
          "Closes the stream, or aborts it when the block raised.");

  m.def("create", &Create, nb::arg("location"), nb::arg("kwargs"), nb::sig(kCreateSig), kCreateDoc);
}

}  // namespace tessera::python
