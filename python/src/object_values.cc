#include "object_values.h"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nlohmann/json.hpp>

#include "buffers.h"
#include "common.h"
#include "element_dtype.h"
#include "errors.h"
#include "tessera/read/object_value_encoding.h"

namespace tessera::python {
namespace {

template <typename T>
T ValueOrThrow(Result<T> r) {
  ThrowIfError(r.status());
  return std::move(r).value();
}

// numpy's dtype of a record, checked against what the record's bytes and slots say (the object
// fields are written through raw pointers below, so their offsets must lie inside the itemsize).
nb::object RecordDtype(const ObjectType& type) {
  nb::object dtype = DtypeOfJson(nlohmann::json::parse(type.record_dtype));
  const auto itemsize = nb::cast<int64_t>(dtype.attr("itemsize"));
  if (itemsize != static_cast<int64_t>(type.record_bytes))
    throw StatusError(ErrorKind::kCorruptData, "a record of " + std::to_string(type.record_bytes) + " bytes has a dtype of " +
                                                   std::to_string(itemsize) + " bytes (" + type.name + ")");
  for (uint32_t offset : type.slot_offsets) {
    if (uint64_t{offset} + sizeof(PyObject*) > type.record_bytes)
      throw StatusError(ErrorKind::kCorruptData, "an object field at byte " + std::to_string(offset) + " past the end of a " +
                                                     std::to_string(type.record_bytes) + "-byte record");
  }
  return dtype;
}

// The start of a C-contiguous array's data.
uint8_t* DataOf(nb::handle array) {
  nb::object data = array.attr("__array_interface__")["data"][nb::int_(0)];
  return reinterpret_cast<uint8_t*>(nb::cast<uintptr_t>(data));
}

nb::object ValueObject(const ObjectType& type, std::string_view bytes, const std::string& what);

// Writes the record `bytes` encode into `record` (numpy's memory of one element of the record's
// dtype), releasing the objects its object fields held.
void FillRecord(const ObjectType& type, std::string_view bytes, uint8_t* record, const std::string& what) {
  ObjectPartReader parts(bytes, what);
  const std::string_view fixed = ValueOrThrow(parts.Raw(type.record_bytes));
  std::vector<PyObject*> old(type.slot_offsets.size());
  for (size_t i = 0; i < old.size(); ++i) std::memcpy(&old[i], record + type.slot_offsets[i], sizeof(PyObject*));
  std::memcpy(record, fixed.data(), fixed.size());  // object fields zero (NULL, which numpy reads as None)
  for (PyObject* o : old) Py_XDECREF(o);
  for (size_t i = 0; i < type.slot_offsets.size(); ++i) {
    const std::string_view part = ValueOrThrow(parts.Part());
    PyObject* value = ValueObject(type.slot_types.at(type.slot_type[i]), part, what).release().ptr();
    std::memcpy(record + type.slot_offsets[i], &value, sizeof(PyObject*));
  }
}

// A 1-d array of `count` elements of `dtype` (C-contiguous, fresh).
nb::object EmptyArray(int64_t count, nb::handle dtype) { return Numpy().attr("empty")(nb::make_tuple(count), nb::arg("dtype") = dtype); }

nb::object SequenceObject(const ObjectType& type, std::string_view bytes, const std::string& what) {
  if (type.sequence_of.empty()) {
    nb::object dtype = type.sequence_dtype.empty() || (type.sequence_dtype[0] != '{' && type.sequence_dtype[0] != '[')
                           ? Numpy().attr("dtype")(type.sequence_dtype.c_str())
                           : DtypeOfJson(nlohmann::json::parse(type.sequence_dtype));
    nb::object values = Numpy().attr("frombuffer")(nb::bytes(bytes.data(), bytes.size()), dtype);
    return values.attr("copy")();  // frombuffer over bytes is read-only; h5py gives writable arrays
  }
  const ObjectType& value_type = type.sequence_of.front();
  ObjectPartReader parts(bytes, what);
  const uint64_t count = bytes.empty() ? 0 : ValueOrThrow(parts.Count());
  if (count > parts.left() / kObjectPartLengthBytes)
    throw StatusError(ErrorKind::kCorruptData, what + ": " + std::to_string(count) + " values in " + std::to_string(bytes.size()) + " bytes");
  if (value_type.kind == ObjectKind::kRecord) {
    nb::object dtype = RecordDtype(value_type);
    nb::object values = EmptyArray(static_cast<int64_t>(count), dtype);
    uint8_t* data = DataOf(values);
    for (uint64_t i = 0; i < count; ++i)
      FillRecord(value_type, ValueOrThrow(parts.Part()), data + i * value_type.record_bytes, what);
    return values;
  }
  nb::object values = EmptyArray(static_cast<int64_t>(count), Numpy().attr("dtype")("O"));
  auto** slots = reinterpret_cast<PyObject**>(DataOf(values));
  for (uint64_t i = 0; i < count; ++i) {
    PyObject* value = ValueObject(value_type, ValueOrThrow(parts.Part()), what).release().ptr();
    std::swap(slots[i], value);
    Py_XDECREF(value);
  }
  return values;
}

// One element (or value inside one) as Python sees it. Text that is not UTF-8 raises
// CorruptDataError naming `what`.
nb::object ValueObject(const ObjectType& type, std::string_view bytes, const std::string& what) {
  switch (type.kind) {
    case ObjectKind::kString: {
      PyObject* text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "strict");
      if (!text) {
        PyErr_Clear();
        throw StatusError(ErrorKind::kCorruptData, what + " (" + std::to_string(bytes.size()) + " bytes) is not UTF-8 text");
      }
      return nb::steal(text);
    }
    case ObjectKind::kBytes:
      return nb::bytes(bytes.data(), bytes.size());
    case ObjectKind::kSequence:
      return SequenceObject(type, bytes, what);
    case ObjectKind::kRecord: {
      // One record: numpy's scalar of its dtype (np.void), as indexing a structured array gives.
      nb::object holder = Numpy().attr("empty")(nb::make_tuple(), nb::arg("dtype") = RecordDtype(type));
      FillRecord(type, bytes, DataOf(holder), what);
      return holder[nb::tuple()];
    }
  }
  return nb::none();
}

std::string ElementText(size_t i) { return "element " + std::to_string(i) + " of the selection"; }

}  // namespace

