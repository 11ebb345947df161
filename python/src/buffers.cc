#include "buffers.h"

#include <cstring>
#include <string_view>

#include <nanobind/stl/string.h>

#include "common.h"
#include "errors.h"

namespace tessera::python {
namespace {

// The element type a buffer-protocol format string describes, if tessera has it. `itemsize`
// settles the width of the C integer codes ('l' is 8 bytes here, 4 elsewhere).
std::optional<DataType> DataTypeOfFormat(std::string_view format, int64_t itemsize) {
  if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<')) format.remove_prefix(1);
  else if (!format.empty() && (format[0] == '>' || format[0] == '!')) {
    if (itemsize != 1) return std::nullopt;  // big-endian multi-byte elements
    format.remove_prefix(1);
  }
  if (format == "Zf" && itemsize == 8) return DataType::kComplex64;
  if (format == "Zd" && itemsize == 16) return DataType::kComplex128;
  if (format.size() != 1) return std::nullopt;
  const char c = format[0];
  if (c == '?' && itemsize == 1) return DataType::kBool;
  if (c == 'e' && itemsize == 2) return DataType::kFloat16;
  if (c == 'f' && itemsize == 4) return DataType::kFloat32;
  if (c == 'd' && itemsize == 8) return DataType::kFloat64;
  const bool is_signed = std::string_view("bhilqn").find(c) != std::string_view::npos;
  const bool is_unsigned = std::string_view("BHILQN").find(c) != std::string_view::npos;
  if (!is_signed && !is_unsigned) return std::nullopt;
  switch (itemsize) {
    case 1: return is_signed ? DataType::kInt8 : DataType::kUInt8;
    case 2: return is_signed ? DataType::kInt16 : DataType::kUInt16;
    case 4: return is_signed ? DataType::kInt32 : DataType::kUInt32;
    case 8: return is_signed ? DataType::kInt64 : DataType::kUInt64;
    default: return std::nullopt;
  }
}

}  // namespace

nb::module_& Numpy() {
  // Leaked on purpose: a module reference released during interpreter shutdown is unsafe.
  static nb::module_* numpy = new nb::module_(nb::module_::import_("numpy"));
  return *numpy;
}

nb::object NumpyDtype(DataType dtype) {
  return Numpy().attr("dtype")(std::string(DataTypeName(dtype)));
}

DataType DataTypeOfNumpy(nb::handle dtype_like, const char* argument) {
  nb::object dt;
  try {
    dt = Numpy().attr("dtype")(dtype_like);
  } catch (nb::python_error& e) {
    throw StatusError(ErrorKind::kInvalidArgument,
                      std::string(argument) + ": " + StrOf(dtype_like) + " is not a numpy dtype");
  }
  const std::string name = nb::cast<std::string>(dt.attr("name"));
  const std::string byteorder = nb::cast<std::string>(dt.attr("byteorder"));
  Result<DataType> parsed = ParseDataType(name);
  const std::string kind = nb::cast<std::string>(dt.attr("kind"));
  if (kind == "U" || kind == "S" || kind == "O" || kind == "T") {
    // Strings (and objects) have no fixed-size element type tessera writes.
    throw StatusError(ErrorKind::kUnsupported,
                      std::string(argument) + ": numpy dtype " + StrOf(dt) +
                          ": string arrays are read-only in tessera (tessera.open reads Zarr string arrays and "
                          "HDF5 variable-length strings as object arrays; it writes numbers only)");
  }
  if (name == "bfloat16") {
    // ml_dtypes' bfloat16: tessera reads it (Zarr v2 and v3) but has no writer for it.
    throw StatusError(ErrorKind::kUnsupported,
                      std::string(argument) + ": numpy dtype bfloat16: bfloat16 arrays are read-only in tessera "
                                              "(tessera.open reads Zarr bfloat16 arrays as ml_dtypes.bfloat16; "
                                              "write float32 or float16 instead)");
  }
  if (!parsed.ok() || byteorder == ">" || !dt.attr("fields").is_none()) {
    throw StatusError(ErrorKind::kUnsupported,
                      std::string(argument) + ": tessera has no element type for numpy dtype " +
                          StrOf(dt) +
                          " (it has bool, int8..int64, uint8..uint64, float16, float32, float64, "
                          "complex64, complex128, little-endian)");
  }
  return *parsed;
}

NewArray EmptyArray(const std::vector<int64_t>& shape, DataType dtype) {
  nb::tuple shape_tuple = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(shape.size())));
  for (size_t d = 0; d < shape.size(); ++d) {
    PyTuple_SET_ITEM(shape_tuple.ptr(), d, PyLong_FromLongLong(shape[d]));
  }
  NewArray out;
  out.array = Numpy().attr("empty")(shape_tuple, NumpyDtype(dtype));
  Py_buffer view;
  if (PyObject_GetBuffer(out.array.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) nb::raise_python_error();
  out.data = static_cast<uint8_t*>(view.buf);
  PyBuffer_Release(&view);  // numpy's memory lives as long as out.array
  return out;
}

BufferView::BufferView(nb::handle obj, bool writable, const char* what) : what_(what) {
  owner_ = nb::borrow(obj);
  if (!PyObject_CheckBuffer(obj.ptr())) {
    // Objects that only describe their memory (__array_interface__, __cuda_array_interface__ is
    // not host memory) are wrapped by numpy without copying.
    if (!nb::hasattr(obj, "__array_interface__")) {
      throw nb::type_error((what_ + ": expected a numpy array or an object exposing the buffer protocol, not " +
                            TypeName(obj))
                               .c_str());
    }
    owner_ = Numpy().attr("asarray")(obj);
  }
  if (PyObject_GetBuffer(owner_.ptr(), &view_, PyBUF_RECORDS_RO) != 0) nb::raise_python_error();
  held_ = true;
  if (writable && view_.readonly) {
    PyBuffer_Release(&view_);  // the destructor does not run for a constructor that throws
    held_ = false;
    throw StatusError(ErrorKind::kInvalidArgument, what_ + ": the array is read-only");
  }
}

BufferView::~BufferView() {
  if (held_) PyBuffer_Release(&view_);
}

std::vector<int64_t> BufferView::shape() const {
  std::vector<int64_t> s(view_.ndim);
  for (int d = 0; d < view_.ndim; ++d) s[d] = view_.shape[d];
  return s;
}

std::string BufferView::DtypeText() const {
  if (nb::hasattr(owner_, "dtype")) return StrOf(owner_.attr("dtype"));
  return std::string("buffer format '") + (view_.format ? view_.format : "B") + "'";
}

void BufferView::RequireContiguous() const {
  if (!PyBuffer_IsContiguous(&view_, 'C')) {
    throw StatusError(ErrorKind::kInvalidArgument,
                      what_ + ": the array must be C-contiguous (tessera never copies a caller's data; "
                              "numpy.ascontiguousarray makes a contiguous copy)");
  }
}

void BufferView::RequireDtype(DataType dtype) const {
  std::optional<DataType> have = DataTypeOfFormat(view_.format ? view_.format : "B", view_.itemsize);
  if (!have || *have != dtype) {
    throw nb::type_error((what_ + ": the array's dtype is " + std::string(DataTypeName(dtype)) + ", got " +
                          DtypeText() + " (tessera never converts a caller's data; convert it with .astype)")
                             .c_str());
  }
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d > 0) s += ", ";
    s += std::to_string(shape[d]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace tessera::python
