// What `a[key] = value` stores: any value numpy's setitem takes (an array, a nested list, a
// scalar), cast to the array's dtype and broadcast to the selection, viewed without a copy.
#pragma once

#include <nanobind/nanobind.h>

#include "selection.h"
#include "tessera/core/dtype.h"
#include "tessera/write/region_write.h"

namespace tessera::python {

struct WriteValues {
  nanobind::object array;  // the numpy array `view` points into; keep it while writing
  SourceView view;         // over the selection's slab.OutputShape(), strides 0 where broadcast
};

// numpy.asarray(value), then:
//   - the cast: a numpy value must cast to `dtype` with casting="same_kind" (TypeError naming both
//     dtypes otherwise). Python numbers (a scalar, or lists and tuples of them) have no dtype: an
//     int goes into any integer or float dtype, a float into a float one, as numpy 2 takes a
//     Python scalar (one out of the dtype's range raises numpy's OverflowError). Big-endian
//     values are swapped to native.
//   - the shape: broadcast to `selection`'s result shape as numpy does (leading length-1
//     dimensions dropped), else ValueError "could not broadcast input array from shape (..) into
//     shape (..)".
// Needs the GIL.
WriteValues PrepareWriteValues(nanobind::handle value, DataType dtype, const Selection& selection);

}  // namespace tessera::python
