// tessera.Array and tessera.open.
#include <memory>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include "bindings.h"
#include "handles.h"
#include "buffers.h"
#include "common.h"
#include "element_dtype.h"
#include "errors.h"
#include "json_convert.h"
#include "object_values.h"
#include "selection.h"
#include "write_values.h"
#include "tessera/api/array.h"
#include "tessera/api/create_array.h"
#include "tessera/api/convert.h"
#include "tessera/api/driver_registry.h"
#include "tessera/spec/array_spec_json.h"

namespace tessera::python {
namespace {

constexpr const char* kArrayDoc = R"doc(An open array: Zarr v3, Neuroglancer precomputed or an HDF5 dataset.

Made by :func:`tessera.open`. Indexing (``a[5, 10:-10:3, ::-1]``) follows numpy's basic
indexing exactly and reads only the chunks (and, for sharded arrays, the byte ranges) the
selection touches; ``np.asarray(a)`` reads everything.

Opened with ``mode="r+"``, ``a[5, 10:-10:3, ::-1] = values`` writes a region (numpy's
broadcasting and same-kind casting), :meth:`resize` changes the shape and :meth:`transaction`
batches writes; each shard (or unsharded chunk) a write touches is read once and replaced
atomically.

Thread safety: any number of threads may read and write one Array at once (indexing,
:meth:`read`, assignment, every property); reads and writes release the GIL and run on
tessera's own threads. Writes that touch the same shard never lose each other's updates; a
read sees every write that finished before it began. :meth:`close` only drops this object's
reference to the open array: reads and writes already running finish normally.)doc";

// The Python object behind tessera.Array: a shared reference to the open array, dropped by close().
void ReadSelection(const Array& array, const Hyperslab& slab, uint8_t* out) {
  Status st;
  {
    nb::gil_scoped_release release;
    st = array.Read(slab, out);
  }
  ThrowIfError(st);
}

// Reads `sel` into a new array (a numpy scalar when numpy would give one) or into `out`.
nb::object Read(const ArrayHandle& h, const Selection& sel, nb::handle out) {
  std::shared_ptr<Array> array = h.Get();
  if (array->object_type()) return ReadObjectSelection(*array, sel, out);  // variable-length elements
  if (array->element_type()) return ReadElementSelection(*array, sel, out);  // compounds, strings, ...
  if (out.is_none()) {
    NewArray result = EmptyArray(sel.result_shape, array->dtype());
    ReadSelection(*array, sel.slab, result.data);
    if (sel.scalar) return result.array[nb::tuple()];
    return result.array;
  }
  BufferView buf(out, /*writable=*/true, "read: out");
  buf.RequireContiguous();
  buf.RequireDtype(array->dtype());
  if (buf.shape() != sel.result_shape) {
    throw StatusError(ErrorKind::kInvalidArgument, "read: out has shape " + ShapeText(buf.shape()) +
                                                       ", the selection has shape " + ShapeText(sel.result_shape));
  }
  ReadSelection(*array, sel.slab, buf.data());
  return nb::borrow(out);
}

// a[key] = value: the value cast and broadcast to the selection, written with the GIL released.
void WriteSelection(Array& array, nb::handle key, nb::handle value) {
  const Selection sel = ParseSelection(key, array.shape());
  if (!array.writable()) {  // before converting the value: the mode is the first thing wrong
    ThrowIfError(array.Write(sel.slab, nullptr));
  }
  WriteValues values = PrepareWriteValues(value, array.dtype(), sel);
  Status st;
  {
    nb::gil_scoped_release release;
    st = array.Write(sel.slab, values.view);
  }
  ThrowIfError(st);
}

Selection SelectionOf(const Array& array, nb::handle selection) {
  if (selection.is_none()) return SelectionOfHyperslab(Hyperslab::All(array.shape()));
  if (PyUnicode_Check(selection.ptr())) {
    Result<Hyperslab> slab = array.Select(nb::cast<std::string>(selection));
    ThrowIfError(slab.status());
    return SelectionOfHyperslab(std::move(slab).value());
  }
  return ParseSelection(selection, array.shape());
}

nb::object Fill(const Array& array) {
  if (array.object_type()) return ObjectFillValue(array);
  if (array.element_type()) return ElementFill(array);
  const FillValue& fill = array.fill_value();
  nb::bytes raw(fill.bytes.data(), fill.bytes.size());
  return Numpy().attr("frombuffer")(raw, NumpyDtype(array.dtype()))[nb::int_(0)];
}

std::string Repr(const ArrayHandle& h) {
  if (!h.array) return "<tessera.Array (closed)>";
  const Array& a = *h.array;
  std::string s = "<tessera.Array " + std::string(FormatName(a.format())) + " '" + a.location().ToString() +
                  "' shape=" + ShapeText(a.shape()) + " dtype=" + (a.object_type()    ? a.object_type()->name
                                        : a.element_type() ? a.element_type()->description
                                                           : std::string(DataTypeName(a.dtype()))) +
                  " chunks=" + ShapeText(a.chunk_shape());
  if (!a.shard_shape().empty()) s += " shards=" + ShapeText(a.shard_shape());
  return s + ">";
}

// tessera.create_array: the arguments of tessera.create (CreateRequestOfKwargs), an empty array
// opened r+.
std::unique_ptr<ArrayHandle> CreateEmptyArray(nb::handle location, nb::kwargs kwargs) {
  const CreateRequest r = CreateRequestOfKwargs(location, kwargs);
  Result<std::unique_ptr<Array>> created = Status();
  {
    nb::gil_scoped_release release;
    created = CreateArray(r.location, r.spec, r.options);
  }
  ThrowIfSpecError(created.status());
  auto h = std::make_unique<ArrayHandle>();
  h->array = std::shared_ptr<Array>(std::move(created).value());
  return h;
}

std::unique_ptr<ArrayHandle> Open(nb::handle location, const std::string& mode, std::optional<std::string> format,
                                  std::optional<std::string> dataset, int scale, int level, nb::handle hdf5_allowed_paths,
                                  nb::handle storage_options) {
  OpenOptions options;
  options.storage = StoreOptionsOf(storage_options);
  if (!hdf5_allowed_paths.is_none()) {
    if (nb::isinstance<nb::str>(hdf5_allowed_paths))
      throw nb::type_error("hdf5_allowed_paths: expected a list of paths, got one string");
    for (nb::handle p : hdf5_allowed_paths) options.hdf5_allowed_paths.push_back(LocationText(p));
  }
  Result<Mode> parsed_mode = ParseMode(mode);
  ThrowIfError(parsed_mode.status());
  options.mode = *parsed_mode;
  if (format) {
    Result<Format> f = ParseFormat(*format);
    ThrowIfError(f.status());
    options.format = *f;
  }
  options.dataset = dataset.value_or("");
  options.scale = scale;
  options.level = level;
  const std::string text = LocationText(location);
  Result<std::unique_ptr<Array>> opened = Status();
  {
    nb::gil_scoped_release release;
    opened = OpenArray(text, options);
  }
  ThrowIfError(opened.status());
  auto h = std::make_unique<ArrayHandle>();
  h->array = std::shared_ptr<Array>(std::move(opened).value());
  return h;
}

}  // namespace

