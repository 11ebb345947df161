// ConvertNumeric against the values h5py / HDF5 2.0 give, and against hand-worked values of the
// rules its header states: integers clamp, floats round to nearest, floats into integers clamp at
// the limits as the source type rounds them and otherwise truncate (NaN: the "integer
// indefinite"). Both sides are in host order (the readers swap before converting), so there is no
// byte order to test here.
#include "tessera/hdf5/h5_numeric_conversion.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::hdf5 {
namespace {

template <typename To, typename From>
std::vector<To> ConvertAll(DataType from, const std::vector<From>& values, DataType to) {
  EXPECT_EQ(sizeof(From), ItemSize(from));
  EXPECT_EQ(sizeof(To), ItemSize(to));
  EXPECT_TRUE(CanConvertNumeric(from, to));
  std::vector<To> out(values.size());
  ConvertNumeric(from, reinterpret_cast<const uint8_t*>(values.data()), to, reinterpret_cast<uint8_t*>(out.data()),
                 values.size());
  return out;
}

template <typename From, typename To>
To Convert(DataType from, From v, DataType to) {
  return ConvertAll<To>(from, std::vector<From>{v}, to)[0];
}

TEST(H5NumericConversion, MatchesTheHdf5Library) {
  // The values h5py 3.16 / HDF5 2.0 give (a VDS of the destination type over a source of the
  // source type).
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  using D = DataType;
  EXPECT_EQ((Convert<double, int8_t>(D::kFloat64, nan, D::kInt8)), 0);
  EXPECT_EQ((Convert<double, int32_t>(D::kFloat64, nan, D::kInt32)), INT32_MIN);
  EXPECT_EQ((Convert<double, int64_t>(D::kFloat64, nan, D::kInt64)), INT64_MIN);
  EXPECT_EQ((Convert<double, uint32_t>(D::kFloat64, nan, D::kUInt32)), 0u);
  EXPECT_EQ((Convert<double, uint64_t>(D::kFloat64, nan, D::kUInt64)), uint64_t{1} << 63);
  EXPECT_EQ((Convert<double, int32_t>(D::kFloat64, inf, D::kInt32)), INT32_MAX);
  EXPECT_EQ((Convert<double, int16_t>(D::kFloat64, -inf, D::kInt16)), INT16_MIN);
  EXPECT_EQ((Convert<double, int32_t>(D::kFloat64, 2147483648.0, D::kInt32)), INT32_MAX);
  EXPECT_EQ((Convert<float, int32_t>(D::kFloat32, 2147483648.0f, D::kInt32)), INT32_MIN);  // as HDF5 gives it
  EXPECT_EQ((Convert<double, int64_t>(D::kFloat64, 9223372036854775808.0, D::kInt64)), INT64_MIN);
  EXPECT_EQ((Convert<double, uint64_t>(D::kFloat64, 18446744073709551616.0, D::kUInt64)), 0u);
  EXPECT_EQ((Convert<double, uint64_t>(D::kFloat64, 9223372036854775808.0, D::kUInt64)), uint64_t{1} << 63);
  EXPECT_EQ((Convert<double, uint8_t>(D::kFloat64, -0.9, D::kUInt8)), 0);
  EXPECT_EQ((Convert<double, int16_t>(D::kFloat64, 255.5, D::kInt16)), 255);
  EXPECT_EQ((Convert<int64_t, int8_t>(D::kInt64, -300, D::kInt8)), -128);
  EXPECT_EQ((Convert<int64_t, uint16_t>(D::kInt64, -300, D::kUInt16)), 0);
  EXPECT_EQ((Convert<uint64_t, int64_t>(D::kUInt64, ~uint64_t{0}, D::kInt64)), INT64_MAX);
  EXPECT_EQ((Convert<int64_t, uint64_t>(D::kInt64, INT64_MIN, D::kUInt64)), 0u);
  EXPECT_EQ((Convert<int64_t, double>(D::kInt64, (int64_t{1} << 53) + 1, D::kFloat64)), 9007199254740992.0);
  EXPECT_TRUE(std::isinf(Convert<double, float>(D::kFloat64, 1e300, D::kFloat32)));
  EXPECT_EQ((Convert<int16_t, double>(D::kInt16, -7, D::kFloat64)), -7.0);
  EXPECT_FALSE(CanConvertNumeric(D::kComplex64, D::kFloat64));
  EXPECT_FALSE(CanConvertNumeric(D::kFloat16, D::kUInt16));
  EXPECT_TRUE(CanConvertNumeric(D::kFloat16, D::kUInt8));
  EXPECT_EQ((Convert<uint16_t, uint8_t>(D::kFloat16, 0xd808 /* -129 */, D::kUInt8)), 0);
  EXPECT_FALSE(CanConvertNumeric(D::kBool, D::kInt8));
}

TEST(H5NumericConversion, IntegersWidenExactly) {
  EXPECT_EQ(ConvertAll<int64_t>(DataType::kInt8, std::vector<int8_t>{-128, -1, 0, 127}, DataType::kInt64),
            (std::vector<int64_t>{-128, -1, 0, 127}));
  EXPECT_EQ(ConvertAll<int32_t>(DataType::kUInt16, std::vector<uint16_t>{0, 65535}, DataType::kInt32),
            (std::vector<int32_t>{0, 65535}));
}

TEST(H5NumericConversion, IntegersOutOfRangeClampToTheDestinationsLimits) {
  EXPECT_EQ(ConvertAll<int8_t>(DataType::kInt16, std::vector<int16_t>{-200, -128, 5, 127, 300}, DataType::kInt8),
            (std::vector<int8_t>{-128, -128, 5, 127, 127}));
  EXPECT_EQ(ConvertAll<uint8_t>(DataType::kInt32, std::vector<int32_t>{-1, 0, 255, 256}, DataType::kUInt8),
            (std::vector<uint8_t>{0, 0, 255, 255}));
  // Same width, other signedness: no wrap-around either way.
  EXPECT_EQ(ConvertAll<int64_t>(DataType::kUInt64, std::vector<uint64_t>{~uint64_t{0}, 5}, DataType::kInt64),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(), 5}));
  EXPECT_EQ(ConvertAll<uint64_t>(DataType::kInt8, std::vector<int8_t>{-1, 7}, DataType::kUInt64),
            (std::vector<uint64_t>{0, 7}));
  EXPECT_EQ(ConvertAll<uint16_t>(DataType::kInt16, std::vector<int16_t>{-32768, 32767}, DataType::kUInt16),
            (std::vector<uint16_t>{0, 32767}));
}

