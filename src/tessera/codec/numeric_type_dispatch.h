// From a runtime DataType to the C++ type a codec's templated loop is instantiated for: the
// numcodecs-style array->array codecs (delta, fixedscaleoffset) pick their element loop by the
// array's dtype and the encoded astype, each one of these calls.
#pragma once

#include <cstdint>

#include "tessera/core/dtype.h"

namespace tessera {

// Calls f(T{}) with T the C++ integer type of `t` and returns true; for any other type returns
// false without calling f.
template <typename F>
bool WithIntegerType(DataType t, F&& f) {
  switch (t) {
    case DataType::kInt8: f(int8_t{}); return true;
    case DataType::kInt16: f(int16_t{}); return true;
    case DataType::kInt32: f(int32_t{}); return true;
    case DataType::kInt64: f(int64_t{}); return true;
    case DataType::kUInt8: f(uint8_t{}); return true;
    case DataType::kUInt16: f(uint16_t{}); return true;
    case DataType::kUInt32: f(uint32_t{}); return true;
    case DataType::kUInt64: f(uint64_t{}); return true;
    default: return false;
  }
}

// As WithIntegerType, also float32 and float64 (float16 has no C++ arithmetic type: a codec that
// takes it handles it on its own).
template <typename F>
bool WithIntegerOrFloatType(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat32: f(float{}); return true;
    case DataType::kFloat64: f(double{}); return true;
    default: return WithIntegerType(t, f);
  }
}

}  // namespace tessera
