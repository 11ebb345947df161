// Floats in layouts other than IEEE's (VAX order, other field positions and biases, a stored
// leading one, padding), converted to the numpy float of their size, on hand-made bytes.
#include "tessera/hdf5/h5_float_layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "cpp_support/status_matchers.h"
#include "tessera/hdf5/h5_datatype_numpy.h"

namespace tessera::hdf5 {
namespace {

H5Type FloatType(uint32_t size, uint8_t sign, uint8_t el, uint8_t es, uint8_t ml, uint8_t ms, uint32_t bias,
                 uint8_t normalization = 2) {
  H5Type t;
  t.cls = H5TypeClass::kFloatingPoint;
  t.version = 3;
  t.size = size;
  t.precision = static_cast<uint16_t>(size * 8);
  t.sign_location = sign;
  t.exponent_location = el;
  t.exponent_size = es;
  t.mantissa_location = ml;
  t.mantissa_size = ms;
  t.exponent_bias = bias;
  t.mantissa_normalization = normalization;
  return t;
}

H5Type VaxF() {
  H5Type t = FloatType(4, 31, 23, 8, 0, 23, 129);
  t.vax_order = true;
  t.big_endian = true;  // VAX order is class bits 0 and 6 both set
  return t;
}
H5Type VaxD() {
  H5Type t = FloatType(8, 63, 55, 8, 0, 55, 129);
  t.vax_order = true;
  t.big_endian = true;
  return t;
}

// The element's bits as a little-endian integer, laid out in VAX order (2-byte words reversed).
Bytes VaxBytes(uint64_t bits, uint32_t size) {
  Bytes le(size);
  for (uint32_t i = 0; i < size; ++i) le[i] = static_cast<uint8_t>(bits >> (8 * i));
  Bytes out(size);
  for (uint32_t w = 0; w < size / 2; ++w) {
    out[2 * w] = le[size - 2 - 2 * w];
    out[2 * w + 1] = le[size - 1 - 2 * w];
  }
  return out;
}

template <typename F>
F Convert(const H5Type& t, Bytes element) {
  auto mapped = MapToNumpy(t, "test float");
  EXPECT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(mapped->item_bytes, sizeof(F));
  ConvertToNumpy(mapped->steps, element.data(), 1, element.size());
  F f;
  std::memcpy(&f, element.data(), sizeof(F));
  return f;
}

uint64_t VaxFBits(uint32_t sign, uint32_t exponent, uint32_t mantissa) {
  return (uint64_t{sign} << 31) | (uint64_t{exponent} << 23) | mantissa;
}

TEST(FloatLayoutTest, VaxFMapsToFloat32AndNamesItsLayout) {
  auto mapped = MapToNumpy(VaxF(), "test float");
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(mapped->numpy, "<f4");
  EXPECT_EQ(mapped->dtype, DataType::kFloat32);
  EXPECT_NE(mapped->description.find("VAX-order 4-byte float"), std::string::npos) << mapped->description;
}

TEST(FloatLayoutTest, VaxFNormalValuesAndZeros) {
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 129, 0), 4)), 1.0f);
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 128, 0), 4)), 0.5f);
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(1, 130, 0x400000), 4)), -3.0f);
  // 0x40490fdb is pi in IEEE single; VAX F's bias is 2 higher.
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(0x40490fdbu + (2u << 23), 4)), 3.14159274f);
  const float zero = Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 0, 0), 4));
  EXPECT_EQ(zero, 0.0f);
  EXPECT_FALSE(std::signbit(zero));
  EXPECT_TRUE(std::signbit(Convert<float>(VaxF(), VaxBytes(VaxFBits(1, 0, 0), 4))));
}

