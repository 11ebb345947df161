// What an HDF5 element becomes in memory: the numpy dtype h5py gives it, and the in-place
// conversion from the file's bytes to that dtype's bytes.
//
// h5py keeps the file's layout of an element (a compound's member offsets and itemsize, a fixed
// string's length), so the numpy element has the file element's size and the conversion works in
// place: each scalar leaf is byte-swapped to little-endian, or unpacked from its bit field
// (precision < size, bit offset != 0) and sign-extended. The mapping, as h5py makes it:
//
//   integer, IEEE float    -> "<i4", "<f8", ... (tessera's own DataType)
//   x87 80-bit long double -> "<f16" (numpy's float128 on x86-64); one in 12 bytes (C's long
//                             double on 32-bit hosts) is widened to numpy's 16, as h5py reads it
//   any other float layout -> the float of its size ("<f2", "<f4", "<f8", "<f16"), converted
//                             (VAX order, other field positions, padding; h5_float_layout.h)
//   bitfield               -> unsigned integer of its size
//   enumeration            -> its base integer (h5py's FALSE/TRUE int8 enum: bool)
//   complex class, and a compound of two floats named r and i -> complex64 / complex128
//   fixed-length string    -> "|S<size>" (ASCII and UTF-8 alike: bytes; null-padded as h5py reads)
//   opaque                 -> "|V<size>"
//   compound               -> {"names", "formats", "offsets", "itemsize"} (numpy's dict form)
//   array                  -> inside a compound {"base": <dtype>, "shape": [dims]}; at the top
//                             level its dimensions become trailing dimensions of the dataset
//
// Types holding variable-length data map to their stored bytes ("|V<size>"), which the object
// reader resolves (h5_vlen.h); references and time are refused (kUnsupported) here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/hdf5/h5_datatype.h"
#include "tessera/hdf5/h5_float_layout.h"

namespace tessera::hdf5 {

// One step of the file-to-numpy conversion of an element, applied `count` times at
// offset, offset + stride, ...
struct ConvertStep {
  // kNullTerminated, kSpacePadded: a fixed string padded as HDF5 converts it to numpy's null
  // padding (h5py reads through that conversion): bytes after the first NUL, or trailing spaces,
  // become NULs.
  // kConvertFloat: a float in another layout (VAX, non-IEEE fields, padding) to the IEEE (or x87)
  // float of its size (h5_float_layout.h).
  enum class Kind : uint8_t { kSwap, kUnpackInteger, kNullTerminated, kSpacePadded, kConvertFloat };
  Kind kind = Kind::kSwap;
  uint32_t offset = 0;
  uint32_t size = 0;  // bytes of the scalar
  uint32_t count = 1;
  uint32_t stride = 0;
  // kUnpackInteger:
  bool big_endian = false;
  bool is_signed = false;
  uint16_t bit_offset = 0;
  uint16_t precision = 0;
  // kConvertFloat:
  FloatLayout float_layout;
};

struct NumpyElement {
  // The element is one tessera DataType (after its trailing array dimensions are taken off).
  std::optional<DataType> dtype;
  // A top-level array datatype's dimensions: the dataset reads with them appended to its shape.
  std::vector<int64_t> trailing_dims;
  // Bytes of one element (trailing dimensions taken off): numpy's itemsize.
  uint32_t item_bytes = 0;
  // A top-level 12-byte x87 long double: the file's element is 12 bytes, numpy's float128 16, so
  // the bytes read are widened (WidenToNumpy) rather than converted in place. 0: the same size.
  uint32_t widened_from_bytes = 0;
  bool widened_big_endian = false;
  // numpy's dtype of one element (see the table above).
  nlohmann::json numpy;
  // Empty: the file's bytes are already numpy's.
  std::vector<ConvertStep> steps;
  // "compound {x: int32, y: float64}", "int16 (big-endian)", "enum uint8 {RED = 0, GREEN = 1}"
  std::string description;
};

// `name` when it is valid UTF-8, else with each byte outside a valid sequence written as \xNN
// (overlong forms, surrogates and code points past U+10FFFF included): what goes into JSON.
std::string Utf8Name(const std::string& name);

// Maps `type` as described above; kUnsupported (naming `where` and the class) for what has no
// numpy form tessera builds.
Result<NumpyElement> MapToNumpy(const H5Type& type, const std::string& where);

// Maps `type` as a member `offset` bytes into a larger element (an array type stays a numpy
// subarray): its numpy form, description, and steps at that offset. For the parts of a type
// holding variable-length data that are fixed-size (h5_vlen_value.h).
Result<NumpyElement> MapMember(const H5Type& type, uint32_t offset, const std::string& where);

// Converts `count` elements of `item_bytes` each at `data` from the file's layout to numpy's.
void ConvertToNumpy(const std::vector<ConvertStep>& steps, uint8_t* data, size_t count, size_t item_bytes);

// For an element with widened_from_bytes: `data` holds whole file elements (widened_from_bytes
// each) and becomes numpy's (item_bytes each: the 80 bits little-endian, the rest zero). No-op
// for any other element.
void WidenToNumpy(const NumpyElement& element, Bytes* data);

// Bytes numpy's layout takes for `file_bytes` of the file's elements (equal unless widened).
uint64_t NumpyBytesOf(const NumpyElement& element, uint64_t file_bytes);

}  // namespace tessera::hdf5
