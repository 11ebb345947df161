// Floating point numbers in any layout an HDF5 datatype message describes, converted to the IEEE
// (or x87) float of the same size, in place, as the HDF5 library's float-to-float conversion does.
//
// A floating-point datatype message gives, for a `size`-byte element (the HDF5 file format
// specification, "Datatype Message", class 1):
//
//   byte order   little-endian, big-endian, or VAX (version 3+ messages: class bits 0 and 6 both
//                set): HDF5 reverses the order of the 2-byte words, then reads little-endian
//   sign         one bit at `sign_location`
//   exponent     `exponent_size` bits at `exponent_location`, biased by `exponent_bias`
//   mantissa     `mantissa_size` bits at `mantissa_location`; normalization 0: none (the leading
//                one is stored, as x87's), 1: most significant bit always set (read as 0: the
//                HDF5 library refuses to convert it, its meaning is the same), 2: the leading
//                one implied (IEEE)
//   bit offset / precision: the bits that hold the value; the rest is padding, ignored on read.
//
// Bit positions count from bit 0 of the little-endian element, whatever the offset says.
//
// The value, as HDF5 reads it: exponent and mantissa all zero is a signed zero; an all-ones
// exponent is infinity when the mantissa is zero (for normalization 0: when only its leading bit
// is set) and NaN otherwise, in every layout, VAX included (HDF5 does not treat VAX's reserved
// operand apart, and h5dump prints these as inf and nan). Otherwise, with e the stored exponent
// and m the stored mantissa as an integer:
//
//   leading one implied, e > 0:  (2^mantissa_size + m) * 2^(e - bias - mantissa_size)
//   leading one implied, e = 0:  m * 2^(1 - bias - mantissa_size)       (subnormal)
//   leading one stored:          m * 2^(max(e, 1) + 1 - bias - mantissa_size)
//
// The result is the numpy float of the element's size (float16, float32, float64, x87 80-bit
// extended in 16 bytes: numpy's float128 on x86-64), rounded to nearest with ties to even;
// values past its range become infinity, values below its normal range its subnormals (or zero).
#pragma once

#include <cstdint>
#include <string>

#include "tessera/core/dtype.h"
#include "tessera/core/status.h"
#include "tessera/hdf5/h5_datatype.h"

namespace tessera::hdf5 {

struct FloatLayout {
  enum class ByteOrder : uint8_t { kLittle, kBig, kVax };
  enum class Normalization : uint8_t { kNone = 0, kMsbSet = 1, kImplied = 2 };
  uint32_t size = 0;  // bytes of the element (2, 4, 8 or 16)
  ByteOrder order = ByteOrder::kLittle;
  uint16_t sign_location = 0;
  uint16_t exponent_location = 0, exponent_size = 0;
  uint16_t mantissa_location = 0, mantissa_size = 0;
  uint32_t exponent_bias = 0;
  Normalization normalization = Normalization::kImplied;
};

// The layout of a floating-point H5Type, checked: every field inside the element, an exponent of
// 1..32 bits, a mantissa of 1..255 bits, a VAX-order element of even size, and a size numpy has a
// float of (2, 4, 8, 16). Anything else is kUnsupported or kDataLoss naming `where` and the field.
Result<FloatLayout> FloatLayoutOf(const H5Type& type, const std::string& where);

// "VAX-order 4-byte float (sign bit 31, 8-bit exponent at 23, bias 129, 23-bit mantissa at 0, implied)".
std::string FloatLayoutText(const FloatLayout& layout);

// Converts one element at `p` (layout.size bytes) to the numpy float of that size, in place.
void ConvertFloatInPlace(const FloatLayout& layout, uint8_t* p);

}  // namespace tessera::hdf5
