#include "tessera/codec/quantize_codec.h"

#include <gtest/gtest.h>

#include <cstring>

#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::MakeSpec;

const double kValues[] = {0.123456, -7.77777, 1234.5678, 1e-5, 3.0, -0.5, 2.5e6};

Bytes Doubles(size_t n) {
  Bytes out(n * 8);
  std::memcpy(out.data(), kValues, out.size());
  return out;
}

Bytes Floats(size_t n) {
  Bytes out(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const float f = static_cast<float>(kValues[i]);
    std::memcpy(out.data() + 4 * i, &f, 4);
  }
  return out;
}

void ExpectEncodes(const nlohmann::json& config, DataType dtype, const Bytes& input, const Bytes& expected) {
  const ChunkSpec spec = MakeSpec(dtype, {static_cast<int64_t>(input.size() / ItemSize(dtype))});
  auto codec = MakeQuantizeCodec(config, spec);
  ASSERT_TRUE(codec.ok()) << codec.status().ToString();
  Bytes encoded, decoded, again;
  ASSERT_TRUE((*codec)->Encode(spec, input, &encoded).ok());
  EXPECT_EQ(encoded, expected) << config.dump();
  // Decoding converts back; quantizing what decoded changes nothing more.
  ASSERT_TRUE((*codec)->Decode(spec, encoded, &decoded).ok());
  ASSERT_EQ(decoded.size(), input.size());
  ASSERT_TRUE((*codec)->Encode(spec, decoded, &again).ok());
  EXPECT_EQ(again, encoded);
}

TEST(QuantizeCodecTest, MatchesNumcodecs) {
  // numcodecs.Quantize(digits=3, dtype="<f8", astype="<f4").encode(kValues)
  ExpectEncodes({{"digits", 3}, {"dtype", "<f8"}, {"astype", "<f4"}}, DataType::kFloat64, Doubles(7),
                FromHex("0000fc3d00e0f8c028529a440000000000004040000000bf8096184a"));
  // numcodecs.Quantize(digits=1, dtype="<f4").encode(kValues as float32): float32 arithmetic
  ExpectEncodes({{"digits", 1}, {"dtype", "<f4"}}, DataType::kFloat32, Floats(7), FromHex("0000003e0000f8c000529a440000000000004040000000bf8096184a"));
  // numcodecs.Quantize(digits=2, dtype="<f8", astype="<f2").encode(kValues[:6])
  ExpectEncodes({{"digits", 2}, {"dtype", "<f8"}, {"astype", "<f2"}}, DataType::kFloat64, Doubles(6),
                FromHex("0030c8c7d3640000004200b8"));
}

TEST(QuantizeCodecTest, FactoryChecks) {
  const ChunkSpec spec = MakeSpec(DataType::kFloat64, {4});
  EXPECT_ERROR(MakeQuantizeCodec({{"dtype", "<f8"}}, spec), ErrorKind::kInvalidArgument, "numcodecs.quantize codec", "\"digits\" is required");
  EXPECT_ERROR(MakeQuantizeCodec({{"digits", 2}, {"dtype", "<f4"}}, spec), ErrorKind::kInvalidArgument, "numcodecs.quantize codec", "<f4", "float64");
  EXPECT_ERROR(MakeQuantizeCodec({{"digits", 2}, {"dtype", "<i4"}}, MakeSpec(DataType::kInt32, {4})), ErrorKind::kUnsupported,
               "numcodecs.quantize codec", "\"dtype\" <i4");
  EXPECT_ERROR(MakeQuantizeCodec({{"digits", 2}, {"dtype", "<f8"}, {"astype", "<i2"}}, spec), ErrorKind::kUnsupported,
               "numcodecs.quantize codec", "\"astype\" <i2");
  auto codec = MakeQuantizeCodec({{"digits", 2}, {"dtype", "float64"}}, spec);
  ASSERT_TRUE(codec.ok());
  EXPECT_EQ((*codec)->ToJson()["configuration"], nlohmann::json({{"digits", 2}, {"dtype", "<f8"}, {"astype", "<f8"}}));
}

}  // namespace
}  // namespace tessera
