// The numeric conversions the HDF5 library applies when a dataset's elements are read as another
// integer or floating-point type (a virtual dataset whose sources have another type: an int16
// source in a float64 VDS). Values are in host order on both sides (readers swap first).
//
// What HDF5 2.0 does by default (its "hard" conversions, checked against h5py):
//   integer -> integer: out-of-range values clamp to the destination's limits.
//   integer -> float, float -> float: the C conversion (round to nearest; overflow to +-inf).
//   float -> integer: a value above the destination's maximum as the source type rounds it, or
//     below its minimum, clamps; the rest, NaN included, converts as x86-64 does (truncation
//     toward zero; NaN and the values left out of range by that rounding, e.g. float32 2^31 into
//     int32, give the "integer indefinite" the hardware gives: INT_MIN for int32/int64, 0 for the
//     narrower types and uint32, 2^63 for uint64 NaN, 0 for uint64 2^64). tessera writes these
//     out so it matches HDF5 on every host, not only x86-64.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/core/dtype.h"

namespace tessera::hdf5 {

// Whether ConvertNumeric converts `from` into `to` (integers and float16/32/64; not bool or
// complex, nor float16 into integers wider than a byte, where HDF5 2.0's results follow no rule
// tessera could state).
bool CanConvertNumeric(DataType from, DataType to);

// Converts `n` elements of `from` at `src` into `to` at `dst` (no overlap).
void ConvertNumeric(DataType from, const uint8_t* src, DataType to, uint8_t* dst, size_t n);

}  // namespace tessera::hdf5
