// Small helpers shared by the binding sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "tessera/store/store_options.h"

namespace tessera::python {

namespace nb = nanobind;

// storage_options (None or a dict of store settings, store/store_options.h) as StoreOptions;
// an unknown key or a bad value raises InvalidArgumentError naming it.
StoreOptions StoreOptionsOf(nb::handle obj);

// A str or os.PathLike location as text.
std::string LocationText(nb::handle location);

// A tuple of Python ints.
nb::tuple TupleOf(const std::vector<int64_t>& values);

// An int, or a sequence of ints (anything with __index__); errors name `what`.
std::vector<int64_t> IntsOf(nb::handle obj, const char* what);

// A sequence of exactly N numbers; errors name `what`.
std::vector<double> FloatsOf(nb::handle obj, size_t n, const char* what);

std::string TypeName(nb::handle obj);

// str(obj), as Python spells it.
std::string StrOf(nb::handle obj);

}  // namespace tessera::python
