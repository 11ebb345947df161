// binary16 conversions, exhaustively: every half value converts to the float the IEEE formula gives
// and back to the same bits.
#include "tessera/core/dtype.h"

#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

namespace tessera {
namespace {

// The value of binary16 bits by the IEEE 754 formula (an independent reference).
double ReferenceHalf(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(mant + 1024, exp - 25);
}

TEST(HalfConversionTest, EveryHalfValueRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float f = HalfBitsToFloat(bits);
    const double d = ReferenceHalf(bits);
    if (std::isnan(d)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_EQ(FloatToHalfBits(f) & 0x7c00u, 0x7c00u) << std::hex << h;  // still a NaN
      continue;
    }
    EXPECT_EQ(static_cast<double>(f), d) << std::hex << h;
    EXPECT_EQ(std::signbit(f), std::signbit(d)) << std::hex << h;
    EXPECT_EQ(FloatToHalfBits(f), bits) << std::hex << h;
  }
}

TEST(HalfConversionTest, RoundsToNearestEven) {
  EXPECT_EQ(FloatToHalfBits(1.0 + 1.0 / 2048), 0x3c00u);      // halfway: to even (1.0)
  EXPECT_EQ(FloatToHalfBits(1.0 + 3.0 / 2048), 0x3c02u);      // halfway: to even (1 + 2/1024)
  EXPECT_EQ(FloatToHalfBits(65520.0), 0x7c00u);               // rounds up to infinity
  EXPECT_EQ(FloatToHalfBits(65519.0), 0x7bffu);               // the largest finite half
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0, -25)), 0x0000u);  // half the smallest subnormal: to even (0)
  EXPECT_EQ(FloatToHalfBits(std::ldexp(3.0, -26)), 0x0001u);  // above half: the smallest subnormal
}

}  // namespace
}  // namespace tessera
