#include "tessera/codec/delta_codec.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::MakeSpec;
using codec_test::RandomBytes;

template <typename T>
Bytes AsBytes(std::initializer_list<T> values) {
  Bytes out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

TEST(DeltaCodecTest, MatchesNumcodecsNarrowingIntegers) {
  // numcodecs.Delta(dtype="<i4", astype="<i1").encode(np.array([5, -3, 100, 2**31-1, -2**31, 7], "<i4"))
  const DeltaCodec codec(DataType::kInt32, DataType::kInt8);
  const ChunkSpec spec = MakeSpec(DataType::kInt32, {2, 3});
  const Bytes input = AsBytes<int32_t>({5, -3, 100, 2147483647, -2147483647 - 1, 7});
  Bytes encoded, decoded;
  ASSERT_TRUE(codec.Encode(spec, input, &encoded).ok());
  EXPECT_EQ(encoded, FromHex("05f8679b0107"));
  // Narrowed values lose their high bits, as numpy's do; a first value and differences that fit
  // survive the round trip, even where the running values do not fit astype.
  const Bytes small = AsBytes<int32_t>({100, 110, 90, 200, 250, 300});
  ASSERT_TRUE(codec.Encode(spec, small, &encoded).ok());
  ASSERT_TRUE(codec.Decode(spec, encoded, &decoded).ok());
  EXPECT_EQ(decoded, small);
}

TEST(DeltaCodecTest, MatchesNumcodecsFloats) {
  // numcodecs.Delta(dtype="<f8").encode(np.array([0.1, 0.7, -3.25, 1e10, 2.5]))
  const DeltaCodec codec(DataType::kFloat64, DataType::kFloat64);
  const ChunkSpec spec = MakeSpec(DataType::kFloat64, {5});
  const Bytes encoded = FromHex(
      "9a9999999999b93f333333333333e33f9a99999999990fc000001a205fa002420000ec1f5fa002c2");
  Bytes out;
  ASSERT_TRUE(codec.Encode(spec, AsBytes<double>({0.1, 0.7, -3.25, 1e10, 2.5}), &out).ok());
  EXPECT_EQ(out, encoded);
  // np.cumsum of that encoding (not exactly the input: float sums round as numpy's do).
  ASSERT_TRUE(codec.Decode(spec, encoded, &out).ok());
  EXPECT_EQ(out, FromHex("9a9999999999b93f666666666666e63f0000000000000ac0000000205fa002420000000000000440"));
}

TEST(DeltaCodecTest, IntegersRoundTripEveryTypePair) {
  const DataType integers[] = {DataType::kInt8,  DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
                               DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64};
  for (DataType dtype : integers) {
    const ChunkSpec spec = MakeSpec(dtype, {3, 17});
    const Bytes input = RandomBytes(spec.NumBytes(), static_cast<uint64_t>(dtype));
    // Same width and wider: every value survives, whatever the signedness.
    for (DataType astype : integers) {
      if (ItemSize(astype) < ItemSize(dtype)) continue;
      const DeltaCodec codec(dtype, astype);
      Bytes encoded, decoded;
      ASSERT_TRUE(codec.Encode(spec, input, &encoded).ok());
      ASSERT_EQ(encoded.size(), spec.NumElements() * ItemSize(astype));
      ASSERT_TRUE(codec.Decode(spec, encoded, &decoded).ok());
      EXPECT_EQ(decoded, input) << DataTypeName(dtype) << " as " << DataTypeName(astype);
    }
  }
}

TEST(DeltaCodecTest, FloatsRoundTripSlowlyVaryingData) {
  const ChunkSpec spec = MakeSpec(DataType::kFloat32, {64});
  Bytes input(spec.NumBytes());
  for (int i = 0; i < 64; ++i) {
    const float v = static_cast<float>(i) * 0.5f;  // exact in binary, so the running sum is too
    std::memcpy(input.data() + 4 * i, &v, 4);
  }
  const DeltaCodec codec(DataType::kFloat32, DataType::kFloat32);
  Bytes encoded, decoded;
  ASSERT_TRUE(codec.Encode(spec, input, &encoded).ok());
  ASSERT_TRUE(codec.Decode(spec, encoded, &decoded).ok());
  EXPECT_EQ(decoded, input);
  const DeltaCodec half(DataType::kFloat16, DataType::kFloat16);
  const ChunkSpec half_spec = MakeSpec(DataType::kFloat16, {4});
  Bytes halves;
  for (double d : {1.0, 2.5, -4.0, 0.125}) {
    const uint16_t h = FloatToHalfBits(d);
    halves.push_back(static_cast<uint8_t>(h));
    halves.push_back(static_cast<uint8_t>(h >> 8));
  }
  ASSERT_TRUE(half.Encode(half_spec, halves, &encoded).ok());
  ASSERT_TRUE(half.Decode(half_spec, encoded, &decoded).ok());
  EXPECT_EQ(decoded, halves);
}

TEST(DeltaCodecTest, WrongSizesAreRefused) {
  const DeltaCodec codec(DataType::kInt32, DataType::kInt16);
  const ChunkSpec spec = MakeSpec(DataType::kInt32, {4});
  Bytes out;
  EXPECT_ERROR(codec.Decode(spec, RandomBytes(10, 1), &out), ErrorKind::kCorruptData, "numcodecs.delta", "10 bytes", "expected 8");
  EXPECT_ERROR(codec.Encode(spec, RandomBytes(10, 1), &out), ErrorKind::kInvalidArgument, "numcodecs.delta", "10 bytes", "expected 16");
  EXPECT_ERROR(codec.EncodedSpec(MakeSpec(DataType::kUInt32, {4})), ErrorKind::kInvalidArgument, "numcodecs.delta", "int32", "uint32");
}

TEST(DeltaCodecTest, FactoryParsesNumpyDtypes) {
  const ChunkSpec spec = MakeSpec(DataType::kInt64, {4});
  auto codec = MakeDeltaCodec({{"dtype", "<i8"}, {"astype", ">i2"}}, spec);
  ASSERT_TRUE(codec.ok());
  EXPECT_EQ((*codec)->ToJson(), nlohmann::json({{"name", "numcodecs.delta"}, {"configuration", {{"dtype", "<i8"}, {"astype", "<i2"}}}}));
  auto spec_after = (*codec)->EncodedSpec(spec);
  ASSERT_TRUE(spec_after.ok());
  EXPECT_EQ(spec_after->dtype, DataType::kInt16);
  ASSERT_TRUE(MakeDeltaCodec({{"dtype", "int64"}}, spec).ok());
  EXPECT_ERROR(MakeDeltaCodec(nlohmann::json::object(), spec), ErrorKind::kInvalidArgument, "numcodecs.delta codec", "\"dtype\"", "required");
  EXPECT_ERROR(MakeDeltaCodec({{"dtype", "<i4"}}, spec), ErrorKind::kInvalidArgument, "numcodecs.delta codec", "<i4", "int64");
  EXPECT_ERROR(MakeDeltaCodec({{"dtype", "<U4"}}, spec), ErrorKind::kUnsupported, "numcodecs.delta codec", "\"dtype\"", "<U4");
  EXPECT_ERROR(MakeDeltaCodec({{"dtype", "<f8"}, {"astype", "<f4"}}, MakeSpec(DataType::kFloat64, {4})), ErrorKind::kUnsupported,
               "numcodecs.delta codec", "\"astype\"", "<f4");
  auto parsed = ParseNumpyDtype(">u2");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->dtype, DataType::kUInt16);
  EXPECT_EQ(parsed->byte_order, '>');
  EXPECT_EQ(ParseNumpyDtype("<u1")->byte_order, '|');
}

}  // namespace
}  // namespace tessera