void BindArray(nb::module_& m) {
  nb::class_<ArrayHandle>(m, "Array", kArrayDoc)
      .def_prop_ro("shape", [](const ArrayHandle& h) { return TupleOf(h.Get()->shape()); },
                   nb::for_getter(nb::sig("def shape(self, /) -> tuple[int, ...]")),
                   "Elements per dimension, dimension 0 slowest (C order).")
      .def_prop_ro("dtype",
                   [](const ArrayHandle& h) {
                     std::shared_ptr<Array> a = h.Get();
                     return a->object_type() ? ObjectDtype(*a) : ElementDtype(*a);
                   },
                   nb::for_getter(nb::sig("def dtype(self, /) -> numpy.dtype[typing.Any]")),
                   "The element type, as a numpy dtype (object for variable-length strings and sequences,\n"
                   "which read as numpy object arrays of str, bytes or numpy arrays). HDF5 datatypes read as\n"
                   "h5py reads them, little-endian: compounds as structured dtypes (the file's offsets and\n"
                   "itemsize), fixed strings as S<n>, opaque values as V<n>, enumerations as their integer;\n"
                   "an array datatype's dimensions are trailing dimensions of ``shape``. Compounds with\n"
                   "variable-length members have object fields, laid out as h5py lays them out.")
      .def_prop_ro("chunks", [](const ArrayHandle& h) { return TupleOf(h.Get()->chunk_shape()); },
                   nb::for_getter(nb::sig("def chunks(self, /) -> tuple[int, ...]")),
                   "The chunk shape reads are done on (the inner chunk of a sharded Zarr array).")
      .def_prop_ro("shards",
                   [](const ArrayHandle& h) -> nb::object {
                     std::shared_ptr<Array> a = h.Get();
                     if (a->shard_shape().empty()) return nb::none();
                     return TupleOf(a->shard_shape());
                   },
                   nb::for_getter(nb::sig("def shards(self, /) -> tuple[int, ...] | None")),
                   "The shard shape in elements (sharded Zarr arrays); None when unsharded.")
      .def_prop_ro("format", [](const ArrayHandle& h) { return std::string(FormatName(h.Get()->format())); },
                   "'zarr3', 'precomputed' or 'hdf5'.")
      .def_prop_ro("location", [](const ArrayHandle& h) { return h.Get()->location().ToString(); },
                   "Where the array lives.")
      .def_prop_ro("metadata", [](const ArrayHandle& h) { return PythonOfJson(h.Get()->metadata()); },
                   nb::for_getter(nb::sig("def metadata(self, /) -> dict[str, typing.Any]")),
                   "The format's own metadata document (zarr.json, the precomputed info, or a description "
                   "of the HDF5 dataset), as a new dict.")
      .def_prop_ro("spec",
                   [](const ArrayHandle& h) {
                     const std::shared_ptr<Array> a = h.Get();
                     Result<ArraySpec> spec = ConversionSpec(*a, a->format());
                     ThrowIfError(spec.status());
                     return PythonOfJson(ArraySpecToJson(*spec));
                   },
                   nb::for_getter(nb::sig("def spec(self, /) -> dict[str, typing.Any]")),
                   "The array's spec in the JSON form tessera.create takes (``spec=``) and ``tessera info\n"
                   "--json`` prints under \"spec\": dtype, shape, chunk_shape, shard_chunks, codec, level,\n"
                   "fill_value, dimension_names, attributes and its format's own options (\"zarr3\",\n"
                   "\"precomputed\", \"hdf5\"); a new dict. ``tessera.create(other, spec=a.spec,\n"
                   "format=a.format)`` makes an array stored like this one.")
      .def_prop_ro("mode", [](const ArrayHandle& h) { return std::string(ModeName(h.Get()->mode())); },
                   "How the array was opened: 'r' (read only) or 'r+' (read and write).")
      .def_prop_ro("writable", [](const ArrayHandle& h) { return h.Get()->writable(); },
                   "Whether regions can be written (the array was opened with mode 'r+').")
      .def_prop_ro("ndim", [](const ArrayHandle& h) { return h.Get()->rank(); }, "The number of dimensions.")
      .def_prop_ro("level", [](const ArrayHandle& h) { return h.Get()->level(); },
                   "Which level of its multiscale image this array is (0: full resolution).")
      .def_prop_ro("levels",
                   [](const ArrayHandle& h) {
                     std::shared_ptr<Array> a = h.Get();
                     OpenOptions options;
                     options.format = a->format();
                     options.mode = a->mode();  // an array opened r+ gives levels open r+
                     if (a->location().store_options) options.storage = *a->location().store_options;
                     nb::list out;
                     for (int k = 0; k < a->level_count(); ++k) {
                       auto handle = std::make_unique<ArrayHandle>();
                       if (k == a->level()) {
                         handle->array = a;
                       } else {
                         options.level = k;
                         Result<std::unique_ptr<Array>> opened = Status();
                         {
                           nb::gil_scoped_release release;
                           opened = OpenArray(a->location().ToString(), options);
                         }
                         ThrowIfError(opened.status());
                         handle->array = std::shared_ptr<Array>(std::move(opened).value());
                       }
                       out.append(nb::cast(std::move(handle)));
                     }
                     return out;
                   },
                   nb::for_getter(nb::sig("def levels(self, /) -> list[Array]")),
                   "Every level of the multiscale image this array belongs to (an OME-Zarr image's "
                   "datasets, a precomputed volume's scales), full resolution first; a list of this "
                   "array alone for anything else. Opened with this array's mode (a write to one level "
                   "does not change the others).")
      .def_prop_ro("size",
                   [](const ArrayHandle& h) {
                     int64_t n = 1;
                     for (int64_t e : h.Get()->shape()) n *= e;
                     return n;
                   },
                   "The number of elements.")
      .def_prop_ro("nbytes",
                   [](nb::handle self) {
                     // A Python int: elements (< 2^62) times up to 16 bytes can pass int64.
                     std::shared_ptr<Array> a = nb::cast<const ArrayHandle&>(self).Get();
                     // numpy's count: an object array's element is its dtype's itemsize (a reference,
                     // 8 bytes for "O"), whatever the values it refers to take.
                     const int64_t item_bytes = a->object_type()
                                                    ? nb::cast<int64_t>(self.attr("dtype").attr("itemsize"))
                                                    : static_cast<int64_t>(a->item_size());
                     nb::object n = nb::int_(item_bytes);
                     for (int64_t e : a->shape()) n = nb::steal(PyNumber_Multiply(n.ptr(), nb::int_(e).ptr()));
                     return n;
                   },
                   nb::for_getter(nb::sig("def nbytes(self, /) -> int")),
                   "The number of bytes the whole array takes in memory, as numpy counts them: an object\n"
                   "array (variable-length strings and sequences) counts its references (numpy's\n"
                   "``np.empty(shape, object).nbytes``), not the values they refer to.")
      .def_prop_ro("fill_value", [](const ArrayHandle& h) { return Fill(*h.Get()); },
                   nb::for_getter(nb::sig("def fill_value(self, /) -> typing.Any")),
                   "What elements that are not stored read as: a numpy scalar of the array's dtype.")
      .def("__len__",
           [](const ArrayHandle& h) {
             std::shared_ptr<Array> a = h.Get();
             if (a->rank() == 0) throw nb::type_error("len() of unsized object");
             return a->shape()[0];
           })
      .def("__repr__", &Repr)
      .def(
          "__getitem__",
          [](const ArrayHandle& h, nb::handle key) {
            std::shared_ptr<Array> a = h.Get();
            return Read(h, ParseSelection(key, a->shape()), nb::none());
          },
          nb::arg("key").none(), nb::sig("def __getitem__(self, key: typing.Any, /) -> typing.Any"),
          "numpy basic indexing: ints (negative from the end), slices with any step but 0, ``...``,\n"
          "``None`` / ``numpy.newaxis``; missing trailing entries select whole dimensions. Returns what\n"
          "``numpy.asarray(a)[key]`` would: a new array, or a numpy scalar when every entry is an int\n"
          "(and there is no ``...``).\n\n"
          "Raises OutOfRangeError (an IndexError) for an int out of range, InvalidArgumentError (a\n"
          "ValueError) for a zero step, IndexError for advanced (list, array, bool) indexing.")
      .def(
          "__setitem__",
          [](const ArrayHandle& h, nb::handle key, nb::handle value) { WriteSelection(*h.Get(), key, value); },
          nb::arg("key").none(), nb::arg("value").none(),
          nb::sig("def __setitem__(self, key: typing.Any, value: typing.Any, /) -> None"),
          "Writes ``value`` into the selection ``key`` (the indexing ``a[key]`` reads), as numpy would:\n"
          "``value`` is anything ``numpy.asarray`` takes (an array, a list, a scalar), broadcast to the\n"
          "selection's shape and cast to the array's dtype with ``casting='same_kind'``. The array must\n"
          "be opened with ``mode='r+'``. Each touched shard (or unsharded chunk) is read once, merged\n"
          "and replaced atomically; chunks wholly covered are not read.\n\n"
          "Raises FailedPreconditionError (a RuntimeError) on an array opened read-only, TypeError for a\n"
          "value that does not cast (naming both dtypes), ValueError for one that does not broadcast\n"
          "(naming both shapes), OutOfRangeError (an IndexError) for an index out of range. The GIL is\n"
          "released while writing.")
      .def(
          "resize",
          [](const ArrayHandle& h, nb::handle shape) {
            std::shared_ptr<Array> a = h.Get();
            // The GIL stays held: no other Python thread sees the shape while it changes (running
            // reads and writes finish first; later ones wait).
            ThrowIfError(a->Resize(IntsOf(shape, "resize: shape")));
          },
          nb::arg("shape"), nb::sig("def resize(self, shape: typing.Sequence[int], /) -> None"),
          "Changes the shape (the number of dimensions stays): elements outside the new shape are\n"
          "cleared, so growing again shows the fill value. Needs ``mode='r+'``.")
      .def(
          "transaction",
          [](const ArrayHandle& h) { return BeginTransaction(h.Get()); },
          nb::sig("def transaction(self, /) -> Transaction"),
          "A :class:`Transaction`: writes (``t[key] = value``) buffered until it commits, then stored\n"
          "with each touched shard read and written once. Use it in a ``with`` block: a clean exit\n"
          "commits, an exception aborts. Needs ``mode='r+'``.")
      .def(
          "read",
          [](const ArrayHandle& h, nb::handle selection, nb::handle out) {
            std::shared_ptr<Array> a = h.Get();
            Selection sel = SelectionOf(*a, selection);
            sel.scalar = false;  // read() always returns an array (0-d for ints only)
            return Read(h, sel, out);
          },
          nb::arg("selection").none() = nb::none(), nb::kw_only(), nb::arg("out").none() = nb::none(),
          nb::sig("def read(self, selection: typing.Any = None, *, out: typing.Any = None) -> numpy.ndarray"),
          "Reads a selection into a new array, or into ``out``.\n\n"
          "``selection``: None (everything), an index as for ``a[...]``, or the same as text\n"
          "(``\"5, 10:-10:3, ::-1\"``). Always returns an array (0-d for a selection of ints only).\n"
          "``out``: a writable, C-contiguous array of the array's dtype and the selection's shape;\n"
          "the data are read straight into it and it is returned. Anything else raises (TypeError\n"
          "for the dtype, InvalidArgumentError for the rest): nothing is ever converted.\n"
          "The GIL is released while reading.")
      .def(
          "__array__",
          [](const ArrayHandle& h, nb::handle dtype, nb::handle copy) {
            if (!copy.is_none() && !nb::cast<bool>(copy)) {
              throw nb::value_error("tessera.Array: reading an array always makes a new numpy array (copy=False)");
            }
            std::shared_ptr<Array> a = h.Get();
            nb::object result = Read(h, SelectionOfHyperslab(Hyperslab::All(a->shape())), nb::none());
            if (!dtype.is_none()) result = result.attr("astype")(dtype, nb::arg("copy") = false);
            return result;
          },
          nb::arg("dtype").none() = nb::none(), nb::arg("copy").none() = nb::none(),
          nb::sig("def __array__(self, dtype: typing.Any = None, copy: bool | None = None) -> numpy.ndarray"),
          "The whole array as a new numpy array (``numpy.asarray(a)``).")
      .def("close", [](ArrayHandle& h) { h.array.reset(); },
           "Drops this object's reference to the open array (files close when no read still uses\n"
           "them). Later calls raise FailedPreconditionError. Idempotent.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); },
           nb::sig("def __enter__(self, /) -> Array"))
      .def("__exit__", [](ArrayHandle& h, nb::handle, nb::handle, nb::handle) { h.array.reset(); },
           nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("traceback").none(),
           nb::sig("def __exit__(self, exc_type: typing.Any, exc: typing.Any, traceback: typing.Any, /) -> None"));

  m.def("create_array", &CreateEmptyArray, nb::arg("location"), nb::arg("kwargs"),
        nb::sig("def create_array(location: str | os.PathLike[str], **options: typing.Any) -> Array"),
        "Creates an empty array (every element the fill value) and opens it for writing (mode 'r+').\n\n"
        "Takes the options of :func:`tessera.create` (``dtype``, ``shape``, ``chunks``, ``shard_chunks``,\n"
        "``codec``, ``fill_value``, ``format``, ``spec``, ...) and ``mode``: 'w-' (the default: an error\n"
        "naming what exists at ``location``, if anything does) or 'w' (replace it). Zarr v3 and precomputed;\n"
        "HDF5 files are written whole by :func:`tessera.create`. Like zarr-python's ``create_array``::\n\n"
        "    a = tessera.create_array('labels.zarr', dtype='uint32', shape=(512, 2048, 2048),\n"
        "                             chunks=(64, 64, 64), shard_chunks=(4, 8, 8))\n"
        "    a[0:64, 0:512, 0:512] = block\n");
  m.def("open", &Open, nb::arg("location"), nb::arg("mode") = "r", nb::kw_only(), nb::arg("format") = nb::none(),
        nb::arg("dataset") = nb::none(), nb::arg("scale") = 0, nb::arg("level") = 0,
        nb::arg("hdf5_allowed_paths") = nb::none(), nb::arg("storage_options") = nb::none(),
        nb::sig("def open(location: str | os.PathLike[str], mode: str = 'r', *, format: str | None = None, "
                "dataset: str | None = None, scale: int = 0, level: int = 0, "
                "hdf5_allowed_paths: typing.Iterable[str | os.PathLike[str]] | None = None, "
                "storage_options: dict[str, typing.Any] | None = None) -> Array"),
        "Opens an existing array.\n\n"
        "``mode``: 'r' (the default) reads only; 'r+' also writes regions (``a[...] = v``),\n"
        "resizes and runs transactions. Zarr v3 and precomputed arrays can be opened 'r+'; HDF5\n"
        "cannot (UnsupportedError). New arrays are made by :func:`tessera.create`.\n"
        "``location``: a Zarr v3 array directory (``zarr.json``), a Neuroglancer precomputed\n"
        "directory (``info``), or an HDF5 file; a path or ``file://`` URL. The format is detected\n"
        "from what is stored unless ``format`` ('zarr3', 'precomputed', 'hdf5') names it.\n"
        "``dataset``: HDF5 only, the dataset's path in the file (default: the file's only dataset).\n"
        "``hdf5_allowed_paths``: HDF5 only, directories (or files) beyond the file's own directory tree\n"
        "that virtual dataset sources and external raw data files may be read from. A file names the\n"
        "files it pulls in; by default only those inside its own directory tree are followed (absolute\n"
        "paths elsewhere, ``..`` escapes and symlinks out are refused with FailedPreconditionError).\n"
        "``scale``: precomputed only, which scale (index into the info's scales; default 0).\n"
        "``level``: a multiscale image's level: an OME-Zarr image group's dataset (0 = full\n"
        "resolution), a precomputed volume's scale. ``Array.levels`` lists them all.\n"
        "``storage_options``: how to reach an ``s3://`` store instead of (or on top of) the\n"
        "environment: a dict of ``endpoint_url``, ``region``, ``profile``, ``addressing_style``\n"
        "('auto', 'path', 'virtual'), ``anonymous``, ``retry_timeout`` (seconds transient failures are\n"
        "retried; also for ``http(s)://``), and, only if you pass them, ``access_key_id``,\n"
        "``secret_access_key``, ``session_token``. What it leaves out comes from the environment.\n\n"
        "Raises NotFoundError (a FileNotFoundError) when nothing is there, CorruptDataError when\n"
        "the metadata do not decode. The GIL is released while opening.");
}

}  // namespace tessera::python
