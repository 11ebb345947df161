// tessera.Acquisition and tessera.create_group: several arrays streamed under one root.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "common.h"
#include "errors.h"
#include "handles.h"
#include "json_convert.h"
#include "tessera/api/acquisition.h"
#include "tessera/api/driver_registry.h"

namespace tessera::python {
namespace {

namespace nb = nanobind;

struct AcquisitionHandle {
  std::shared_ptr<Acquisition> acq;
  // One lock for the acquisition and all its streams: a flush or close never runs beside an
  // append to one of its arrays.
  std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
  std::map<std::string, nb::object> streams;  // the tessera.Stream of each array
  std::vector<std::string> order;             // creation order

  template <typename Fn>
  Status Locked(Fn&& call) {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(*mu);
    return call(*acq);
  }
};

// The keyword arguments of Acquisition.create that are tessera.create's, with the acquisition's
// format; those that belong to the acquisition as a whole are refused by name.
nb::dict CreateKeywords(const AcquisitionHandle& h, nb::kwargs kwargs, const char* call) {
  nb::dict kw;
  for (auto [key, value] : kwargs) {
    const std::string k = nb::cast<std::string>(key);
    if (k == "mode" || k == "threads" || k == "backend" || k == "format" || k == "progress" || k == "discard" ||
        k == "storage_options")
      throw nb::type_error((std::string(call) + "() got the keyword argument '" + k +
                            "', which belongs to the acquisition (tessera.create_group)")
                               .c_str());
    kw[key] = value;
  }
  kw["format"] = std::string(FormatName(h.acq->format()));
  return kw;
}

nb::object AddStream(AcquisitionHandle& h, const std::string& key, Stream* stream) {
  auto handle = std::make_unique<StreamHandle>();
  // The acquisition owns the stream; the Python object keeps the acquisition alive.
  handle->stream = std::shared_ptr<Stream>(h.acq, stream);
  handle->mu = h.mu;
  nb::object obj = nb::cast(std::move(handle));
  h.streams[key] = obj;
  h.order.push_back(key);
  return obj;
}

std::optional<int> OptionalInt(nb::handle obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  if (!PyLong_Check(obj.ptr()) || PyBool_Check(obj.ptr()))
    throw nb::type_error((std::string(what) + ": expected int, got " + TypeName(obj)).c_str());
  return nb::cast<int>(obj);
}

nb::object Create(AcquisitionHandle& h, const std::string& key, nb::kwargs kwargs) {
  nb::object acquisition = nb::none();
  if (kwargs.contains("acquisition")) {
    acquisition = nb::borrow(kwargs["acquisition"]);
    PyDict_DelItemString(kwargs.ptr(), "acquisition");
  }
  const std::optional<int> acquisition_id = OptionalInt(acquisition, "acquisition");
  const nb::str location(("acquisition/" + key).c_str());  // only its text is read: the format is given
  const CreateRequest r = CreateRequestOfKwargs(location, CreateKeywords(h, kwargs, "create"));
  Stream* stream = nullptr;
  ThrowIfSpecError(h.Locked([&](Acquisition& a) {
    Result<Stream*> s = a.CreateArray(key, r.spec, acquisition_id);
    if (s.ok()) stream = *s;
    return s.status();
  }));
  return AddStream(h, key, stream);
}

// A dict keyed by label values (ints) as a JSON object keyed by their decimal text; anything else
// as JsonOfPython makes it.
nlohmann::json JsonWithIntegerKeys(nb::handle obj, const char* what) {
  if (!PyDict_Check(obj.ptr())) return JsonOfPython(obj, what);
  nlohmann::json out = nlohmann::json::object();
  for (auto [key, value] : nb::borrow<nb::dict>(obj)) {
    if (!PyLong_Check(key.ptr()) || PyBool_Check(key.ptr()))
      throw nb::type_error((std::string(what) + ": keys are label values (int), not " + TypeName(key)).c_str());
    out[std::to_string(nb::cast<int64_t>(key))] = JsonOfPython(value, what);
  }
  return out;
}

// colors: {value: (r, g, b, a)} or [{"label-value": v, "rgba": [...]}, ...].
pyramid::OmeImageLabel LabelOf(nb::handle colors, nb::handle properties) {
  pyramid::OmeImageLabel label;
  if (!colors.is_none()) {
    const nlohmann::json c = JsonWithIntegerKeys(colors, "colors");
    auto add = [&](const nlohmann::json& value, const nlohmann::json& rgba) {
      if (!value.is_number_integer() || !rgba.is_array() || rgba.size() != 4)
        throw StatusError(ErrorKind::kInvalidArgument,
                          "colors: expected {label value: (r, g, b, a)} or [{\"label-value\": v, \"rgba\": [r, g, b, a]}]");
      pyramid::OmeLabelColor color;
      color.label_value = value.get<int64_t>();
      for (int i = 0; i < 4; ++i) {
        if (!rgba[i].is_number_integer()) throw StatusError(ErrorKind::kInvalidArgument, "colors: rgba values are integers 0 to 255");
        color.rgba[i] = rgba[i].get<int>();
      }
      label.colors.push_back(color);
    };
    if (c.is_object()) {
      for (const auto& [value, rgba] : c.items()) {
        char* end = nullptr;
        const long long v = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0') throw StatusError(ErrorKind::kInvalidArgument, "colors: key \"" + value + "\" is not a label value");
        add(nlohmann::json(v), rgba);
      }
    } else if (c.is_array()) {
      for (const nlohmann::json& item : c) add(item.value("label-value", nlohmann::json()), item.value("rgba", nlohmann::json()));
    } else {
      throw StatusError(ErrorKind::kInvalidArgument, "colors: expected a dict or a list");
    }
  }
  if (!properties.is_none()) {
    const nlohmann::json p = JsonWithIntegerKeys(properties, "properties");
    if (p.is_object()) {
      for (const auto& [value, props] : p.items()) {
        char* end = nullptr;
        const long long v = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || !props.is_object())
          throw StatusError(ErrorKind::kInvalidArgument, "properties: expected {label value: {name: value, ...}}");
        nlohmann::json item = props;
        item["label-value"] = v;
        label.properties.push_back(item);
      }
    } else if (p.is_array()) {
      label.properties = p;
    } else {
      throw StatusError(ErrorKind::kInvalidArgument, "properties: expected a dict or a list");
    }
  }
  return label;
}

nb::object CreateLabels(AcquisitionHandle& h, const std::string& image_key, const std::string& name,
                        nb::handle colors, nb::handle properties, nb::kwargs kwargs) {
  const pyramid::OmeImageLabel label = LabelOf(colors, properties);
  const std::string key = image_key + "/labels/" + name;
  const nb::str location(("acquisition/" + key).c_str());
  const CreateRequest r = CreateRequestOfKwargs(location, CreateKeywords(h, kwargs, "create_labels"));
  Stream* stream = nullptr;
  ThrowIfSpecError(h.Locked([&](Acquisition& a) {
    Result<Stream*> s = a.CreateLabels(image_key, name, r.spec, label);
    if (s.ok()) stream = *s;
    return s.status();
  }));
  return AddStream(h, key, stream);
}

void CreatePlate(AcquisitionHandle& h, const std::string& key, const std::vector<std::string>& rows,
                 const std::vector<std::string>& columns, nb::handle field_count, nb::handle acquisitions,
                 nb::handle name) {
  pyramid::OmePlate plate;
  plate.rows = rows;
  plate.columns = columns;
  plate.field_count = OptionalInt(field_count, "field_count").value_or(0);
  if (!name.is_none()) plate.name = nb::cast<std::string>(name);
  if (!acquisitions.is_none()) {
    for (nb::handle item : acquisitions) {
      pyramid::OmeAcquisition a;
      if (PyLong_Check(item.ptr()) && !PyBool_Check(item.ptr())) {
        a.id = nb::cast<int>(item);
      } else {
        const nlohmann::json j = JsonOfPython(item, "acquisitions");
        if (!j.is_object() || !j.contains("id") || !j["id"].is_number_integer())
          throw StatusError(ErrorKind::kInvalidArgument,
                            "acquisitions: each is an id or a dict with an integer \"id\" (and name, "
                            "maximumfieldcount, description, starttime, endtime)");
        a.id = j["id"].get<int>();
        a.name = j.value("name", "");
        a.description = j.value("description", "");
        a.maximum_field_count = j.value("maximumfieldcount", 0);
        if (j.contains("starttime")) a.start_time = j["starttime"].get<int64_t>();
        if (j.contains("endtime")) a.end_time = j["endtime"].get<int64_t>();
      }
      plate.acquisitions.push_back(a);
    }
  }
  ThrowIfSpecError(h.Locked([&](Acquisition& a) { return a.CreatePlate(key, plate); }));
}

constexpr const char* kAcquisitionDoc = R"doc(Several arrays streamed at once under one root, made by
:func:`tessera.create_group`: one array per camera, label images beside an image, an HCS plate's
fields of view. All arrays share one pool of compression threads and one memory budget.

Zarr v3: the root and every group on the way to an array are Zarr groups, written before the
array, so the hierarchy opens (zarr-python, tessera, ome-zarr, napari) while it streams. An
OME-Zarr image's group, a ``labels`` group and a plate's groups carry their OME-Zarr 0.5 metadata.
Precomputed: each array is a volume in a directory of its own (no groups).

Used as a context manager, a clean exit closes every array still open and an exception aborts
them all; either way each array keeps what it published (what a kill -9 at that moment leaves).
One producer drives an acquisition; its calls and its arrays' calls are serialized by one lock.)doc";

std::unique_ptr<AcquisitionHandle> CreateGroup(nb::handle root, std::optional<std::string> format, std::string mode,
                                               int threads, nb::handle memory_limit, nb::handle attributes,
                                               std::string backend, int input_buffers, nb::handle storage_options) {
  AcquisitionOptions o;
  o.storage = StoreOptionsOf(storage_options);
  const std::string where = LocationText(root);
  if (format) {
    Result<Format> f = ParseFormat(*format);
    ThrowIfError(f.status());
    o.format = *f;
  }
  Result<Mode> m = ParseMode(mode);
  ThrowIfError(m.status());
  o.mode = *m;
  o.threads = threads;
  o.input_buffers = input_buffers;
  if (!memory_limit.is_none()) {
    if (!PyLong_Check(memory_limit.ptr()) || PyBool_Check(memory_limit.ptr()))
      throw nb::type_error(("memory_limit: expected int (bytes) or None, got " + TypeName(memory_limit)).c_str());
    o.memory_limit = nb::cast<int64_t>(memory_limit);
    if (o.memory_limit <= 0) throw StatusError(ErrorKind::kInvalidArgument, "memory_limit: must be > 0 bytes (None: no limit)");
  }
  if (!attributes.is_none()) o.attributes = JsonOfPython(attributes, "attributes");
  Result<stream::Backend> b = stream::ParseBackend(backend);
  ThrowIfError(b.status());
  o.backend = *b;
  Result<std::unique_ptr<Acquisition>> created = Status();
  {
    nb::gil_scoped_release release;
    created = Acquisition::Create(where, o);
  }
  ThrowIfSpecError(created.status());
  auto h = std::make_unique<AcquisitionHandle>();
  h->acq = std::shared_ptr<Acquisition>(std::move(created).value());
  return h;
}

}  // namespace

