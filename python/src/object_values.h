// Reading arrays of variable-length elements (Array::object_type() set) into numpy object arrays:
// kString elements become str, kBytes bytes, kSequence numpy arrays of the sequence's dtype.
#pragma once

#include <nanobind/nanobind.h>

#include "selection.h"
#include "tessera/api/array.h"

namespace tessera::python {

namespace nb = nanobind;

// Reads `sel` of an array of variable-length elements (object_type() not null) into a new object
// array (the element itself when sel.scalar) or into `out`, a writable C-contiguous object array of
// the selection's shape. The GIL is released while the chunks are read.
nb::object ReadObjectSelection(const Array& array, const Selection& sel, nb::handle out);

// The element the fill value is, as ReadObjectSelection gives elements.
nb::object ObjectFillValue(const Array& array);

}  // namespace tessera::python
