// Reading arrays of variable-length elements (Array::object_type() set) into numpy arrays, as
// h5py gives them: kString elements become str, kBytes bytes, kSequence numpy arrays (of their
// values' dtype, or object / structured arrays of values that are objects themselves), kRecord
// numpy structured elements whose object fields hold such objects.
#pragma once

#include <nanobind/nanobind.h>

#include "selection.h"
#include "tessera/api/array.h"

namespace tessera::python {

namespace nb = nanobind;

// The numpy dtype a read gives: object, or a kRecord's structured (or subarray) dtype.
nb::object ObjectDtype(const Array& array);

// Reads `sel` of an array of variable-length elements (object_type() not null) into a new array
// of ObjectDtype (the element itself when sel.scalar) or into `out`, a writable C-contiguous
// array of the selection's shape and that dtype. The GIL is released while the chunks are read.
nb::object ReadObjectSelection(const Array& array, const Selection& sel, nb::handle out);

// The element the fill value is, as ReadObjectSelection gives elements.
nb::object ObjectFillValue(const Array& array);

}  // namespace tessera::python
