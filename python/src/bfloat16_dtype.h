// numpy's bfloat16 dtype (Zarr data_type "bfloat16"), which numpy itself lacks: ml_dtypes
// defines it (tensorstore's Python reads bfloat16 arrays as it). Imported only when an array of
// bfloat16 is met, so tessera does not need ml_dtypes otherwise.
#pragma once

#include <nanobind/nanobind.h>

namespace tessera::python {

namespace nb = nanobind;

// numpy.dtype(ml_dtypes.bfloat16); without ml_dtypes installed, an ImportError that names
// `pip install ml-dtypes`.
nb::object BFloat16Dtype();

}  // namespace tessera::python
