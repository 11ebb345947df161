#include "bfloat16_dtype.h"

#include "buffers.h"

namespace tessera::python {

nb::object BFloat16Dtype() {
  nb::object ml_dtypes;
  try {
    ml_dtypes = nb::module_::import_("ml_dtypes");
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_ImportError)) throw;
    nb::raise_from(e, PyExc_ImportError,
                   "reading a bfloat16 array needs numpy's bfloat16 dtype from the ml_dtypes package: "
                   "pip install ml-dtypes");
  }
  return Numpy().attr("dtype")(ml_dtypes.attr("bfloat16"));
}

}  // namespace tessera::python