TEST(FloatLayoutTest, VaxFBelowFloat32sNormalRangeBecomesSubnormalRoundedToEven) {
  // e = 1: 2^-128, exact as a float32 subnormal.
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 1, 0), 4)), std::ldexp(1.0f, -128));
  // e = 2, mantissa all ones: (2^24 - 1) * 2^-150, halfway between two subnormals' neighbours;
  // ties go to the even one, 2^-126 (float32's smallest normal, a carry into the exponent).
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 2, 0x7fffff), 4)), std::ldexp(1.0f, -126));
  // e = 1, mantissa 1: 2^-128 * (1 + 2^-23) has bits below 2^-149: rounds to 2^-128.
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 1, 1), 4)), std::ldexp(1.0f, -128));
  // e = 1, mantissa 3 << 20 = 1.375 * 2^-128 -> 11 units of 2^-131 -> exact.
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 1, 3 << 20), 4)), std::ldexp(1.375f, -128));
  // Exponent 0 with a mantissa: a subnormal as HDF5 reads it, m * 2^(1 - 129 - 23).
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 0, 4), 4)), std::ldexp(1.0f, -149));
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 0, 2), 4)), 0.0f);  // 2^-150: a tie, to even 0
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 0, 3), 4)), std::ldexp(1.0f, -149));
}

TEST(FloatLayoutTest, AllOnesExponentIsInfinityOrNanAsHdf5ReadsIt) {
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 255, 0), 4)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(1, 255, 0), 4)), -std::numeric_limits<float>::infinity());
  const float nan = Convert<float>(VaxF(), VaxBytes(VaxFBits(1, 255, 5), 4));
  EXPECT_TRUE(std::isnan(nan));
  EXPECT_TRUE(std::signbit(nan));
  // The largest finite VAX F, (2 - 2^-23) * 2^125, is a float32.
  EXPECT_EQ(Convert<float>(VaxF(), VaxBytes(VaxFBits(0, 254, 0x7fffff), 4)),
            std::ldexp(2.0f - std::ldexp(1.0f, -23), 125));
}

TEST(FloatLayoutTest, VaxDRoundsIts55BitMantissaToFloat64) {
  auto bits = [](uint64_t sign, uint64_t exponent, uint64_t mantissa) {
    return (sign << 63) | (exponent << 55) | mantissa;
  };
  EXPECT_EQ(Convert<double>(VaxD(), VaxBytes(bits(0, 129, uint64_t{1} << 54), 8)), 1.5);
  EXPECT_EQ(Convert<double>(VaxD(), VaxBytes(bits(1, 131, 0), 8)), -4.0);
  // 1 + 2^-53 + 2^-55: above the halfway point between 1 and 1 + 2^-52: rounds up.
  EXPECT_EQ(Convert<double>(VaxD(), VaxBytes(bits(0, 129, 0b101), 8)), 1.0 + std::ldexp(1.0, -52));
  // 1 + 2^-53 exactly: a tie, to even (1).
  EXPECT_EQ(Convert<double>(VaxD(), VaxBytes(bits(0, 129, 0b100), 8)), 1.0);
  // 1 + 2^-52 + 2^-53: a tie, to even (1 + 2^-51).
  EXPECT_EQ(Convert<double>(VaxD(), VaxBytes(bits(0, 129, 0b1100), 8)), 1.0 + std::ldexp(1.0, -51));
}

TEST(FloatLayoutTest, BigEndianBfloat16LikeLayoutIn2BytesOverflowsFloat16ToInfinity) {
  H5Type t = FloatType(2, 15, 7, 8, 0, 7, 127);
  t.big_endian = true;
  auto half_bits = [&](uint16_t bits) {
    Bytes b = {static_cast<uint8_t>(bits >> 8), static_cast<uint8_t>(bits)};
    const uint16_t h = Convert<uint16_t>(t, b);
    return h;
  };
  EXPECT_EQ(half_bits(0x3f80), 0x3c00);  // 1.0
  EXPECT_EQ(half_bits(0xc040), 0xc200);  // -3.0
  EXPECT_EQ(half_bits(0x5000), 0x7c00);  // 2^33: past float16's range
  EXPECT_EQ(half_bits(0x0001), 0x0000);  // 2^-133: far below float16's subnormals
  EXPECT_EQ(half_bits(0x3380), 0x0001);  // 2^-24: float16's smallest subnormal
}

