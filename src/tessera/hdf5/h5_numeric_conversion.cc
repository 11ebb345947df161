#include "tessera/hdf5/h5_numeric_conversion.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tessera::hdf5 {
namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// One element as the widest type of its kind: signed integers as int64, unsigned as uint64 (a
// flag says which), floats as double.
struct Wide {
  bool is_float = false, is_unsigned = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
};

Wide LoadWide(DataType t, const uint8_t* p) {
  Wide w;
  switch (t) {
    case DataType::kInt8: w.i = Load<int8_t>(p); break;
    case DataType::kInt16: w.i = Load<int16_t>(p); break;
    case DataType::kInt32: w.i = Load<int32_t>(p); break;
    case DataType::kInt64: w.i = Load<int64_t>(p); break;
    case DataType::kUInt8: w.is_unsigned = true; w.u = Load<uint8_t>(p); break;
    case DataType::kUInt16: w.is_unsigned = true; w.u = Load<uint16_t>(p); break;
    case DataType::kUInt32: w.is_unsigned = true; w.u = Load<uint32_t>(p); break;
    case DataType::kUInt64: w.is_unsigned = true; w.u = Load<uint64_t>(p); break;
    case DataType::kFloat16: w.is_float = true; w.f = HalfBitsToFloat(Load<uint16_t>(p)); break;
    case DataType::kFloat32: w.is_float = true; w.f = Load<float>(p); break;
    default: w.is_float = true; w.f = Load<double>(p); break;
  }
  return w;
}

// The destination integer's limits, as int64/uint64.
void Limits(DataType t, int64_t* min, uint64_t* max) {
  const size_t bits = 8 * ItemSize(t);
  if (IsSignedInteger(t)) {
    *min = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
    *max = bits == 64 ? uint64_t{std::numeric_limits<int64_t>::max()} : (uint64_t{1} << (bits - 1)) - 1;
  } else {
    *min = 0;
    *max = bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
  }
}

// The bits an integer destination receives, as its two's complement in 64 bits.
uint64_t IntegerBits(const Wide& w, DataType from, DataType to) {
  int64_t min;
  uint64_t max;
  Limits(to, &min, &max);
  if (!w.is_float) {
    if (w.is_unsigned) return w.u > max ? max : w.u;
    if (w.i < min) return static_cast<uint64_t>(min);
    if (w.i >= 0 && static_cast<uint64_t>(w.i) > max) return max;
    return static_cast<uint64_t>(w.i);
  }
  // HDF5 compares with the limits as the source float type rounds them.
  const double v = w.f;
  const double max_as_source = from == DataType::kFloat32 ? double(float(max)) : double(max);
  const double min_as_source = from == DataType::kFloat32 ? double(float(min)) : double(min);
  if (v > max_as_source) return max;
  if (v < min_as_source) return static_cast<uint64_t>(min);
  // x86-64's truncating conversions: cvttsd2si into 32 bits (int8/16, uint8/16, int32) or 64 bits
  // (uint32, int64), and the two-step sequence for uint64; out of range or NaN is the "integer
  // indefinite" 0x80..0.
  constexpr double k2p31 = 2147483648.0, k2p63 = 9223372036854775808.0;
  auto cvt64 = [](double x) -> uint64_t {
    if (std::isnan(x) || x >= k2p63 || x < -k2p63) return uint64_t{1} << 63;
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  };
  auto cvt32 = [](double x) -> uint64_t {
    if (std::isnan(x) || x >= k2p31 || x < -k2p31) return uint64_t{0x80000000};
    return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(x)));
  };
  switch (to) {
    case DataType::kUInt32:
    case DataType::kInt64:
      return cvt64(v);
    case DataType::kUInt64:
      // NaN compares unordered: it takes the first branch.
      if (!(v >= k2p63)) return cvt64(v);
      return cvt64(v - k2p63) ^ (uint64_t{1} << 63);
    default:
      return cvt32(v);
  }
}

void StoreInteger(DataType t, uint8_t* p, uint64_t bits) {
  switch (ItemSize(t)) {
    case 1: Store<uint8_t>(p, static_cast<uint8_t>(bits)); break;
    case 2: Store<uint16_t>(p, static_cast<uint16_t>(bits)); break;
    case 4: Store<uint32_t>(p, static_cast<uint32_t>(bits)); break;
    default: Store<uint64_t>(p, bits); break;
  }
}

void StoreFloat(DataType t, uint8_t* p, const Wide& w) {
  // Integers convert straight into the destination (one rounding, as C does).
  switch (t) {
    case DataType::kFloat64:
      Store<double>(p, w.is_float ? w.f : w.is_unsigned ? static_cast<double>(w.u) : static_cast<double>(w.i));
      break;
    case DataType::kFloat32:
      Store<float>(p, w.is_float ? static_cast<float>(w.f)
                                 : w.is_unsigned ? static_cast<float>(w.u) : static_cast<float>(w.i));
      break;
    default: {
      const double v = w.is_float ? w.f : w.is_unsigned ? static_cast<double>(static_cast<float>(w.u))
                                                        : static_cast<double>(static_cast<float>(w.i));
      Store<uint16_t>(p, FloatToHalfBits(v));
      break;
    }
  }
}

}  // namespace

bool CanConvertNumeric(DataType from, DataType to) {
  // float16 into integers wider than a byte: HDF5 2.0 neither clamps nor wraps consistently there
  // (-129 into uint16 wraps to 65407, into uint8 clamps to 0); not guessed at.
  if (from == DataType::kFloat16 && IsInteger(to) && ItemSize(to) > 1) return false;
  return (IsInteger(from) || IsRealFloat(from)) && (IsInteger(to) || IsRealFloat(to));
}

void ConvertNumeric(DataType from, const uint8_t* src, DataType to, uint8_t* dst, size_t n) {
  const size_t in = ItemSize(from), out = ItemSize(to);
  for (size_t i = 0; i < n; ++i) {
    const Wide w = LoadWide(from, src + i * in);
    if (IsRealFloat(to)) StoreFloat(to, dst + i * out, w);
    else StoreInteger(to, dst + i * out, IntegerBits(w, from, to));
  }
}

}  // namespace tessera::hdf5
