#include "write_values.h"

#include <string>
#include <vector>

#include "buffers.h"
#include "common.h"

namespace nb = nanobind;

namespace tessera::python {
namespace {

std::vector<int64_t> ShapeOf(nb::handle array) {
  std::vector<int64_t> shape;
  for (nb::handle e : nb::borrow<nb::tuple>(array.attr("shape"))) shape.push_back(nb::cast<int64_t>(e));
  return shape;
}

// Python numbers (a bool, int, float or complex, or lists and tuples of them) have no dtype of
// their own: like numpy 2 does for a Python scalar, they go into any dtype of a kind that holds
// them with casting="same_kind" (an int into any integer or float, a float into a float), and
// numpy refuses a value out of the dtype's range (OverflowError). numpy.asarray's dtype for
// them says which kind they are. Their name for messages is returned in *name.
bool PythonNumbersFit(char value_kind, char kind, const char** name) {
  switch (value_kind) {
    case 'b': *name = "bool"; return true;
    case 'i': *name = "int"; return kind == 'i' || kind == 'u' || kind == 'f' || kind == 'c';
    case 'f': *name = "float"; return kind == 'f' || kind == 'c';
    case 'c': *name = "complex"; return kind == 'c';
    default: *name = "object"; return false;
  }
}

// Python numbers, not a numpy array or scalar (np.float64 is a float subclass: not exact).
bool IsPythonNumbers(PyObject* v) {
  return PyBool_Check(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyComplex_CheckExact(v) ||
         PyList_CheckExact(v) || PyTuple_CheckExact(v);
}

[[noreturn]] void CannotBroadcast(const std::vector<int64_t>& from, const std::vector<int64_t>& into) {
  throw nb::value_error(
      ("could not broadcast input array from shape " + ShapeText(from) + " into shape " + ShapeText(into)).c_str());
}

}  // namespace

WriteValues PrepareWriteValues(nb::handle value, DataType dtype, const Selection& selection) {
  nb::module_& np = Numpy();
  const nb::object target = NumpyDtype(dtype);
  const std::string target_name = StrOf(target);
  nb::object array = np.attr("asarray")(value);
  const nb::object have = array.attr("dtype");
  if (IsPythonNumbers(value.ptr())) {
    const char value_kind = nb::cast<std::string>(have.attr("kind"))[0];
    const char kind = nb::cast<std::string>(target.attr("kind"))[0];
    const char* name = "";
    if (!PythonNumbersFit(value_kind, kind, &name)) {
      throw nb::type_error(("cannot write Python " + std::string(name) + " values into an array of dtype " +
                            target_name + " (casting='same_kind')")
                               .c_str());
    }
    array = np.attr("asarray")(value, target);  // OverflowError for a number out of range
  } else {
    if (!nb::cast<bool>(np.attr("can_cast")(have, target, nb::arg("casting") = "same_kind"))) {
      throw nb::type_error(("Cannot cast array data from dtype('" + StrOf(have) + "') to dtype('" + target_name +
                            "') according to the rule 'same_kind'")
                               .c_str());
    }
    // Equal only when the byte order is the same too: a big-endian array is converted here.
    if (!nb::cast<bool>(have.attr("__eq__")(target))) array = array.attr("astype")(target);
  }

  // numpy's broadcasting of the value to the selection's shape, checked here for numpy's message.
  const std::vector<int64_t> given = ShapeOf(array);
  const std::vector<int64_t>& into = selection.result_shape;
  size_t drop = 0;  // leading length-1 dimensions beyond the selection's rank are ignored
  while (given.size() - drop > into.size() && given[drop] == 1) ++drop;
  if (given.size() - drop > into.size()) CannotBroadcast(given, into);
  const size_t offset = into.size() - (given.size() - drop);
  for (size_t d = drop; d < given.size(); ++d) {
    if (given[d] != 1 && given[d] != into[offset + d - drop]) CannotBroadcast(given, into);
  }
  if (drop > 0) {
    std::vector<int64_t> kept(given.begin() + static_cast<std::ptrdiff_t>(drop), given.end());
    array = array.attr("reshape")(TupleOf(kept));
  }
  array = np.attr("broadcast_to")(array, TupleOf(into));
  // Without the new axes (None) the selection has: dropping length-1 dimensions is a view.
  const std::vector<int64_t> out_shape = selection.slab.OutputShape();
  if (out_shape.size() != into.size()) array = array.attr("reshape")(TupleOf(out_shape));

  WriteValues values;
  values.view.base = reinterpret_cast<const uint8_t*>(
      nb::cast<uintptr_t>(array.attr("__array_interface__")["data"][nb::int_(0)]));
  nb::tuple strides = nb::borrow<nb::tuple>(array.attr("strides"));
  for (size_t d = 0; d < strides.size(); ++d) values.view.byte_strides[d] = nb::cast<int64_t>(strides[d]);
  values.array = std::move(array);
  return values;
}

}  // namespace tessera::python
