#include "tessera/codec/bitround_codec.h"

#include <gtest/gtest.h>

#include <cstring>

#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::MakeSpec;

TEST(BitRoundCodecTest, MatchesNumcodecs) {
  // numcodecs.BitRound(keepbits=3).encode(np.array([1.1, -2.7, 3.14159, 1e10, nan, inf, 0.0], "<f8"))
  const double values[] = {1.1, -2.7, 3.14159, 1e10, __builtin_nan(""), __builtin_inf(), 0.0};
  Bytes input(sizeof(values));
  std::memcpy(input.data(), values, sizeof(values));
  const ChunkSpec spec = MakeSpec(DataType::kFloat64, {7});
  Result<std::shared_ptr<const ArrayToArrayCodec>> codec = MakeBitRoundCodec({{"keepbits", 3}}, spec);
  ASSERT_TRUE(codec.ok()) << codec.status().ToString();
  Bytes encoded, decoded;
  ASSERT_TRUE((*codec)->Encode(spec, input, &encoded).ok());
  EXPECT_EQ(encoded, FromHex("000000000000f23f00000000000006c00000000000000a400000000000000242000000000000f87f000000000000f07f0000000000000000"));
  ASSERT_TRUE((*codec)->Decode(spec, encoded, &decoded).ok());
  EXPECT_EQ(decoded, encoded);  // decoding is the identity
}

TEST(BitRoundCodecTest, AllBitsKeptIsTheIdentityAndFactoryChecks) {
  const ChunkSpec spec = MakeSpec(DataType::kFloat32, {64});
  const Bytes input = codec_test::RandomBytes(spec.NumBytes(), 9);
  auto codec = MakeBitRoundCodec({{"keepbits", 23}}, spec);
  ASSERT_TRUE(codec.ok());
  Bytes encoded;
  ASSERT_TRUE((*codec)->Encode(spec, input, &encoded).ok());
  EXPECT_EQ(encoded, input);
  EXPECT_EQ((*codec)->ToJson(), nlohmann::json({{"name", "numcodecs.bitround"}, {"configuration", {{"keepbits", 23}}}}));
  EXPECT_ERROR(MakeBitRoundCodec({{"keepbits", 24}}, spec), ErrorKind::kInvalidArgument, "numcodecs.bitround codec", "\"keepbits\"", "[0, 23]");
  EXPECT_ERROR(MakeBitRoundCodec(nlohmann::json::object(), spec), ErrorKind::kInvalidArgument, "numcodecs.bitround codec", "\"keepbits\" is required");
  EXPECT_ERROR(MakeBitRoundCodec({{"keepbits", 3}}, MakeSpec(DataType::kInt32, {4})), ErrorKind::kInvalidArgument,
               "numcodecs.bitround codec", "int32");
}

}  // namespace
}  // namespace tessera