TEST(H5NumericConversion, IntegersAndFloatsIntoFloatsRoundToNearest) {
  // 2^24 + 1 is not a float32: ties to even, 2^24.
  EXPECT_EQ(ConvertAll<float>(DataType::kInt32, std::vector<int32_t>{16777217, -3}, DataType::kFloat32),
            (std::vector<float>{16777216.0f, -3.0f}));
  EXPECT_EQ(ConvertAll<double>(DataType::kUInt64, std::vector<uint64_t>{~uint64_t{0}}, DataType::kFloat64),
            (std::vector<double>{18446744073709551616.0}));
  const std::vector<float> narrowed = ConvertAll<float>(DataType::kFloat64, std::vector<double>{0.1, 1e300, -1e300},
                                                     DataType::kFloat32);
  EXPECT_EQ(narrowed[0], 0.1f);
  EXPECT_EQ(narrowed[1], std::numeric_limits<float>::infinity());
  EXPECT_EQ(narrowed[2], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(ConvertAll<double>(DataType::kFloat32, std::vector<float>{0.1f}, DataType::kFloat64),
            (std::vector<double>{static_cast<double>(0.1f)}));
  // float16: 1.0 is 0x3c00, 65520 rounds up past the largest half (65504) to +inf (0x7c00).
  EXPECT_EQ(ConvertAll<uint16_t>(DataType::kFloat64, std::vector<double>{1.0, -2.0, 65520.0}, DataType::kFloat16),
            (std::vector<uint16_t>{0x3c00, 0xc000, 0x7c00}));
  EXPECT_EQ(ConvertAll<uint16_t>(DataType::kInt32, std::vector<int32_t>{3}, DataType::kFloat16),
            (std::vector<uint16_t>{0x4200}));
  EXPECT_EQ(ConvertAll<float>(DataType::kFloat16, std::vector<uint16_t>{0x3555}, DataType::kFloat32),
            (std::vector<float>{0.333251953125f}));
}

TEST(H5NumericConversion, FloatsIntoIntegersTruncateAndClampAtTheLimits) {
  EXPECT_EQ(ConvertAll<int8_t>(DataType::kFloat64, std::vector<double>{3.9, -3.9, 1000.0, -1000.0}, DataType::kInt8),
            (std::vector<int8_t>{3, -3, 127, -128}));
  EXPECT_EQ(ConvertAll<uint8_t>(DataType::kFloat32, std::vector<float>{-0.5f, -1.0f, 255.9f, 256.0f}, DataType::kUInt8),
            (std::vector<uint8_t>{0, 0, 255, 255}));
  EXPECT_EQ(ConvertAll<int32_t>(DataType::kFloat64, std::vector<double>{3e9, -3e9, 2147483647.0}, DataType::kInt32),
            (std::vector<int32_t>{2147483647, -2147483647 - 1, 2147483647}));
  EXPECT_EQ(ConvertAll<uint64_t>(DataType::kFloat64, std::vector<double>{1e19, -1.0}, DataType::kUInt64),
            (std::vector<uint64_t>{10000000000000000000u, 0}));
  // float16 into a byte: 300 clamps.
  EXPECT_EQ(ConvertAll<uint8_t>(DataType::kFloat16, std::vector<uint16_t>{FloatToHalfBits(300.0)}, DataType::kUInt8),
            (std::vector<uint8_t>{255}));
}

}  // namespace
}  // namespace tessera::hdf5
