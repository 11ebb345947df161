#include "tessera/codec/checksum32_codec.h"

#include <gtest/gtest.h>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::RampBytes;
using codec_test::RandomBytes;

Bytes Encoded(const BytesToBytesCodec& codec, const std::string& text) {
  Bytes out;
  EXPECT_TRUE(codec.Encode(AsView(text), &out).ok());
  return out;
}

TEST(Checksum32CodecTest, MatchesNumcodecs) {
  // numcodecs.<Codec>().encode(b"hello zarr") for each codec.
  EXPECT_EQ(Encoded(Checksum32Codec(Checksum32Kind::kCrc32, true), "hello zarr"), FromHex("7c03ea2a68656c6c6f207a617272"));
  EXPECT_EQ(Encoded(Checksum32Codec(Checksum32Kind::kAdler32, true), "hello zarr"), FromHex("f403961568656c6c6f207a617272"));
  EXPECT_EQ(Encoded(Checksum32Codec(Checksum32Kind::kFletcher32, false), "hello zarr"), FromHex("68656c6c6f207a617272c6304370"));
  EXPECT_EQ(Encoded(Checksum32Codec(Checksum32Kind::kCrc32c, false), "hello zarr"), FromHex("68656c6c6f207a617272ba65a06e"));
  // numcodecs.CRC32(location="end")
  EXPECT_EQ(Encoded(Checksum32Codec(Checksum32Kind::kCrc32, false), "hello zarr"), FromHex("68656c6c6f207a6172727c03ea2a"));
  // numcodecs.Fletcher32() over bytes(range(256)) * 20 + b"x": many 360-word folds and an odd byte.
  Bytes long_input;
  for (int r = 0; r < 20; ++r)
    for (int i = 0; i < 256; ++i) long_input.push_back(static_cast<uint8_t>(i));
  long_input.push_back('x');
  Bytes encoded;
  ASSERT_TRUE(Checksum32Codec(Checksum32Kind::kFletcher32, false).Encode(long_input, &encoded).ok());
  EXPECT_EQ(Bytes(encoded.end() - 4, encoded.end()), FromHex("fb7c7dd2"));
}

TEST(Checksum32CodecTest, RoundTripsAndRefusesDamage) {
  for (Checksum32Kind kind : {Checksum32Kind::kCrc32, Checksum32Kind::kAdler32, Checksum32Kind::kCrc32c, Checksum32Kind::kFletcher32}) {
    for (bool at_start : {true, false}) {
      const Checksum32Codec codec(kind, at_start);
      for (size_t n : {0, 1, 2, 3, 719, 720, 721, 100000}) {
        codec_test::ExpectRoundTrip(codec, RandomBytes(n, n));
        EXPECT_EQ(codec.FixedEncodedSize(n), n + 4);
      }
      Bytes encoded, decoded;
      ASSERT_TRUE(codec.Encode(RandomBytes(300, 7), &encoded).ok());
      codec_test::ExpectDamageIsCorruptData(codec, encoded);
      encoded[at_start ? 0 : encoded.size() - 1] ^= 1;
      EXPECT_ERROR(codec.Decode(encoded, &decoded), ErrorKind::kCorruptData, std::string(codec.name()), "mismatch", "stored");
      EXPECT_ERROR(codec.Decode(FromHex("0102"), &decoded), ErrorKind::kCorruptData, std::string(codec.name()), "shorter");
    }
  }
}

TEST(Checksum32CodecTest, FactoryDefaultsAndJson) {
  auto crc32 = MakeChecksum32Codec(Checksum32Kind::kCrc32, nlohmann::json::object());
  ASSERT_TRUE(crc32.ok());
  EXPECT_EQ((*crc32)->ToJson(), nlohmann::json({{"name", "numcodecs.crc32"}, {"configuration", {{"location", "start"}}}}));
  auto crc32c = MakeChecksum32Codec(Checksum32Kind::kCrc32c, nullptr);
  ASSERT_TRUE(crc32c.ok());
  EXPECT_EQ((*crc32c)->ToJson()["configuration"]["location"], "end");
  auto adler_end = MakeChecksum32Codec(Checksum32Kind::kAdler32, {{"location", "end"}});
  ASSERT_TRUE(adler_end.ok());
  EXPECT_EQ((*adler_end)->ToJson()["configuration"]["location"], "end");
  auto fletcher = MakeChecksum32Codec(Checksum32Kind::kFletcher32, nlohmann::json::object());
  ASSERT_TRUE(fletcher.ok());
  EXPECT_EQ((*fletcher)->ToJson(), nlohmann::json({{"name", "numcodecs.fletcher32"}, {"configuration", nlohmann::json::object()}}));
  EXPECT_ERROR(MakeChecksum32Codec(Checksum32Kind::kCrc32, {{"location", "middle"}}), ErrorKind::kInvalidArgument,
               "numcodecs.crc32 codec", "\"location\"", "middle");
  EXPECT_ERROR(MakeChecksum32Codec(Checksum32Kind::kFletcher32, {{"location", "end"}}), ErrorKind::kInvalidArgument,
               "numcodecs.fletcher32 codec", "unknown", "\"location\"");
}

}  // namespace
}  // namespace tessera