TEST(FloatLayoutTest, StoredLeadingOneAndPaddingBits) {
  // 4 bytes, value in bits 8..31: sign 31, 7-bit exponent at 24 (bias 63), 16-bit mantissa at 8
  // with its leading one stored; bits 0..7 are padding and ignored.
  H5Type t = FloatType(4, 31, 24, 7, 8, 16, 63, /*normalization=*/0);
  t.bit_offset = 8;
  t.precision = 24;
  auto value = [](uint32_t sign, uint32_t exponent, uint32_t mantissa) {
    const uint32_t bits = (sign << 31) | (exponent << 24) | (mantissa << 8) | 0xa5;
    Bytes b(4);
    std::memcpy(b.data(), &bits, 4);
    return b;
  };
  // m * 2^(e + 1 - 63 - 16): 0x8000 * 2^(63 - 78) = 1.
  EXPECT_EQ(Convert<float>(t, value(0, 63, 0x8000)), 1.0f);
  EXPECT_EQ(Convert<float>(t, value(1, 64, 0xc000)), -3.0f);
  EXPECT_EQ(Convert<float>(t, value(0, 63, 0x4000)), 0.5f);  // unnormalized
  EXPECT_EQ(Convert<float>(t, value(0, 0, 0)), 0.0f);
  EXPECT_EQ(Convert<float>(t, value(0, 127, 0x8000)), std::numeric_limits<float>::infinity());
  // A zero mantissa under the all-ones exponent too (found by fuzzing: no bit to look for).
  EXPECT_EQ(Convert<float>(t, value(1, 127, 0)), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Convert<float>(t, value(0, 127, 0xc000))));
}

TEST(FloatLayoutTest, QuadPrecisionIn16BytesBecomesX87Extended) {
  // IEEE binary128: sign 127, 15-bit exponent at 112, 112-bit mantissa.
  H5Type t = FloatType(16, 127, 112, 15, 0, 112, 16383);
  Bytes b(16, 0);
  b[15] = 0x3f;  // exponent 16383: 1.0 * ...
  b[14] = 0xff;
  b[13] = 0x80;  // ... with the mantissa's top bit: 1.5
  b[0] = 0x01;   // and a last bit that rounds away
  auto mapped = MapToNumpy(t, "test float");
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(mapped->numpy, "<f16");
  ConvertToNumpy(mapped->steps, b.data(), 1, 16);
  uint64_t significand;
  std::memcpy(&significand, b.data(), 8);
  EXPECT_EQ(significand, 0xc000000000000000ull);
  EXPECT_EQ(b[8] | (b[9] << 8), 16383);
  for (int i = 10; i < 16; ++i) EXPECT_EQ(b[i], 0);
}

TEST(FloatLayoutTest, LayoutsThatCannotBeConvertedAreRefusedNamingTheField) {
  EXPECT_ERROR(MapToNumpy(FloatType(3, 23, 16, 7, 0, 16, 63), "f"), ErrorKind::kUnsupported,
               "3-byte floating point");
  EXPECT_ERROR(MapToNumpy(FloatType(4, 40, 23, 8, 0, 23, 127), "f"), ErrorKind::kCorruptData, "sign",
               "past the 4-byte");
  EXPECT_ERROR(MapToNumpy(FloatType(4, 31, 23, 12, 0, 23, 127), "f"), ErrorKind::kCorruptData, "exponent");
  EXPECT_ERROR(MapToNumpy(FloatType(4, 31, 23, 8, 0, 23, 127, 3), "f"), ErrorKind::kCorruptData, "normalization 3");
  H5Type reserved_order = FloatType(4, 31, 23, 8, 0, 23, 129);
  reserved_order.vax_order = true;  // bit 6 without bit 0
  EXPECT_ERROR(MapToNumpy(reserved_order, "f"), ErrorKind::kCorruptData, "byte order bits");
}

TEST(FloatLayoutTest, VaxBitInVersion1MessageIsIgnoredAsHdf5Does) {
  H5Type t = FloatType(4, 31, 23, 8, 0, 23, 127);
  t.version = 1;
  t.vax_order = true;
  t.big_endian = true;
  const Bytes be = {0x3f, 0x80, 0x00, 0x00};
  EXPECT_EQ(Convert<float>(t, be), 1.0f);
}

}  // namespace
}  // namespace tessera::hdf5
