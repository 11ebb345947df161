#include "tessera/codec/zlib_codec.h"

#include <gtest/gtest.h>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::RampBytes;
using codec_test::RandomBytes;

TEST(ZlibCodecTest, RoundTripsAndWritesZlib) {
  for (int level : {0, 1, 6, 9}) {
    const ZlibCodec codec(level);
    for (size_t n : {0, 1, 100, 65536, 300000}) {
      codec_test::ExpectRoundTrip(codec, RampBytes(n));
      codec_test::ExpectRoundTrip(codec, RandomBytes(n, n + level));
    }
  }
  Bytes encoded;
  ASSERT_TRUE(ZlibCodec(5).Encode(RampBytes(1000), &encoded).ok());
  EXPECT_EQ(encoded[0], 0x78);  // CMF: deflate, 32 KiB window (RFC 1950)
  EXPECT_EQ(((encoded[0] << 8) | encoded[1]) % 31, 0);
}

TEST(ZlibCodecTest, DecodesNumcodecsZlib) {
  // numcodecs.Zlib(level=1).encode(np.arange(64, dtype="<u2"))
  const Bytes encoded = FromHex(
      "780105c1830102000000b065dbb66dd7ff5fb5111014121611151397909492969195935750545256515553d7d0d4d2d6d1d5d337303432"
      "36313533b7b0b4b2b6b1b5b37770747276717573f7f0f4f2f6f1f5f30755cf07e1");
  Bytes decoded;
  ASSERT_TRUE(ZlibCodec(1).Decode(encoded, &decoded).ok());
  ASSERT_EQ(decoded.size(), 128u);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(decoded[2 * i], i);
}

TEST(ZlibCodecTest, CorruptInputIsCorruptData) {
  const ZlibCodec codec(1);
  Bytes encoded;
  ASSERT_TRUE(codec.Encode(RampBytes(2000), &encoded).ok());
  codec_test::ExpectDamageIsCorruptData(codec, encoded);
}

TEST(ZlibCodecTest, FactoryAndJson) {
  auto defaulted = MakeZlibCodec(nlohmann::json::object());
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ((*defaulted)->ToJson(), nlohmann::json({{"name", "numcodecs.zlib"}, {"configuration", {{"level", 1}}}}));
  auto zlib_default = MakeZlibCodec({{"level", -1}});
  ASSERT_TRUE(zlib_default.ok());
  EXPECT_EQ((*zlib_default)->compression_level(), 6);
  EXPECT_ERROR(MakeZlibCodec({{"level", 10}}), ErrorKind::kInvalidArgument, "numcodecs.zlib codec", "\"level\"", "got 10");
}

}  // namespace
}  // namespace tessera
