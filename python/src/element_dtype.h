// Arrays whose elements are no tessera DataType (HDF5 compounds, fixed-length strings, opaque
// values: core/element_type.h) as numpy sees them: their structured / bytes / void dtype, reads
// into arrays of it, and their fill value.
#pragma once

#include <nanobind/nanobind.h>
#include <nlohmann/json.hpp>

#include "selection.h"
#include "tessera/api/array.h"

namespace tessera::python {

namespace nb = nanobind;

// numpy's dtype from the element type's JSON (core/element_type.h): a type string, a structure
// in numpy's dict form, or a subarray {"base", "shape"} (numpy's (base, shape) tuple).
nb::object DtypeOfJson(const nlohmann::json& j);
// numpy.dtype of `array`'s elements: the element type's, else NumpyDtype(array.dtype()).
nb::object ElementDtype(const Array& array);
// Reads `sel` of an array with an element type into a new array of ElementDtype (a numpy scalar
// where numpy gives one), or into `out`: C-contiguous, of that dtype and the selection's shape.
nb::object ReadElementSelection(const Array& array, const Selection& sel, nb::handle out);
// The fill value: a numpy scalar of ElementDtype.
nb::object ElementFill(const Array& array);

}  // namespace tessera::python
