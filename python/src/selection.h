// numpy basic indexing -> tessera::Hyperslab.
//
// An index is an int (negative counts from the end), a slice (any step but 0), Ellipsis, None
// (numpy.newaxis) or a tuple of those; missing trailing entries select whole dimensions. Integers
// are anything with __index__ (numpy integers, 0-d integer arrays). Advanced indexing (lists,
// arrays, booleans) is refused with IndexError.
#pragma once

#include <cstdint>
#include <vector>

#include <nanobind/nanobind.h>

#include "tessera/read/selection_read.h"

namespace tessera::python {

struct Selection {
  Hyperslab slab;
  // The shape of the result: the hyperslab's output shape with a 1 wherever None stood.
  std::vector<int64_t> result_shape;
  // numpy returns a scalar, not a 0-d array, for an index of integers only (no Ellipsis).
  bool scalar = false;
};

// Raises OutOfRangeError (an IndexError) for an integer out of range, InvalidArgumentError (a
// ValueError) for a zero step, IndexError for anything that is not basic indexing.
Selection ParseSelection(nanobind::handle key, const std::vector<int64_t>& shape);

// The selection a hyperslab made by the library (Array::Select) describes: no new axes.
Selection SelectionOfHyperslab(Hyperslab slab);

}  // namespace tessera::python
