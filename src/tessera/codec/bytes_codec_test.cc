#include "tessera/codec/bytes_codec.h"

#include <gtest/gtest.h>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::MakeSpec;
using codec_test::RandomBytes;

// The bytes of a host-order object.
template <typename T>
ByteView ViewOf(const T& value) {
  return ByteView(reinterpret_cast<const uint8_t*>(&value), sizeof(T));
}

TEST(BytesCodecTest, BigEndianUInt16HandChecked) {
  const BytesCodec codec(Endian::kBig);
  const ChunkSpec spec = MakeSpec(DataType::kUInt16, {2});
  const uint16_t values[] = {1, 2};
  const ByteView array = ViewOf(values);
  Bytes encoded;
  ASSERT_TRUE(codec.Encode(spec, array, &encoded).ok());
  EXPECT_EQ(encoded, FromHex("00010002"));
  Bytes decoded;
  ASSERT_TRUE(codec.Decode(spec, encoded, &decoded).ok());
  EXPECT_EQ(decoded, Bytes(array.begin(), array.end()));
}

TEST(BytesCodecTest, LittleEndianIsIdentity) {
  const BytesCodec codec(Endian::kLittle);
  const ChunkSpec spec = MakeSpec(DataType::kInt32, {2});
  const int32_t values[] = {1, -2};
  Bytes encoded;
  ASSERT_TRUE(codec.Encode(spec, ViewOf(values), &encoded).ok());
  EXPECT_EQ(encoded, FromHex("01000000feffffff"));
}

TEST(BytesCodecTest, BigEndianComplexSwapsEachComponent) {
  const BytesCodec codec(Endian::kBig);
  const ChunkSpec spec = MakeSpec(DataType::kComplex64, {1});
  const float values[] = {1.0f, -2.0f};  // 0x3f800000, 0xc0000000
  Bytes encoded;
  ASSERT_TRUE(codec.Encode(spec, ViewOf(values), &encoded).ok());
  EXPECT_EQ(encoded, FromHex("3f800000c0000000"));
}

TEST(BytesCodecTest, BigEndianFloat64AndInt64HandChecked) {
  const BytesCodec codec(Endian::kBig);
  const double d = 1.0;  // 0x3ff0000000000000
  Bytes encoded;
  ASSERT_TRUE(codec.Encode(MakeSpec(DataType::kFloat64, {1}), ViewOf(d), &encoded).ok());
  EXPECT_EQ(encoded, FromHex("3ff0000000000000"));
  const int64_t i = 0x0102030405060708;
  ASSERT_TRUE(codec.Encode(MakeSpec(DataType::kInt64, {1}), ViewOf(i), &encoded).ok());
  EXPECT_EQ(encoded, FromHex("0102030405060708"));
}

TEST(BytesCodecTest, RoundTripsAllTypesAndShapes) {
  uint64_t seed = 1;
  for (Endian endian : {Endian::kLittle, Endian::kBig}) {
    const BytesCodec codec(endian);
    for (DataType dtype : codec_test::AllDataTypes()) {
      for (const auto& shape : codec_test::TestShapes()) {
        const ChunkSpec spec = MakeSpec(dtype, shape);
        const Bytes array = RandomBytes(spec.NumBytes(), seed++);
        Bytes encoded, decoded;
        ASSERT_TRUE(codec.Encode(spec, array, &encoded).ok());
        ASSERT_EQ(encoded.size(), spec.NumBytes());
        EXPECT_EQ(codec.FixedEncodedSize(spec), spec.NumBytes());
        EXPECT_EQ(codec.MaxEncodedSize(spec), spec.NumBytes());
        if (endian == Endian::kBig && ComponentSize(dtype) > 1 && !array.empty()) {
          EXPECT_NE(encoded, array) << DataTypeName(dtype);
        }
        ASSERT_TRUE(codec.Decode(spec, encoded, &decoded).ok());
        EXPECT_EQ(decoded, array) << DataTypeName(dtype);
      }
    }
  }
}

TEST(BytesCodecTest, WrongSizeIsRejected) {
  const BytesCodec codec(Endian::kLittle);
  const ChunkSpec spec = MakeSpec(DataType::kUInt32, {3});
  Bytes out;
  EXPECT_ERROR(codec.Encode(spec, Bytes(11), &out), ErrorKind::kInvalidArgument, "bytes codec", "11 bytes",
               "needs 12");
  EXPECT_ERROR(codec.Decode(spec, Bytes(11), &out), ErrorKind::kCorruptData, "bytes codec", "11 bytes", "expected 12");
  EXPECT_ERROR(codec.Decode(spec, Bytes(13), &out), ErrorKind::kCorruptData, "bytes codec", "13 bytes", "expected 12");
}

TEST(BytesCodecTest, FactoryAndJsonRoundTrip) {
  const ChunkSpec u16 = MakeSpec(DataType::kUInt16, {4});
  const ChunkSpec u8 = MakeSpec(DataType::kUInt8, {4});
  for (const char* endian : {"little", "big"}) {
    const nlohmann::json config = {{"endian", endian}};
    auto codec = MakeBytesCodec(config, u16);
    ASSERT_TRUE(codec.ok()) << codec.status().ToString();
    const nlohmann::json expected = {{"name", "bytes"}, {"configuration", config}};
    EXPECT_EQ((*codec)->ToJson(), expected);
    EXPECT_EQ((*codec)->name(), "bytes");
  }
  // 1-byte types may omit endian; the codec then writes no configuration.
  auto plain = MakeBytesCodec(nullptr, u8);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->ToJson(), nlohmann::json({{"name", "bytes"}}));
  // Multi-byte types without endian read as little (zarr-python) and write it explicitly.
  auto defaulted = MakeBytesCodec(nlohmann::json::object(), u16);
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ((*defaulted)->ToJson()["configuration"]["endian"], "little");
}

TEST(BytesCodecTest, FactoryRejectsBadConfig) {
  const ChunkSpec spec = MakeSpec(DataType::kUInt16, {4});
  EXPECT_ERROR(MakeBytesCodec({{"endian", "middle"}}, spec), ErrorKind::kInvalidArgument, "bytes codec",
               "\"endian\"", "\"little\" or \"big\"", "\"middle\"");
  EXPECT_ERROR(MakeBytesCodec({{"endian", 1}}, spec), ErrorKind::kInvalidArgument, "bytes codec", "\"endian\"",
               "got 1");
  EXPECT_ERROR(MakeBytesCodec({{"endian", "little"}, {"extra", 1}}, spec), ErrorKind::kInvalidArgument,
               "bytes codec", "unknown", "\"extra\"");
  EXPECT_ERROR(MakeBytesCodec(nlohmann::json::array(), spec), ErrorKind::kInvalidArgument, "bytes codec",
               "configuration must be an object", "[]");
}

TEST(BytesCodecTest, SwapComponentBytes) {
  Bytes data = FromHex("0102030405060708");
  SwapComponentBytes(data, 1);
  EXPECT_EQ(data, FromHex("0102030405060708"));
  SwapComponentBytes(data, 2);
  EXPECT_EQ(data, FromHex("0201040306050807"));
  data = FromHex("0102030405060708");
  SwapComponentBytes(data, 4);
  EXPECT_EQ(data, FromHex("0403020108070605"));
  data = FromHex("0102030405060708");
  SwapComponentBytes(data, 8);
  EXPECT_EQ(data, FromHex("0807060504030201"));
}

}  // namespace
}  // namespace tessera
