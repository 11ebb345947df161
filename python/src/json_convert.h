// Python objects <-> nlohmann::json, for attributes, fill values and metadata documents.
#pragma once

#include <nanobind/nanobind.h>
#include <nlohmann/json.hpp>

namespace tessera::python {

// Converts dicts (str keys), lists, tuples, str, bool, int, float, None, numpy scalars and numpy
// arrays (as nested lists). Non-finite floats are refused: JSON has no spelling for them.
// Errors (InvalidArgumentError) start with `what`.
nlohmann::json JsonOfPython(nanobind::handle obj, const char* what);

// A fill value in the Zarr v3 JSON spelling: numbers as numbers, NaN / Infinity / -Infinity as
// strings, complex as [re, im], bool as true/false, str passed through ("0x7fc00000").
nlohmann::json FillValueJsonOfPython(nanobind::handle obj);

// JSON -> plain Python objects (dict, list, str, int, float, bool, None).
nanobind::object PythonOfJson(const nlohmann::json& j);

}  // namespace tessera::python
