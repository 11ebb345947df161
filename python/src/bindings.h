// The parts of the _tessera module, each defined in its own source.
#pragma once

#include <nanobind/nanobind.h>

namespace tessera::python {

void BindArray(nanobind::module_& m);   // tessera.Array, tessera.open
void BindTransaction(nanobind::module_& m);  // tessera.Transaction (Array.transaction())
void BindStream(nanobind::module_& m);  // tessera.Stream, tessera.StreamStats, tessera.create
void BindAcquisition(nanobind::module_& m);  // tessera.Acquisition, tessera.create_group
void BindScaleOut(nanobind::module_& m);  // the private calls of tessera.convert and tessera.dask

}  // namespace tessera::python
