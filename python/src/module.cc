// The tessera._tessera extension module; tessera/__init__.py re-exports it.
#include <nanobind/nanobind.h>

#include "bindings.h"
#include "errors.h"

#ifndef TESSERA_VERSION
#error "TESSERA_VERSION must be defined by the build (python/CMakeLists.txt)"
#endif

NB_MODULE(_tessera, m) {
  m.doc() = "tessera's C++ core: chunked, compressed, sharded N-d arrays (see the tessera package).";
  tessera::python::RegisterErrorTranslator();
  tessera::python::BindArray(m);
  tessera::python::BindTransaction(m);
  tessera::python::BindStream(m);
  tessera::python::BindAcquisition(m);
  tessera::python::BindScaleOut(m);
  m.attr("VERSION") = TESSERA_VERSION;  // tessera.__version__ (stubgen omits dunder attributes)
}
