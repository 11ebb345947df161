// Element data types (Zarr v3 names) and fill values with the Zarr v3 JSON encodings.
// In memory, elements are always host (little-endian) order, C-order arrays.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera {

enum class DataType {
  kBool, kInt8, kInt16, kInt32, kInt64, kUInt8, kUInt16, kUInt32, kUInt64,
  kFloat16, kFloat32, kFloat64, kComplex64, kComplex128
};

// Size of one element in bytes.
size_t ItemSize(DataType t);
// Size of the scalar component that byte swapping acts on (complex64 -> 4).
size_t ComponentSize(DataType t);
std::string_view DataTypeName(DataType t);  // "uint16"
Result<DataType> ParseDataType(std::string_view name);
bool IsFloatingPoint(DataType t);  // float16/32/64 and complex
bool IsInteger(DataType t);        // int8..int64 and uint8..uint64 (not bool)
bool IsSignedInteger(DataType t);  // int8..int64
bool IsRealFloat(DataType t);      // float16/32/64 (not complex)
// IEEE binary16 bits of `d` (rounded to nearest even, through float), and back. Written out rather
// than through _Float16, which not every compiler supports on x86 (clang 14).
// The value back is exact (every binary16 value is a float), NaN payloads kept.
uint16_t FloatToHalfBits(double d);
float HalfBitsToFloat(uint16_t h);

// One element's bytes, little-endian, ItemSize(dtype) long.
struct FillValue {
  Bytes bytes;
  bool IsZero() const;
};

// True when every element of `chunk` equals `fill` (an empty chunk is all fill).
bool IsAllFill(ByteView chunk, const FillValue& fill);

// Decodes the Zarr v3 `fill_value` JSON for `dtype` (numbers, true/false, "NaN", "Infinity",
// "-Infinity", "0x..." raw-bit hex, [re, im] for complex).
Result<FillValue> ParseFillValue(DataType dtype, const nlohmann::json& j);
// Encodes `fill` as Zarr v3 JSON (the canonical form: numbers where exact, "NaN"/"Infinity").
nlohmann::json FillValueToJson(DataType dtype, const FillValue& fill);
// Zero fill of the given type.
FillValue ZeroFill(DataType dtype);

// Writes `count` copies of `fill` into `dst` (count * fill.bytes.size() bytes).
void FillElements(uint8_t* dst, size_t count, const FillValue& fill);

}  // namespace tessera
