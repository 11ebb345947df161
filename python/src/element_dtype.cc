#include "element_dtype.h"

#include <nanobind/stl/string.h>

#include <cstring>
#include <string>
#include <vector>

#include "bfloat16_dtype.h"
#include "buffers.h"
#include "errors.h"

namespace tessera::python {

nb::object DtypeOfJson(const nlohmann::json& j) {
  if (j == "bfloat16") return BFloat16Dtype();  // not numpy's own: ml_dtypes' (Zarr bfloat16)
  if (j.is_string()) return Numpy().attr("dtype")(j.get<std::string>());
  if (j.is_object() && j.contains("base")) {
    const std::vector<int64_t> shape = j.at("shape").get<std::vector<int64_t>>();
    nb::tuple dims = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(shape.size())));
    for (size_t d = 0; d < shape.size(); ++d) PyTuple_SET_ITEM(dims.ptr(), d, PyLong_FromLongLong(shape[d]));
    return Numpy().attr("dtype")(nb::make_tuple(DtypeOfJson(j.at("base")), dims));
  }
  nb::list names, formats, offsets;
  for (const auto& n : j.at("names")) names.append(nb::str(n.get<std::string>().c_str()));
  for (const auto& f : j.at("formats")) formats.append(DtypeOfJson(f));
  for (const auto& o : j.at("offsets")) offsets.append(nb::int_(o.get<int64_t>()));
  nb::dict spec;
  spec["names"] = names;
  spec["formats"] = formats;
  spec["offsets"] = offsets;
  spec["itemsize"] = nb::int_(j.at("itemsize").get<int64_t>());
  return Numpy().attr("dtype")(spec);
}

namespace {

// A flat uint8 array of `shape` + (item_bytes,) viewed as `dtype` of `shape`.
nb::object ViewAsElements(nb::object bytes, nb::object dtype, const std::vector<int64_t>& shape) {
  nb::tuple shape_tuple = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(shape.size())));
  for (size_t d = 0; d < shape.size(); ++d) PyTuple_SET_ITEM(shape_tuple.ptr(), d, PyLong_FromLongLong(shape[d]));
  return bytes.attr("view")(dtype).attr("reshape")(shape_tuple);
}

}  // namespace

nb::object ElementDtype(const Array& array) {
  if (const ElementType* e = array.element_type()) return DtypeOfJson(e->numpy);
  return NumpyDtype(array.dtype());
}

nb::object ReadElementSelection(const Array& array, const Selection& sel, nb::handle out) {
  const ElementType& e = *array.element_type();
  nb::object dtype = ElementDtype(array);
  if (!out.is_none()) {
    if (!dtype.equal(out.attr("dtype")) || !nb::cast<bool>(out.attr("flags")["C_CONTIGUOUS"]) ||
        !nb::cast<bool>(out.attr("flags")["WRITEABLE"]))
      throw StatusError(ErrorKind::kInvalidArgument,
                        "read: out must be a writable, C-contiguous array of dtype " +
                            nb::cast<std::string>(nb::str(dtype)) + " (" + e.description + ")");
    std::vector<int64_t> out_shape;
    for (nb::handle n : nb::tuple(out.attr("shape"))) out_shape.push_back(nb::cast<int64_t>(n));
    if (out_shape != sel.result_shape)
      throw StatusError(ErrorKind::kInvalidArgument, "read: out has shape " + ShapeText(out_shape) +
                                                         ", the selection has shape " + ShapeText(sel.result_shape));
    Py_buffer view;
    if (PyObject_GetBuffer(out.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) nb::raise_python_error();
    Status st;
    {
      nb::gil_scoped_release release;
      st = array.Read(sel.slab, view.buf);
    }
    PyBuffer_Release(&view);
    ThrowIfError(st);
    return nb::borrow(out);
  }
  std::vector<int64_t> byte_shape = sel.result_shape;
  byte_shape.push_back(static_cast<int64_t>(e.item_bytes));
  NewArray result = EmptyArray(byte_shape, DataType::kUInt8);
  Status st;
  {
    nb::gil_scoped_release release;
    st = array.Read(sel.slab, result.data);
  }
  ThrowIfError(st);
  nb::object elements = ViewAsElements(result.array, dtype, sel.result_shape);
  if (sel.scalar) return elements[nb::tuple()];
  return elements;
}

nb::object ElementFill(const Array& array) {
  const FillValue& fill = array.fill_value();
  nb::bytes raw(fill.bytes.data(), fill.bytes.size());
  return Numpy().attr("frombuffer")(raw, ElementDtype(array))[nb::int_(0)];
}

}  // namespace tessera::python
