#include "json_convert.h"

#include <cmath>
#include <string>

#include <nanobind/stl/string.h>

#include "buffers.h"
#include "common.h"
#include "errors.h"

namespace nb = nanobind;

namespace tessera::python {
namespace {


// numpy scalars and 0-d arrays -> the Python scalar they hold; numpy arrays -> nested lists.
// Anything else unchanged.
nb::object Plain(nb::handle obj) {
  if (PyBool_Check(obj.ptr()) || PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr()) ||
      PyUnicode_Check(obj.ptr()) || PyComplex_Check(obj.ptr()) || obj.is_none()) {
    return nb::borrow(obj);
  }
  nb::module_& np = Numpy();
  if (nb::isinstance(obj, np.attr("generic")) || nb::isinstance(obj, np.attr("ndarray"))) return obj.attr("tolist")();
  return nb::borrow(obj);
}

nlohmann::json FloatJson(double v, const char* what) {
  if (!std::isfinite(v)) {
    throw StatusError(ErrorKind::kInvalidArgument,
                      std::string(what) + ": " + std::to_string(v) + " has no JSON spelling");
  }
  return v;
}

nlohmann::json IntJson(nb::handle obj, const char* what) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
  if (overflow == 0) {
    if (v == -1 && PyErr_Occurred()) nb::raise_python_error();
    return static_cast<int64_t>(v);
  }
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(obj.ptr());
    if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) return static_cast<uint64_t>(u);
    PyErr_Clear();
  }
  throw StatusError(ErrorKind::kInvalidArgument,
                    std::string(what) + ": " + StrOf(obj) + " does not fit in 64 bits");
}

}  // namespace

nlohmann::json JsonOfPython(nb::handle raw, const char* what) {
  nb::object obj = Plain(raw);
  PyObject* p = obj.ptr();
  if (obj.is_none()) return nullptr;
  if (PyBool_Check(p)) return p == Py_True;
  if (PyLong_Check(p)) return IntJson(obj, what);
  if (PyFloat_Check(p)) return FloatJson(PyFloat_AsDouble(p), what);
  if (PyUnicode_Check(p)) return nb::cast<std::string>(obj);
  if (PyDict_Check(p)) {
    nlohmann::json out = nlohmann::json::object();
    for (auto [k, v] : nb::borrow<nb::dict>(obj)) {
      if (!PyUnicode_Check(k.ptr())) {
        throw StatusError(ErrorKind::kInvalidArgument,
                          std::string(what) + ": keys must be str, not " + TypeName(k));
      }
      out[nb::cast<std::string>(k)] = JsonOfPython(v, what);
    }
    return out;
  }
  if (PyList_Check(p) || PyTuple_Check(p)) {
    nlohmann::json out = nlohmann::json::array();
    for (nb::handle v : obj) out.push_back(JsonOfPython(v, what));
    return out;
  }
  throw StatusError(ErrorKind::kInvalidArgument,
                    std::string(what) + ": a " + TypeName(obj) + " has no JSON spelling (use dict, list, str, int, "
                                        "float, bool, None or numpy values)");
}

nlohmann::json FillValueJsonOfPython(nb::handle raw) {
  nb::object obj = Plain(raw);
  PyObject* p = obj.ptr();
  auto component = [](double v) -> nlohmann::json {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    return v;
  };
  if (PyFloat_Check(p)) return component(PyFloat_AsDouble(p));
  if (PyComplex_Check(p)) {
    return nlohmann::json::array({component(PyComplex_RealAsDouble(p)), component(PyComplex_ImagAsDouble(p))});
  }
  if (PyList_Check(p) || PyTuple_Check(p)) {  // [re, im] as the Zarr spelling has it
    nlohmann::json out = nlohmann::json::array();
    for (nb::handle v : obj) {
      nb::object item = Plain(v);
      out.push_back(PyFloat_Check(item.ptr()) ? component(PyFloat_AsDouble(item.ptr())) : JsonOfPython(item, "fill_value"));
    }
    return out;
  }
  return JsonOfPython(obj, "fill_value");
}

nb::object PythonOfJson(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return nb::none();
    case nlohmann::json::value_t::boolean: return nb::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return nb::int_(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: return nb::steal(PyLong_FromUnsignedLongLong(j.get<uint64_t>()));
    case nlohmann::json::value_t::number_float: return nb::float_(j.get<double>());
    case nlohmann::json::value_t::string: return nb::str(j.get_ref<const std::string&>().c_str(),
                                                            j.get_ref<const std::string&>().size());
    case nlohmann::json::value_t::array: {
      nb::list out;
      for (const nlohmann::json& v : j) out.append(PythonOfJson(v));
      return out;
    }
    case nlohmann::json::value_t::object: {
      nb::dict out;
      for (auto it = j.begin(); it != j.end(); ++it) out[nb::str(it.key().c_str(), it.key().size())] = PythonOfJson(it.value());
      return out;
    }
    default: return nb::none();  // binary values do not occur in metadata documents
  }
}

}  // namespace tessera::python
