#include "tessera/codec/crc32c_codec.h"

#include <gtest/gtest.h>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::RandomBytes;

TEST(Crc32cCodecTest, AppendsLittleEndianChecksum) {
  const Crc32cCodec codec;
  Bytes encoded;
  ASSERT_TRUE(codec.Encode(AsView("123456789"), &encoded).ok());
  // 0xE3069283 little-endian after the payload.
  EXPECT_EQ(encoded, FromHex("313233343536373839"
                             "839206e3"));
  Bytes decoded;
  ASSERT_TRUE(codec.Decode(encoded, &decoded).ok());
  EXPECT_EQ(AsString(decoded), "123456789");
}

TEST(Crc32cCodecTest, EmptyInput) {
  const Crc32cCodec codec;
  Bytes encoded, decoded = {1, 2, 3};
  ASSERT_TRUE(codec.Encode(ByteView(), &encoded).ok());
  EXPECT_EQ(encoded, FromHex("00000000"));
  ASSERT_TRUE(codec.Decode(encoded, &decoded).ok());
  EXPECT_TRUE(decoded.empty());
}

TEST(Crc32cCodecTest, RoundTripAndSizes) {
  const Crc32cCodec codec;
  for (size_t n : {1, 3, 4, 5, 100, 4097}) {
    const Bytes data = RandomBytes(n, n);
    Bytes encoded, decoded;
    ASSERT_TRUE(codec.Encode(data, &encoded).ok());
    EXPECT_EQ(encoded.size(), n + 4);
    EXPECT_EQ(codec.FixedEncodedSize(n), n + 4);
    EXPECT_EQ(codec.MaxEncodedSize(n), n + 4);
    ASSERT_TRUE(codec.Decode(encoded, &decoded).ok());
    EXPECT_EQ(decoded, data);
  }
}

TEST(Crc32cCodecTest, MismatchIsCorruptDataWithBothValues) {
  const Crc32cCodec codec;
  Bytes encoded;
  ASSERT_TRUE(codec.Encode(AsView("123456789"), &encoded).ok());
  encoded[0] ^= 1;
  Bytes decoded;
  const Status st = codec.Decode(encoded, &decoded);
  EXPECT_ERROR(st, ErrorKind::kCorruptData, "stored 0xe3069283");
  const std::string expected_prefix = "crc32c checksum mismatch (stored 0xe3069283, computed 0x";
  EXPECT_EQ(st.message().substr(0, expected_prefix.size()), expected_prefix) << st.message();
}

TEST(Crc32cCodecTest, ShortOrFlippedInputIsCorruptData) {
  const Crc32cCodec codec;
  Bytes decoded;
  for (size_t n = 0; n < 4; ++n) {
    EXPECT_ERROR(codec.Decode(Bytes(n, 0), &decoded), ErrorKind::kCorruptData, "crc32c codec",
                 "input is " + std::to_string(n) + " bytes", "4-byte checksum");
  }
  Bytes encoded;
  ASSERT_TRUE(codec.Encode(RandomBytes(50, 9), &encoded).ok());
  for (size_t i = 0; i < encoded.size(); ++i) {
    Bytes bad = encoded;
    bad[i] ^= 0x40;
    EXPECT_ERROR(codec.Decode(bad, &decoded), ErrorKind::kCorruptData, "crc32c checksum mismatch") << i;
  }
  EXPECT_ERROR(codec.Decode(ByteView(encoded).first(encoded.size() - 1), &decoded), ErrorKind::kCorruptData,
               "crc32c checksum mismatch");
}

TEST(Crc32cCodecTest, FactoryAndJson) {
  auto codec = MakeCrc32cCodec(nullptr);
  ASSERT_TRUE(codec.ok());
  EXPECT_EQ((*codec)->name(), "crc32c");
  EXPECT_EQ((*codec)->ToJson(), nlohmann::json({{"name", "crc32c"}}));
  EXPECT_TRUE(MakeCrc32cCodec(nlohmann::json::object()).ok());
  auto bad = MakeCrc32cCodec({{"level", 1}});
  EXPECT_ERROR(bad, ErrorKind::kInvalidArgument, "crc32c codec", "unknown", "\"level\"");
}

}  // namespace
}  // namespace tessera
