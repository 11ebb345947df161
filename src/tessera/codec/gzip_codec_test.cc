#include "tessera/codec/gzip_codec.h"

#include <gtest/gtest.h>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::RampBytes;
using codec_test::RandomBytes;

TEST(GzipCodecTest, RoundTripsEveryLevel) {
  for (int level = 0; level <= 9; ++level) {
    const GzipCodec codec(level);
    for (size_t n : {0, 1, 100, 65536, 300000}) {
      codec_test::ExpectRoundTrip(codec, RampBytes(n));
      codec_test::ExpectRoundTrip(codec, RandomBytes(n, n + level));
    }
  }
}

TEST(GzipCodecTest, WritesGzipFormat) {
  const GzipCodec codec(5);
  Bytes encoded;
  ASSERT_TRUE(codec.Encode(RampBytes(1000), &encoded).ok());
  ASSERT_GE(encoded.size(), 18u);
  EXPECT_EQ(encoded[0], 0x1f);
  EXPECT_EQ(encoded[1], 0x8b);
  EXPECT_EQ(encoded[2], 8);  // CM = deflate
  // ISIZE, the decoded length, ends the member.
  EXPECT_EQ(DecodeFixed32LE(encoded.data() + encoded.size() - 4), 1000u);
  EXPECT_LT(encoded.size(), 1000u);
}

TEST(GzipCodecTest, BoundHoldsForIncompressibleData) {
  for (int level : {0, 1, 9}) {
    const GzipCodec codec(level);
    for (size_t n : {0, 1, 17, 4096, 1 << 20}) {
      const Bytes data = RandomBytes(n, 11 * n + level);
      Bytes encoded;
      ASSERT_TRUE(codec.Encode(data, &encoded).ok());
      EXPECT_LE(encoded.size(), *codec.MaxEncodedSize(n)) << "level " << level << " n " << n;
      EXPECT_GT(encoded.size(), n);  // really incompressible
    }
  }
}

TEST(GzipCodecTest, DecodesPythonGzipAndZlib) {
  const GzipCodec codec(5);
  Bytes decoded;
  // gzip.compress(b"hello zarr", mtime=0)
  const Bytes gzipped = FromHex("1f8b0800000000000203cb48cdc9c957a84a2c2a02007c03ea2a0a000000");
  ASSERT_TRUE(codec.Decode(gzipped, &decoded).ok());
  EXPECT_EQ(AsString(decoded), "hello zarr");
  // zlib.compress(b"hello zarr"): zlib-wrapped streams are accepted too.
  ASSERT_TRUE(codec.Decode(FromHex("789ccb48cdc9c957a84a2c2a0200159603f4"), &decoded).ok());
  EXPECT_EQ(AsString(decoded), "hello zarr");
}

TEST(GzipCodecTest, DecodesNumcodecsGzip) {
  // numcodecs.GZip(level=5).encode(np.arange(64, dtype="<u2"))
  const Bytes encoded = FromHex(
      "1f8b08004991036b00ff05c1830102000000b065dbb66dd7ff5fb5111014121611151397909492969195935750"
      "545256515553d7d0d4d2d6d1d5d33730343236313533b7b0b4b2b6b1b5b37770747276717573f7f0f4f2f6f1f5"
      "f307df698d4280000000");
  const GzipCodec codec(1);
  Bytes decoded;
  ASSERT_TRUE(codec.Decode(encoded, &decoded).ok());
  ASSERT_EQ(decoded.size(), 128u);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(decoded[2 * i], i);
    EXPECT_EQ(decoded[2 * i + 1], 0);
  }
}

TEST(GzipCodecTest, DecodesConcatenatedMembers) {
  const GzipCodec codec(6);
  const Bytes first = RampBytes(5000), second = RandomBytes(3000, 1);
  Bytes a, b;
  ASSERT_TRUE(codec.Encode(first, &a).ok());
  ASSERT_TRUE(codec.Encode(second, &b).ok());
  a.insert(a.end(), b.begin(), b.end());
  Bytes decoded;
  ASSERT_TRUE(codec.Decode(a, &decoded).ok());
  Bytes expected = first;
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_EQ(decoded, expected);
}

TEST(GzipCodecTest, DecodeGrowsPastAMisleadingTrailer) {
  // Two members: the trailing ISIZE describes only the second, so the first guess is too small.
  const GzipCodec codec(1);
  const Bytes big = RampBytes(1 << 20), small = RampBytes(10);
  Bytes a, b, decoded;
  ASSERT_TRUE(codec.Encode(big, &a).ok());
  ASSERT_TRUE(codec.Encode(small, &b).ok());
  a.insert(a.end(), b.begin(), b.end());
  ASSERT_TRUE(codec.Decode(a, &decoded).ok());
  EXPECT_EQ(decoded.size(), big.size() + small.size());
}

TEST(GzipCodecTest, CorruptInputIsCorruptData) {
  const GzipCodec codec(5);
  Bytes encoded, decoded;
  ASSERT_TRUE(codec.Encode(RampBytes(2000), &encoded).ok());
  codec_test::ExpectDamageIsCorruptData(codec, encoded);
  const Status garbage = codec.Decode(AsView("this is not gzip data"), &decoded);
  // zlib's own text ("incorrect header check") is kept.
  EXPECT_ERROR(garbage, ErrorKind::kCorruptData, "gzip codec", "header");
  Bytes trailing = encoded;
  trailing.push_back(0x42);
  EXPECT_ERROR(codec.Decode(trailing, &decoded), ErrorKind::kCorruptData, "gzip codec");
  EXPECT_ERROR(codec.Decode(ByteView(encoded).first(encoded.size() / 2), &decoded), ErrorKind::kCorruptData,
               "gzip codec", "truncated");
}

TEST(GzipCodecTest, FactoryAndJson) {
  auto defaulted = MakeGzipCodec(nullptr);
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ((*defaulted)->ToJson(),
            nlohmann::json({{"name", "gzip"}, {"configuration", {{"level", 5}}}}));
  auto codec = MakeGzipCodec({{"level", 1}});
  ASSERT_TRUE(codec.ok());
  EXPECT_EQ((*codec)->name(), "gzip");
  EXPECT_EQ((*codec)->ToJson(),
            nlohmann::json({{"name", "gzip"}, {"configuration", {{"level", 1}}}}));
  // Each error names the codec, the field and the value it got.
  for (const nlohmann::json& config :
       {nlohmann::json({{"level", 10}}), nlohmann::json({{"level", -1}}),
        nlohmann::json({{"level", "5"}}), nlohmann::json({{"level", 5.5}})}) {
    EXPECT_ERROR(MakeGzipCodec(config), ErrorKind::kInvalidArgument, "gzip codec", "\"level\"", "[0, 9]",
                 config["level"].dump());
  }
  EXPECT_ERROR(MakeGzipCodec({{"lvl", 5}}), ErrorKind::kInvalidArgument, "gzip codec", "unknown", "\"lvl\"");
}

}  // namespace
}  // namespace tessera
