#include "common.h"

#include <nanobind/stl/string.h>

#include "errors.h"
#include "json_convert.h"

namespace tessera::python {

std::string TypeName(nb::handle obj) {
  return nb::cast<std::string>(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()))).attr("__name__"));
}

std::string StrOf(nb::handle obj) {
  nb::object s = nb::steal(PyObject_Str(obj.ptr()));
  if (!s.is_valid()) nb::raise_python_error();
  Py_ssize_t n = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(s.ptr(), &n);
  if (utf8 == nullptr) nb::raise_python_error();
  return std::string(utf8, static_cast<size_t>(n));
}

std::string LocationText(nb::handle location) {
  PyObject* path = PyOS_FSPath(location.ptr());
  if (path == nullptr) nb::raise_python_error();
  nb::object p = nb::steal(path);
  if (!PyUnicode_Check(p.ptr())) {
    throw nb::type_error(("location: expected a str or os.PathLike of str, not " + TypeName(p)).c_str());
  }
  return nb::cast<std::string>(p);
}

StoreOptions StoreOptionsOf(nb::handle obj) {
  if (obj.is_none()) return {};
  if (!PyDict_Check(obj.ptr()))
    throw nb::type_error(("storage_options: expected a dict (or None), got " + TypeName(obj)).c_str());
  Result<StoreOptions> options = StoreOptions::FromJson(JsonOfPython(obj, "storage_options"));
  ThrowIfError(options.status());
  return *std::move(options);
}

nb::tuple TupleOf(const std::vector<int64_t>& values) {
  nb::object t = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(values.size())));
  for (size_t i = 0; i < values.size(); ++i) PyTuple_SET_ITEM(t.ptr(), i, PyLong_FromLongLong(values[i]));
  return nb::borrow<nb::tuple>(t);
}

namespace {

int64_t IndexOf(nb::handle item, const char* what) {
  if (!PyIndex_Check(item.ptr()) || PyBool_Check(item.ptr())) {
    throw nb::type_error((std::string(what) + ": expected an int or a sequence of ints, got " + TypeName(item)).c_str());
  }
  int overflow = 0;
  nb::object i = nb::steal(PyNumber_Index(item.ptr()));
  if (!i.is_valid()) nb::raise_python_error();
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0) {
    throw StatusError(ErrorKind::kInvalidArgument,
                      std::string(what) + ": " + StrOf(item) + " does not fit in 64 bits");
  }
  return v;
}

}  // namespace

std::vector<int64_t> IntsOf(nb::handle obj, const char* what) {
  if (PyIndex_Check(obj.ptr()) && !PyBool_Check(obj.ptr())) return {IndexOf(obj, what)};
  if (PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr()) || !PySequence_Check(obj.ptr())) {
    throw nb::type_error((std::string(what) + ": expected an int or a sequence of ints, got " + TypeName(obj)).c_str());
  }
  std::vector<int64_t> out;
  for (nb::handle item : obj) out.push_back(IndexOf(item, what));
  return out;
}

std::vector<double> FloatsOf(nb::handle obj, size_t n, const char* what) {
  const std::string expected = std::string(what) + ": expected a sequence of " + std::to_string(n) + " numbers";
  if (PyUnicode_Check(obj.ptr()) || !PySequence_Check(obj.ptr())) throw nb::type_error(expected.c_str());
  std::vector<double> out;
  for (nb::handle item : obj) {
    double v = PyFloat_AsDouble(item.ptr());
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw nb::type_error((expected + ", got a " + TypeName(item)).c_str());
    }
    out.push_back(v);
  }
  if (out.size() != n) {
    throw StatusError(ErrorKind::kInvalidArgument, expected + ", got " + std::to_string(out.size()));
  }
  return out;
}

}  // namespace tessera::python