nb::object ObjectDtype(const Array& array) {
  const ObjectType& type = *array.object_type();
  if (type.kind == ObjectKind::kRecord) return RecordDtype(type);
  return Numpy().attr("dtype")("O");
}

nb::object ReadObjectSelection(const Array& array, const Selection& sel, nb::handle out) {
  const ObjectType& type = *array.object_type();
  const bool records = type.kind == ObjectKind::kRecord;
  nb::object dtype = ObjectDtype(array);
  // A subarray record (an HDF5 array of vlen values) reads with its dimensions appended, as numpy
  // makes arrays of a subarray dtype.
  std::vector<int64_t> shape = sel.result_shape;
  for (int64_t e : nb::cast<std::vector<int64_t>>(dtype.attr("shape"))) shape.push_back(e);
  nb::object result;
  if (out.is_none()) {
    nb::list dims;
    for (int64_t e : sel.result_shape) dims.append(e);
    result = Numpy().attr("empty")(nb::tuple(dims), nb::arg("dtype") = dtype);
  } else {
    if (!nb::hasattr(out, "dtype") || !out.attr("dtype").equal(dtype.attr("base"))) {
      throw nb::type_error(("read: out must be an array of dtype " + nb::cast<std::string>(dtype.attr("base").attr("__str__")()) +
                            " for an array of variable-length elements")
                               .c_str());
    }
    if (!nb::cast<bool>(out.attr("flags")["C_CONTIGUOUS"]) || !nb::cast<bool>(out.attr("flags")["WRITEABLE"]))
      throw StatusError(ErrorKind::kInvalidArgument, "read: out must be writable and C-contiguous");
    if (nb::cast<std::vector<int64_t>>(out.attr("shape")) != shape) {
      throw StatusError(ErrorKind::kInvalidArgument, "read: out has shape " +
                                                         ShapeText(nb::cast<std::vector<int64_t>>(out.attr("shape"))) +
                                                         ", the selection has shape " + ShapeText(shape));
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
  if (sel.scalar) return ValueObject(type, elements.at(0), ElementText(0));
  uint8_t* data = DataOf(result);
  for (size_t i = 0; i < elements.size(); ++i) {
    if (records) {
      FillRecord(type, elements[i], data + i * type.record_bytes, ElementText(i));
      continue;
    }
    PyObject* value = ValueObject(type, elements[i], ElementText(i)).release().ptr();
    auto** slots = reinterpret_cast<PyObject**>(data);
    std::swap(slots[i], value);
    Py_XDECREF(value);
  }
  return result;
}

nb::object ObjectFillValue(const Array& array) {
  return ValueObject(*array.object_type(), array.object_fill_value(), "the fill value");
}

}  // namespace tessera::python
