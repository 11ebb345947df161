#include "tessera/codec/bz2_codec.h"

#include <gtest/gtest.h>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::RampBytes;
using codec_test::RandomBytes;

TEST(Bz2CodecTest, RoundTripsAndBoundHolds) {
  for (int level : {1, 5, 9}) {
    const Bz2Codec codec(level);
    for (size_t n : {0, 1, 100, 65536, 300000}) {
      codec_test::ExpectRoundTrip(codec, RampBytes(n));
      const Bytes random = RandomBytes(n, n + level);
      codec_test::ExpectRoundTrip(codec, random);
      Bytes encoded;
      ASSERT_TRUE(codec.Encode(random, &encoded).ok());
      EXPECT_LE(encoded.size(), *codec.MaxEncodedSize(n)) << "level " << level << " n " << n;
    }
  }
}

TEST(Bz2CodecTest, DecodesNumcodecsBz2) {
  // numcodecs.BZ2(level=9).encode(np.arange(64, dtype="<u2"))
  const Bytes encoded = FromHex(
      "425a68393141592653595dd20d17000000f8007fffffffffffffffa0005467a81301180004d346000119300e6000980009800000001e"
      "01f0108310518720928b33f1a71e822926a2ab2ec32d37fdc75e7e08628e49669e8a6aaecb6ebf0c72fbfb3d3febb6fc73c00000742ee4"
      "8a70a120bba41a2e");
  Bytes decoded;
  ASSERT_TRUE(Bz2Codec(1).Decode(encoded, &decoded).ok());
  ASSERT_EQ(decoded.size(), 128u);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(decoded[2 * i], i);
    EXPECT_EQ(decoded[2 * i + 1], 0);
  }
}

TEST(Bz2CodecTest, DecodesConcatenatedStreams) {
  const Bz2Codec codec(3);
  Bytes a, b, decoded;
  ASSERT_TRUE(codec.Encode(RampBytes(5000), &a).ok());
  ASSERT_TRUE(codec.Encode(RandomBytes(3000, 2), &b).ok());
  a.insert(a.end(), b.begin(), b.end());
  ASSERT_TRUE(codec.Decode(a, &decoded).ok());
  Bytes expected = RampBytes(5000);
  const Bytes second = RandomBytes(3000, 2);
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_EQ(decoded, expected);
}

TEST(Bz2CodecTest, CorruptInputIsCorruptData) {
  const Bz2Codec codec(9);
  Bytes encoded, decoded;
  ASSERT_TRUE(codec.Encode(RandomBytes(1500, 3), &encoded).ok());
  codec_test::ExpectDamageIsCorruptData(codec, encoded);
  EXPECT_ERROR(codec.Decode(AsView("this is not bzip2"), &decoded), ErrorKind::kCorruptData, "numcodecs.bz2", "BZh");
  EXPECT_ERROR(codec.Decode(ByteView(encoded).first(encoded.size() / 2), &decoded), ErrorKind::kCorruptData,
               "numcodecs.bz2", "truncated");
  EXPECT_ERROR(codec.Decode(ByteView(), &decoded), ErrorKind::kCorruptData, "numcodecs.bz2", "empty");
}

TEST(Bz2CodecTest, FactoryAndJson) {
  auto defaulted = MakeBz2Codec(nlohmann::json::object());
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ((*defaulted)->ToJson(), nlohmann::json({{"name", "numcodecs.bz2"}, {"configuration", {{"level", 1}}}}));
  auto nine = MakeBz2Codec({{"level", 9}});
  ASSERT_TRUE(nine.ok());
  EXPECT_EQ((*nine)->compression_level(), 9);
  EXPECT_ERROR(MakeBz2Codec({{"level", 0}}), ErrorKind::kInvalidArgument, "numcodecs.bz2 codec", "\"level\"", "[1, 9]");
  EXPECT_ERROR(MakeBz2Codec({{"blocksize", 9}}), ErrorKind::kInvalidArgument, "numcodecs.bz2 codec", "unknown", "\"blocksize\"");
}

}  // namespace
}  // namespace tessera
