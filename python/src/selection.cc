#include "selection.h"

#include <string>

#include <nanobind/stl/string.h>

#include "common.h"
#include "errors.h"

namespace nb = nanobind;

namespace tessera::python {
namespace {

bool IsSlice(nb::handle h) { return PySlice_Check(h.ptr()); }
bool IsEllipsis(nb::handle h) { return h.ptr() == Py_Ellipsis; }
// Integers for numpy's basic indexing: __index__, but not bool (numpy treats True/False as a
// boolean mask, i.e. advanced indexing).
bool IsInteger(nb::handle h) { return PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr()); }


// A slice bound: None -> absent; anything with __index__, clamped to int64 like Python clamps
// to Py_ssize_t in slice.indices().
bool SliceField(PyObject* field, int64_t* value) {
  if (field == Py_None) return false;
  if (!PyIndex_Check(field)) {
    throw nb::type_error("slice indices must be integers or None or have an __index__ method");
  }
  Py_ssize_t v = PyNumber_AsSsize_t(field, nullptr);  // clamps on overflow
  if (v == -1 && PyErr_Occurred()) nb::raise_python_error();
  *value = static_cast<int64_t>(v);
  return true;
}

index::DimSlice ParseSlice(nb::handle s, int64_t extent) {
  auto* slice = reinterpret_cast<PySliceObject*>(s.ptr());
  int64_t start = 0, stop = 0, step = 1;
  const bool has_start = SliceField(slice->start, &start);
  const bool has_stop = SliceField(slice->stop, &stop);
  SliceField(slice->step, &step);
  if (step == 0) throw StatusError(ErrorKind::kInvalidArgument, "slice step cannot be zero");
  // A step of -2^63 cannot be negated by the count computation; Python clamps the same way.
  if (step < -INT64_MAX) step = -INT64_MAX;
  index::DimSlice d = index::NormalizeSlice(extent, has_start, start, has_stop, stop, step);
  // An empty slice selects nothing wherever it starts; give it a start inside every extent.
  if (d.count == 0) d = index::DimSlice{0, 1, 0};
  return d;
}

index::DimSlice ParseInteger(nb::handle h, int64_t extent, size_t axis) {
  Py_ssize_t v = PyNumber_AsSsize_t(h.ptr(), PyExc_IndexError);
  if (v == -1 && PyErr_Occurred()) nb::raise_python_error();
  const int64_t i = v < 0 ? v + extent : v;
  if (i < 0 || i >= extent) {
    throw StatusError(ErrorKind::kOutOfRange, "index " + std::to_string(v) + " is out of bounds for axis " +
                                                  std::to_string(axis) + " with size " + std::to_string(extent));
  }
  return index::DimSlice{i, 1, 1};
}

}  // namespace

Selection ParseSelection(nb::handle key, const std::vector<int64_t>& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  nb::tuple items = PyTuple_Check(key.ptr()) ? nb::borrow<nb::tuple>(key) : nb::make_tuple(key);

  // First pass: check every entry's kind; count the entries that consume a dimension.
  int64_t consuming = 0, ellipses = 0;
  for (nb::handle item : items) {
    if (IsEllipsis(item)) ++ellipses;
    else if (item.is_none()) continue;
    else if (IsSlice(item) || IsInteger(item)) ++consuming;
    else
      throw nb::index_error(("only integers, slices (`:`), ellipsis (`...`) and numpy.newaxis (`None`) are valid "
                             "indices: tessera reads numpy basic indexing, not " + TypeName(item))
                                .c_str());
  }
  if (ellipses > 1) throw nb::index_error("an index can only have a single ellipsis ('...')");
  if (consuming > rank) {
    throw nb::index_error(("too many indices for array: array is " + std::to_string(rank) + "-dimensional, but " +
                           std::to_string(consuming) + " were indexed")
                              .c_str());
  }

  Selection sel;
  sel.slab.dims.reserve(shape.size());
  auto whole = [&](size_t d) {
    sel.slab.dims.push_back(index::DimSlice{0, 1, shape[d]});
    sel.slab.dropped.push_back(false);
    sel.result_shape.push_back(shape[d]);
  };
  for (nb::handle item : items) {
    const size_t d = sel.slab.dims.size();
    if (IsEllipsis(item)) {
      for (int64_t k = 0; k < rank - consuming; ++k) whole(sel.slab.dims.size());
    } else if (item.is_none()) {
      sel.result_shape.push_back(1);
    } else if (IsSlice(item)) {
      index::DimSlice s = ParseSlice(item, shape[d]);
      sel.slab.dims.push_back(s);
      sel.slab.dropped.push_back(false);
      sel.result_shape.push_back(s.count);
    } else {
      sel.slab.dims.push_back(ParseInteger(item, shape[d], d));
      sel.slab.dropped.push_back(true);
    }
  }
  while (static_cast<int64_t>(sel.slab.dims.size()) < rank) whole(sel.slab.dims.size());
  sel.scalar = sel.result_shape.empty() && ellipses == 0;
  return sel;
}

Selection SelectionOfHyperslab(Hyperslab slab) {
  Selection sel;
  sel.result_shape = slab.OutputShape();
  sel.slab = std::move(slab);
  return sel;
}

}  // namespace tessera::python
