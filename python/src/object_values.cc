#include "object_values.h"

#include <string>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "buffers.h"
#include "common.h"
#include "errors.h"

namespace tessera::python {
namespace {

// One element as Python sees it. Text that is not UTF-8 raises CorruptDataError naming the element.
nb::object ElementObject(const ObjectType& type, const std::string& bytes, int64_t position) {
  switch (type.kind) {
    case ObjectKind::kString: {
      PyObject* text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "strict");
      if (!text) {
        PyErr_Clear();
        throw StatusError(ErrorKind::kCorruptData, "element " + std::to_string(position) + " of the selection (" +
                                                       std::to_string(bytes.size()) + " bytes) is not UTF-8 text");
      }
      return nb::steal(text);
    }
    case ObjectKind::kBytes:
      return nb::bytes(bytes.data(), bytes.size());
    case ObjectKind::kSequence: {
      nb::object values = Numpy().attr("frombuffer")(nb::bytes(bytes.data(), bytes.size()), type.sequence_dtype.c_str());
      return values.attr("copy")();  // frombuffer over bytes is read-only; h5py gives writable arrays
    }
  }
  return nb::none();
}

// The PyObject* slots of a C-contiguous object array.
PyObject** ObjectSlots(nb::handle array) {
  nb::object data = array.attr("__array_interface__")["data"][nb::int_(0)];
  return reinterpret_cast<PyObject**>(nb::cast<uintptr_t>(data));
}

}  // namespace

nb::object ReadObjectSelection(const Array& array, const Selection& sel, nb::handle out) {
  const ObjectType& type = *array.object_type();
  nb::object result;
  if (out.is_none()) {
    nb::list shape;
    for (int64_t e : sel.result_shape) shape.append(e);
    result = Numpy().attr("empty")(nb::tuple(shape), nb::arg("dtype") = "O");
  } else {
    if (nb::cast<std::string>(out.attr("dtype").attr("kind")) != "O")
      throw nb::type_error("read: out must be an object array (dtype=object) for an array of variable-length elements");
    if (!nb::cast<bool>(out.attr("flags")["C_CONTIGUOUS"]) || !nb::cast<bool>(out.attr("flags")["WRITEABLE"]))
      throw StatusError(ErrorKind::kInvalidArgument, "read: out must be writable and C-contiguous");
    if (nb::cast<std::vector<int64_t>>(out.attr("shape")) != sel.result_shape) {
      throw StatusError(ErrorKind::kInvalidArgument, "read: out has shape " +
                                                         ShapeText(nb::cast<std::vector<int64_t>>(out.attr("shape"))) +
                                                         ", the selection has shape " + ShapeText(sel.result_shape));
    }
    result = nb::borrow(out);
  }
  std::vector<std::string> elements;
  Status st;
  {
    nb::gil_scoped_release release;
    st = array.ReadObjects(sel.slab, &elements);
  }
  ThrowIfError(st);
  if (sel.scalar) return ElementObject(type, elements.at(0), 0);
  PyObject** slots = ObjectSlots(result);
  for (size_t i = 0; i < elements.size(); ++i) {
    nb::object element = ElementObject(type, elements[i], static_cast<int64_t>(i));
    PyObject* old = slots[i];
    slots[i] = element.release().ptr();
    Py_XDECREF(old);
  }
  return result;
}

nb::object ObjectFillValue(const Array& array) {
  return ElementObject(*array.object_type(), array.object_fill_value(), 0);
}

}  // namespace tessera::python