void BindAcquisition(nb::module_& m) {
  nb::class_<AcquisitionHandle>(m, "Acquisition", kAcquisitionDoc)
      .def("create", &Create, nb::arg("key"), nb::arg("kwargs"),
           nb::sig("def create(self, key: str, /, **kwargs: typing.Any) -> Stream"),
           "Creates the array (or OME-Zarr image) at ``root/key`` (\"cam1\", \"a/b/c\") and returns its\n"
           "Stream. Keyword arguments: those of :func:`tessera.create` except ``mode``, ``threads``,\n"
           "``backend``, ``format``, ``progress`` and ``discard`` (the acquisition's). Groups on the way\n"
           "are created first. Under a plate (:meth:`create_plate`), ``\"plate/B/3/0\"`` is field 0 of\n"
           "well B/3: an OME-Zarr image, listed by its well and the plate as it is created;\n"
           "``acquisition=`` names its plate acquisition's id.")
      .def("create_labels", &CreateLabels, nb::arg("image_key"), nb::arg("name"), nb::kw_only(),
           nb::arg("colors").none() = nb::none(), nb::arg("properties").none() = nb::none(), nb::arg("kwargs"),
           nb::sig("def create_labels(self, image_key: str, name: str, *, colors: typing.Any = None, "
                   "properties: typing.Any = None, **kwargs: typing.Any) -> Stream"),
           "Creates the label image ``name`` of the OME-Zarr image at ``image_key``\n"
           "(``image_key/labels/name``): an OME-Zarr image whose levels are the image's, reduced by\n"
           "'mode' (``downsample=`` chooses otherwise), with its ``image-label`` metadata; the\n"
           "``labels`` group lists it. ``colors``: ``{label value: (r, g, b, a)}`` (0-255);\n"
           "``properties``: ``{label value: {name: value, ...}}``. Other keyword arguments as\n"
           ":meth:`create` (``dtype`` and ``shape`` required; axes and voxel size default to the image's).")
      .def("create_plate", &CreatePlate, nb::arg("key"), nb::kw_only(), nb::arg("rows"), nb::arg("columns"),
           nb::arg("field_count").none() = nb::none(), nb::arg("acquisitions").none() = nb::none(), nb::arg("name").none() = nb::none(),
           nb::sig("def create_plate(self, key: str, *, rows: typing.Sequence[str], columns: typing.Sequence[str], "
                   "field_count: int | None = None, acquisitions: typing.Sequence[typing.Any] | None = None, "
                   "name: str | None = None) -> None"),
           "Creates an HCS plate group at ``root/key`` with its rows (\"A\", \"B\", ...) and columns\n"
           "(\"1\", \"2\", ...); its wells and fields of view come with :meth:`create`\n"
           "(``key/<row>/<column>/<field>``). ``acquisitions``: ids, or dicts with ``id`` and optional\n"
           "``name``, ``maximumfieldcount``, ``description``, ``starttime``, ``endtime``.")
      .def("set_attributes",
           [](AcquisitionHandle& h, const std::string& path, nb::handle attributes) {
             const nlohmann::json j = JsonOfPython(attributes, "attributes");
             ThrowIfSpecError(h.Locked([&](Acquisition& a) { return a.SetAttributes(path, j); }));
           },
           nb::arg("path"), nb::arg("attributes"),
           "Replaces the caller's attributes of the group or array at ``path`` (\"\" is the root; an\n"
           "OME-Zarr image's go on its group, beside ``ome``, where ``omero`` goes inside it). They are\n"
           "published at the next :meth:`flush` and at :meth:`close`.")
      .def("__getitem__",
           [](AcquisitionHandle& h, const std::string& key) {
             auto it = h.streams.find(key);
             if (it == h.streams.end()) throw nb::key_error(key.c_str());
             return it->second;
           },
           nb::sig("def __getitem__(self, key: str, /) -> Stream"))
      .def("__contains__", [](const AcquisitionHandle& h, const std::string& key) { return h.streams.count(key) > 0; })
      .def("keys", [](const AcquisitionHandle& h) { return h.order; }, "The arrays' keys, in creation order.")
      .def("append",
           [](AcquisitionHandle& h, const std::string& key, nb::handle data) {
             auto it = h.streams.find(key);
             if (it == h.streams.end()) throw nb::key_error(key.c_str());
             it->second.attr("append")(data);
           },
           nb::arg("key"), nb::arg("data"), "``acq[key].append(data)``.")
      .def("flush", [](AcquisitionHandle& h) { ThrowIfError(h.Locked([](Acquisition& a) { return a.Flush(); })); },
           "Flushes every open array (each publishes what it has) and publishes changed attributes.")
      .def("close", [](AcquisitionHandle& h) { ThrowIfError(h.Locked([](Acquisition& a) { return a.Close(); })); },
           "Closes every array still open (an array may be closed alone before), publishes the\n"
           "attributes and ends the acquisition.")
      .def("abort",
           [](AcquisitionHandle& h) {
             (void)h.Locked([](Acquisition& a) {
               a.Abort();
               return Status::Ok();
             });
           },
           "Ends every array without storing anything more; each keeps what it published.")
      .def_prop_ro("plan",
                   [](AcquisitionHandle& h) {
                     std::string plan;
                     (void)h.Locked([&](Acquisition& a) {
                       plan = a.DescribePlan();
                       return Status::Ok();
                     });
                     return plan;
                   },
                   "Each array's layout and memory plan, the shared pool and the total against memory_limit.")
      .def_prop_ro("planned_peak_bytes", [](const AcquisitionHandle& h) { return h.acq->planned_peak_bytes(); },
                   "The planned peak memory of all arrays together, in bytes.")
      .def_prop_ro("stats",
                   [](AcquisitionHandle& h) {
                     nb::dict out;
                     for (const std::string& key : h.order) out[key.c_str()] = h.streams[key].attr("stats");
                     return out;
                   },
                   "{key: StreamStats} of every array.")
      .def_prop_ro("format", [](const AcquisitionHandle& h) { return std::string(FormatName(h.acq->format())); })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); },
           nb::sig("def __enter__(self, /) -> Acquisition"))
      .def(
          "__exit__",
          [](AcquisitionHandle& h, nb::handle exc_type, nb::handle, nb::handle) {
            if (exc_type.is_none()) {
              ThrowIfError(h.Locked([](Acquisition& a) { return a.Close(); }));
            } else {
              (void)h.Locked([](Acquisition& a) {
                a.Abort();
                return Status::Ok();
              });
            }
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("traceback").none(),
          nb::sig("def __exit__(self, exc_type: typing.Any, exc: typing.Any, traceback: typing.Any, /) -> None"),
          "Closes the acquisition, or aborts it when the block raised.");

  m.def("create_group", &CreateGroup, nb::arg("root"), nb::kw_only(), nb::arg("format").none() = nb::none(),
        nb::arg("mode") = "w-", nb::arg("threads") = 0, nb::arg("memory_limit").none() = nb::none(),
        nb::arg("attributes").none() = nb::none(), nb::arg("backend") = "cpu", nb::arg("input_buffers") = 1,
        nb::arg("storage_options") = nb::none(),
        nb::sig("def create_group(root: str | os.PathLike[str], *, format: str | None = None, mode: str = 'w-', "
                "threads: int = 0, memory_limit: int | None = None, attributes: dict[str, typing.Any] | None = None, "
                "backend: str = 'cpu', input_buffers: int = 1, "
                "storage_options: dict[str, typing.Any] | None = None) -> Acquisition"),
        "Creates an acquisition: a root (a Zarr group, written first) under which several arrays\n"
        "stream at once (:class:`Acquisition`). ``mode``: 'w-' (default) refuses anything at\n"
        "``root`` (AlreadyExistsError naming it); 'w' replaces an earlier acquisition or array there.\n"
        "``threads``: the compression threads all arrays share (0: one per core). ``memory_limit``:\n"
        "bytes the arrays' planned peaks may take together; an array past it is refused\n"
        "(OutOfResourcesError naming it and the sums). ``attributes``: the root group's.\n"
        "``input_buffers``: epoch buffers per array, 1 (default: each array refills its buffer once it\n"
        "is encoded, while the other arrays' input and encoding keep the threads busy) or 2 (one\n"
        "fills while the other is encoded: for an acquisition of one array, at the memory of another).\n"
        "``storage_options``: how to reach an ``s3://`` root's store, as :func:`tessera.open` takes them.");
}

}  // namespace tessera::python
