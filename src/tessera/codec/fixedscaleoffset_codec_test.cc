#include "tessera/codec/fixedscaleoffset_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::MakeSpec;

const double kValues[] = {1.2345, -3.3, 250.0, 0.05, 17.77, -0.125};

struct Coded {
  Bytes encoded, decoded;
};

Coded EncodeAndDecode(const nlohmann::json& config, DataType dtype, const Bytes& input) {
  const ChunkSpec spec = MakeSpec(dtype, {static_cast<int64_t>(input.size() / ItemSize(dtype))});
  auto codec = MakeFixedScaleOffsetCodec(config, spec);
  EXPECT_TRUE(codec.ok()) << codec.status().ToString();
  Coded c;
  if (!codec.ok()) return c;
  EXPECT_TRUE((*codec)->Encode(spec, input, &c.encoded).ok());
  EXPECT_TRUE((*codec)->Decode(spec, c.encoded, &c.decoded).ok());
  return c;
}

TEST(FixedScaleOffsetCodecTest, MatchesNumcodecs) {
  // FixedScaleOffset(offset=1, scale=10, dtype="<f8", astype="<u1") over abs(kValues): 250 -> 2490
  // wraps to 186 and 0.05 -> round(-9.5) = -10 wraps to 246, as numpy's conversions do.
  Bytes doubles(sizeof(kValues));
  for (size_t i = 0; i < 6; ++i) {
    const double v = std::fabs(kValues[i]);
    std::memcpy(doubles.data() + 8 * i, &v, 8);
  }
  Coded u1 = EncodeAndDecode({{"offset", 1}, {"scale", 10}, {"dtype", "<f8"}, {"astype", "<u1"}}, DataType::kFloat64, doubles);
  EXPECT_EQ(u1.encoded, FromHex("0217baf6a8f7"));
  EXPECT_EQ(u1.decoded, FromHex("333333333333f33f6666666666660a409a999999999933409a99999999993940cdcccccccccc31403333333333b33940"));
  // FixedScaleOffset(offset=-2.5, scale=100, dtype="<f4", astype="<i4") over kValues as float32.
  Bytes floats(6 * 4);
  for (size_t i = 0; i < 6; ++i) {
    const float f = static_cast<float>(kValues[i]);
    std::memcpy(floats.data() + 4 * i, &f, 4);
  }
  Coded i4 = EncodeAndDecode({{"offset", -2.5}, {"scale", 100}, {"dtype", "<f4"}, {"astype", "<i4"}}, DataType::kFloat32, floats);
  EXPECT_EQ(i4.encoded, FromHex("75010000b0ffffffa2620000ff000000eb070000ee000000"));
  EXPECT_EQ(i4.decoded, FromHex("a4709d3f333353c000007a43cdcc4c3df6288e418fc2f5bd"));
}

TEST(FixedScaleOffsetCodecTest, FactoryChecks) {
  const ChunkSpec spec = MakeSpec(DataType::kFloat64, {4});
  EXPECT_ERROR(MakeFixedScaleOffsetCodec({{"scale", 10}, {"dtype", "<f8"}}, spec), ErrorKind::kInvalidArgument,
               "numcodecs.fixedscaleoffset codec", "\"offset\" is required");
  EXPECT_ERROR(MakeFixedScaleOffsetCodec({{"offset", 0}, {"scale", 0}, {"dtype", "<f8"}}, spec), ErrorKind::kInvalidArgument,
               "numcodecs.fixedscaleoffset codec", "\"scale\"", "must not be 0");
  EXPECT_ERROR(MakeFixedScaleOffsetCodec({{"offset", 0}, {"scale", 2}, {"dtype", "<i4"}}, MakeSpec(DataType::kInt32, {4})),
               ErrorKind::kUnsupported, "numcodecs.fixedscaleoffset codec", "\"dtype\" <i4");
  EXPECT_ERROR(MakeFixedScaleOffsetCodec({{"offset", 0}, {"scale", 2}, {"dtype", "<f4"}}, spec), ErrorKind::kInvalidArgument,
               "numcodecs.fixedscaleoffset codec", "<f4", "float64");
  const nlohmann::json config = {{"offset", 0.5}, {"scale", 4}, {"dtype", "<f8"}, {"astype", "<i2"}};
  auto codec = MakeFixedScaleOffsetCodec(config, spec);
  ASSERT_TRUE(codec.ok());
  EXPECT_EQ((*codec)->ToJson()["configuration"], config);
  EXPECT_EQ((*codec)->EncodedSpec(spec)->dtype, DataType::kInt16);
}

}  // namespace
}  // namespace tessera
