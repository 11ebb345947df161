#include "tessera/hdf5/h5_float_layout.h"

#include <algorithm>
#include <cstring>

namespace tessera::hdf5 {
namespace {

using Wide = unsigned __int128;

// The numpy float an element of `size` bytes becomes: fraction bits, exponent bits and bias, and
// whether the leading one is stored (x87).
struct TargetFloat {
  int fraction_bits;
  int exponent_bits;
  int bias;
  bool explicit_leading_one;
};

TargetFloat TargetFor(uint32_t size) {
  switch (size) {
    case 2: return {10, 5, 15, false};
    case 4: return {23, 8, 127, false};
    case 8: return {52, 11, 1023, false};
    default: return {63, 15, 16383, true};  // 16: x87 extended, 80 bits at bit 0
  }
}

bool Bit(const uint8_t* le, uint32_t i) { return (le[i / 8] >> (i % 8)) & 1; }

// Up to 64 bits at `pos` of the little-endian bytes.
uint64_t Field(const uint8_t* le, uint32_t pos, uint32_t len) {
  uint64_t v = 0;
  for (uint32_t k = len; k-- > 0;) v = (v << 1) | Bit(le, pos + k);
  return v;
}

// The mantissa's top (at most) 64 bits, the count of bits dropped below them, and whether any
// dropped bit was set.
struct Mantissa {
  uint64_t top = 0;
  uint32_t dropped = 0;
  bool sticky = false;
};

Mantissa ReadMantissa(const uint8_t* le, uint32_t pos, uint32_t len) {
  Mantissa m;
  m.dropped = len > 64 ? len - 64 : 0;
  m.top = Field(le, pos + m.dropped, len - m.dropped);
  for (uint32_t k = 0; k < m.dropped && !m.sticky; ++k) m.sticky = Bit(le, pos + k);
  return m;
}

int BitLength(uint64_t v) { return v == 0 ? 0 : 64 - __builtin_clzll(v); }

// `v` shifted right by `shift`, rounded to nearest with ties to even (`sticky`: nonzero bits
// already dropped below v).
Wide ShiftRound(Wide v, int shift, bool sticky) {
  if (shift <= 0) return v << -shift;
  if (shift > 100) return 0;  // v < 2^64: far below half of the last kept bit
  const Wide kept = v >> shift;
  const Wide rest = v & ((Wide{1} << shift) - 1);
  const Wide half = Wide{1} << (shift - 1);
  const bool up = rest > half || (rest == half && (sticky || (kept & 1)));
  return kept + (up ? 1 : 0);
}

// Writes sign, biased exponent field and the stored mantissa bits of the target float to `p`.
void Store(const TargetFloat& t, uint32_t size, bool sign, uint64_t exponent, uint64_t mantissa, uint8_t* p) {
  std::memset(p, 0, size);
  if (t.explicit_leading_one) {  // x87: 64-bit mantissa, then 15-bit exponent and the sign
    for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(mantissa >> (8 * i));
    const uint64_t top = (uint64_t{sign} << 15) | exponent;
    p[8] = static_cast<uint8_t>(top);
    p[9] = static_cast<uint8_t>(top >> 8);
    return;
  }
  const uint64_t bits = (uint64_t{sign} << (t.exponent_bits + t.fraction_bits)) |
                        (exponent << t.fraction_bits) | (mantissa & ((uint64_t{1} << t.fraction_bits) - 1));
  for (uint32_t i = 0; i < size; ++i) p[i] = static_cast<uint8_t>(bits >> (8 * i));
}

void StoreInfinity(const TargetFloat& t, uint32_t size, bool sign, uint8_t* p) {
  const uint64_t all_ones = (uint64_t{1} << t.exponent_bits) - 1;
  Store(t, size, sign, all_ones, t.explicit_leading_one ? uint64_t{1} << 63 : 0, p);
}

// NaN as HDF5 converts one: the sign kept, every mantissa bit set.
void StoreNan(const TargetFloat& t, uint32_t size, bool sign, uint8_t* p) {
  const uint64_t all_ones = (uint64_t{1} << t.exponent_bits) - 1;
  const uint64_t mantissa = t.explicit_leading_one ? ~uint64_t{0} : (uint64_t{1} << t.fraction_bits) - 1;
  Store(t, size, sign, all_ones, mantissa, p);
}

// Stores sign * m * 2^scale (m != 0; `sticky`: the exact value is a little above that).
void StoreFinite(const TargetFloat& t, uint32_t size, bool sign, uint64_t m, int64_t scale, bool sticky, uint8_t* p) {
  const int length = BitLength(m);
  // The biased exponent the value has when normal: its leading one is 2^(scale + length - 1).
  int64_t exponent = scale + length - 1 + t.bias;
  const int significant = t.fraction_bits + 1;
  const int64_t max_exponent = (int64_t{1} << t.exponent_bits) - 1;
  if (exponent >= max_exponent) return StoreInfinity(t, size, sign, p);
  Wide rounded;
  if (exponent >= 1) {
    rounded = ShiftRound(m, length - significant, sticky);
    if (rounded >> significant) {  // rounding carried into a new leading bit
      rounded >>= 1;
      ++exponent;
    }
  } else {
    // Subnormal: the value's bits below 2^(1 - bias - fraction_bits) are rounded off.
    const int64_t keep = significant - 1 + exponent;  // significant bits left (may be <= 0)
    const int64_t shift = length - keep;
    rounded = shift > 100 ? 0 : ShiftRound(m, static_cast<int>(shift), sticky);
    exponent = (rounded >> t.fraction_bits) ? 1 : 0;  // rounded up into the normal range
  }
  if (exponent >= max_exponent) return StoreInfinity(t, size, sign, p);
  Store(t, size, sign, static_cast<uint64_t>(exponent), static_cast<uint64_t>(rounded), p);
}

}  // namespace

Result<FloatLayout> FloatLayoutOf(const H5Type& t, const std::string& where) {
  FloatLayout f;
  f.size = t.size;
  f.sign_location = t.sign_location;
  f.exponent_location = t.exponent_location;
  f.exponent_size = t.exponent_size;
  f.mantissa_location = t.mantissa_location;
  f.mantissa_size = t.mantissa_size;
  f.exponent_bias = t.exponent_bias;
  f.order = t.big_endian ? FloatLayout::ByteOrder::kBig : FloatLayout::ByteOrder::kLittle;
  // HDF5 reads the VAX bit from version 3 messages on, and only together with bit 0.
  if (t.vax_order && t.version >= 3) {
    if (!t.big_endian)
      return CorruptData(where + ": floating-point byte order bits 0 and 6 = 0, 1 (reserved; VAX order is 1, 1)");
    f.order = FloatLayout::ByteOrder::kVax;
  }
  if (t.mantissa_normalization > 2)
    return CorruptData(where + ": floating-point mantissa normalization 3 (reserved; expected 0, 1 or 2)");
  f.normalization = static_cast<FloatLayout::Normalization>(t.mantissa_normalization);
  const uint64_t bits = uint64_t{t.size} * 8;
  auto outside = [&](uint64_t position, uint64_t length, const char* field) -> Status {
    if (position + length > bits)
      return CorruptData(where + ": floating-point " + field + " (" + std::to_string(length) + " bits at bit " +
                         std::to_string(position) + ") past the " + std::to_string(t.size) + "-byte element");
    return Status::Ok();
  };
  TESSERA_RETURN_IF_ERROR(outside(f.sign_location, 1, "sign"));
  TESSERA_RETURN_IF_ERROR(outside(f.exponent_location, f.exponent_size, "exponent"));
  TESSERA_RETURN_IF_ERROR(outside(f.mantissa_location, f.mantissa_size, "mantissa"));
  if (f.exponent_size == 0 || f.exponent_size > 32)
    return Unsupported(where + ": floating point with a " + std::to_string(f.exponent_size) +
                       "-bit exponent (tessera converts 1 to 32 bits)");
  if (f.mantissa_size == 0)
    return Unsupported(where + ": floating point with a 0-bit mantissa");
  if (f.size != 2 && f.size != 4 && f.size != 8 && f.size != 16)
    return Unsupported(where + ": " + std::to_string(f.size) +
                       "-byte floating point (numpy has floats of 2, 4, 8 and 16 bytes)");
  return f;
}

std::string FloatLayoutText(const FloatLayout& f) {
  static const char* kOrder[] = {"little-endian", "big-endian", "VAX-order"};
  static const char* kNorm[] = {"leading one stored", "most significant bit set", "leading one implied"};
  return std::string(kOrder[static_cast<int>(f.order)]) + " " + std::to_string(f.size) + "-byte float (sign bit " +
         std::to_string(f.sign_location) + ", " + std::to_string(f.exponent_size) + "-bit exponent at " +
         std::to_string(f.exponent_location) + ", bias " + std::to_string(f.exponent_bias) + ", " +
         std::to_string(f.mantissa_size) + "-bit mantissa at " + std::to_string(f.mantissa_location) + ", " +
         kNorm[static_cast<int>(f.normalization)] + ")";
}

void ConvertFloatInPlace(const FloatLayout& f, uint8_t* p) {
  uint8_t le[16];
  std::memcpy(le, p, f.size);
  switch (f.order) {
    case FloatLayout::ByteOrder::kLittle: break;
    case FloatLayout::ByteOrder::kBig: std::reverse(le, le + f.size); break;
    case FloatLayout::ByteOrder::kVax:
      // The 2-byte words in reverse order, each word little-endian (HDF5's H5T_ORDER_VAX).
      for (uint32_t i = 0; i < f.size / 2; i += 2) {
        std::swap(le[i], le[f.size - 2 - i]);
        std::swap(le[i + 1], le[f.size - 1 - i]);
      }
      break;
  }
  const TargetFloat t = TargetFor(f.size);
  const bool sign = Bit(le, f.sign_location);
  const uint64_t exponent = Field(le, f.exponent_location, f.exponent_size);
  const uint64_t max_exponent = (uint64_t{1} << f.exponent_size) - 1;
  const Mantissa m = ReadMantissa(le, f.mantissa_location, f.mantissa_size);
  const bool mantissa_zero = m.top == 0 && !m.sticky;
  const bool implied = f.normalization == FloatLayout::Normalization::kImplied;
  if (mantissa_zero && exponent == 0) return Store(t, f.size, sign, 0, 0, p);
  if (exponent == max_exponent) {
    // Without an implied one, infinity has the stored leading one alone (x87's).
    const bool only_leading = !implied && !m.sticky && m.top != 0 &&
                              m.top == uint64_t{1} << (BitLength(m.top) - 1) &&
                              BitLength(m.top) + m.dropped == f.mantissa_size;
    if (mantissa_zero || only_leading) return StoreInfinity(t, f.size, sign, p);
    return StoreNan(t, f.size, sign, p);
  }
  // value = significand * 2^scale, the significand's lowest bit being mantissa bit `m.dropped`.
  const int64_t bias = f.exponent_bias;
  const int64_t low_bit = static_cast<int64_t>(m.dropped) - f.mantissa_size;
  if (implied && exponent > 0) {
    // The leading one sits just above the mantissa: fold it in, dropping one more low bit when
    // the 64 kept bits are full.
    uint64_t top = m.top;
    bool sticky = m.sticky;
    int64_t low = low_bit;
    const int width = static_cast<int>(f.mantissa_size - m.dropped);
    if (width == 64) {
      sticky = sticky || (top & 1);
      top >>= 1;
      ++low;
      top |= uint64_t{1} << 63;
    } else {
      top |= uint64_t{1} << width;
    }
    return StoreFinite(t, f.size, sign, top, static_cast<int64_t>(exponent) - bias + low, sticky, p);
  }
  if (mantissa_zero) return Store(t, f.size, sign, 0, 0, p);  // an unnormalized zero
  const int64_t e = std::max<int64_t>(static_cast<int64_t>(exponent), 1);
  // Implied one and e = 0: m * 2^(1 - bias - size); a stored one: m * 2^(e + 1 - bias - size).
  const int64_t scale = (implied ? 1 : e + 1) - bias + low_bit;
  StoreFinite(t, f.size, sign, m.top, scale, m.sticky, p);
}

}  // namespace tessera::hdf5
