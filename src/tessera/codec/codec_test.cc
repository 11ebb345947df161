#include "tessera/codec/codec.h"

#include <gtest/gtest.h>

#include "tessera/codec/blosc_codec.h"
#include "tessera/codec/bytes_codec.h"
#include "cpp_support/codec_helpers.h"
#include "tessera/codec/crc32c_codec.h"
#include "tessera/codec/gzip_codec.h"
#include "tessera/codec/transpose_codec.h"
#include "tessera/codec/zstd_codec.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::MakeSpec;
using codec_test::RandomBytes;

// A bytes->bytes codec that prepends one marker byte, so the order of stages is visible.
class TagCodec final : public BytesToBytesCodec {
 public:
  explicit TagCodec(uint8_t tag) : tag_(tag) {}
  std::string_view name() const override { return "tag"; }
  nlohmann::json ToJson() const override {
    return {{"name", "tag"}, {"configuration", {{"tag", tag_}}}};
  }
  Status Encode(ByteView in, Bytes* out) const override {
    out->assign(1, tag_);
    out->insert(out->end(), in.begin(), in.end());
    return Status::Ok();
  }
  Status Decode(ByteView in, Bytes* out) const override {
    if (in.empty() || in[0] != tag_) return CorruptData("tag mismatch");
    out->assign(in.begin() + 1, in.end());
    return Status::Ok();
  }
  std::optional<size_t> MaxEncodedSize(size_t n) const override { return n + 1; }
  std::optional<size_t> FixedEncodedSize(size_t n) const override { return n + 1; }

 private:
  uint8_t tag_;
};

CodecChain BytesOnly(Endian endian) {
  CodecChain chain;
  chain.array_to_bytes = std::make_shared<BytesCodec>(endian);
  return chain;
}

TEST(CodecChainTest, NumElements) {
  EXPECT_EQ(MakeSpec(DataType::kUInt8, {}).NumElements(), 1);
  EXPECT_EQ(MakeSpec(DataType::kUInt8, {0, 5}).NumElements(), 0);
  EXPECT_EQ(MakeSpec(DataType::kUInt8, {2, 3, 4}).NumElements(), 24);
  EXPECT_EQ(MakeSpec(DataType::kComplex128, {2, 3}).NumBytes(), 96u);
}

TEST(CodecChainTest, BytesOnlyRoundTrip) {
  const CodecChain chain = BytesOnly(Endian::kBig);
  const ChunkSpec spec = MakeSpec(DataType::kUInt16, {2});
  const Bytes array = {1, 0, 2, 0};
  Bytes encoded, decoded;
  ASSERT_TRUE(chain.Encode(spec, array, &encoded).ok());
  EXPECT_EQ(encoded, Bytes({0, 1, 0, 2}));
  ASSERT_TRUE(chain.Decode(spec, encoded, &decoded).ok());
  EXPECT_EQ(decoded, array);
  EXPECT_EQ(chain.FixedEncodedSize(spec), 4u);
  EXPECT_EQ(chain.MaxEncodedSize(spec), 4u);
}

TEST(CodecChainTest, BytesToBytesStagesRunInOrderAndReverse) {
  // One, two and three stages exercise both parities of the buffer alternation.
  for (int stages = 1; stages <= 3; ++stages) {
    CodecChain chain = BytesOnly(Endian::kLittle);
    for (int s = 0; s < stages; ++s)
      chain.bytes_to_bytes.push_back(std::make_shared<TagCodec>(10 + s));
    const ChunkSpec spec = MakeSpec(DataType::kUInt8, {3});
    const Bytes array = {7, 8, 9};
    Bytes encoded, decoded;
    ASSERT_TRUE(chain.Encode(spec, array, &encoded).ok());
    Bytes expected;
    for (int s = stages - 1; s >= 0; --s) expected.push_back(static_cast<uint8_t>(10 + s));
    expected.insert(expected.end(), array.begin(), array.end());
    EXPECT_EQ(encoded, expected);  // the last codec's tag is outermost
    ASSERT_TRUE(chain.Decode(spec, encoded, &decoded).ok());
    EXPECT_EQ(decoded, array);
    EXPECT_EQ(chain.FixedEncodedSize(spec), 3u + stages);
  }
}

TEST(CodecChainTest, FullPipelineRoundTripsAllTypesAndShapes) {
  uint64_t seed = 1;
  for (const auto& shape : codec_test::TestShapes()) {
    std::vector<int> reversed(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) reversed[i] = static_cast<int>(shape.size() - 1 - i);
    CodecChain chain;
    chain.array_to_array.push_back(std::make_shared<TransposeCodec>(reversed));
    chain.array_to_array.push_back(std::make_shared<TransposeCodec>(reversed));
    chain.array_to_array.push_back(std::make_shared<TransposeCodec>(reversed));
    chain.array_to_bytes = std::make_shared<BytesCodec>(Endian::kBig);
    chain.bytes_to_bytes.push_back(std::make_shared<ZstdCodec>(1, true));
    chain.bytes_to_bytes.push_back(std::make_shared<GzipCodec>(1));
    BloscOptions blosc;
    blosc.cname = "lz4";
    chain.bytes_to_bytes.push_back(std::make_shared<BloscCodec>(blosc));
    chain.bytes_to_bytes.push_back(std::make_shared<Crc32cCodec>());
    for (DataType dtype : codec_test::AllDataTypes()) {
      const ChunkSpec spec = MakeSpec(dtype, shape);
      const Bytes array = RandomBytes(spec.NumBytes(), seed++);
      Bytes encoded, decoded;
      ASSERT_TRUE(chain.Encode(spec, array, &encoded).ok());
      EXPECT_LE(encoded.size(), *chain.MaxEncodedSize(spec));
      const Status st = chain.Decode(spec, encoded, &decoded);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(decoded, array);
    }
  }
}

TEST(CodecChainTest, TransposeThenBytesMatchesManualComposition) {
  CodecChain chain;
  const auto transpose = std::make_shared<TransposeCodec>(std::vector<int>{1, 0});
  chain.array_to_array.push_back(transpose);
  chain.array_to_bytes = std::make_shared<BytesCodec>(Endian::kLittle);
  const ChunkSpec spec = MakeSpec(DataType::kUInt8, {2, 3});
  Bytes encoded;
  ASSERT_TRUE(chain.Encode(spec, Bytes({0, 1, 2, 3, 4, 5}), &encoded).ok());
  EXPECT_EQ(encoded, Bytes({0, 3, 1, 4, 2, 5}));
  auto inner = chain.ArrayToBytesSpec(spec);
  ASSERT_TRUE(inner.ok());
  EXPECT_EQ(inner->shape, std::vector<int64_t>({3, 2}));
  Bytes decoded;
  ASSERT_TRUE(chain.Decode(spec, encoded, &decoded).ok());
  EXPECT_EQ(decoded, Bytes({0, 1, 2, 3, 4, 5}));
}

TEST(CodecChainTest, SizesAreFixedOnlyWhenEveryStageIs) {
  const ChunkSpec spec = MakeSpec(DataType::kFloat32, {10, 10});
  CodecChain chain = BytesOnly(Endian::kLittle);
  chain.bytes_to_bytes.push_back(std::make_shared<Crc32cCodec>());
  EXPECT_EQ(chain.FixedEncodedSize(spec), 404u);
  EXPECT_EQ(chain.MaxEncodedSize(spec), 404u);
  chain.bytes_to_bytes.push_back(std::make_shared<ZstdCodec>(0, false));
  EXPECT_EQ(chain.FixedEncodedSize(spec), std::nullopt);
  ASSERT_TRUE(chain.MaxEncodedSize(spec).has_value());
  EXPECT_GE(*chain.MaxEncodedSize(spec), 404u);
  // A transpose whose rank does not match gives no size.
  chain.array_to_array.push_back(std::make_shared<TransposeCodec>(std::vector<int>{0, 1, 2}));
  EXPECT_EQ(chain.MaxEncodedSize(spec), std::nullopt);
  EXPECT_ERROR(chain.ArrayToBytesSpec(spec), ErrorKind::kInvalidArgument, "transpose codec", "3 entries", "rank 2");
}

TEST(CodecChainTest, ToJsonListsCodecsInOrder) {
  CodecChain chain;
  chain.array_to_array.push_back(std::make_shared<TransposeCodec>(std::vector<int>{1, 0}));
  chain.array_to_bytes = std::make_shared<BytesCodec>(Endian::kLittle);
  chain.bytes_to_bytes.push_back(std::make_shared<GzipCodec>(3));
  chain.bytes_to_bytes.push_back(std::make_shared<Crc32cCodec>());
  const nlohmann::json expected = nlohmann::json::parse(R"([
      {"name": "transpose", "configuration": {"order": [1, 0]}},
      {"name": "bytes", "configuration": {"endian": "little"}},
      {"name": "gzip", "configuration": {"level": 3}},
      {"name": "crc32c"}])");
  EXPECT_EQ(chain.ToJson(), expected);
}

TEST(CodecChainTest, CodecsSayWhatTheyAreWithoutCasts) {
  CodecChain chain;
  chain.array_to_array.push_back(std::make_shared<TransposeCodec>(std::vector<int>{1, 0}));
  chain.array_to_bytes = std::make_shared<BytesCodec>(Endian::kBig);
  chain.bytes_to_bytes.push_back(std::make_shared<GzipCodec>(3));
  chain.bytes_to_bytes.push_back(std::make_shared<ZstdCodec>(7, false));
  chain.bytes_to_bytes.push_back(std::make_shared<Crc32cCodec>());
  chain.bytes_to_bytes.push_back(std::make_shared<TagCodec>(1));
  EXPECT_EQ(chain.array_to_array[0]->id(), CodecId::kTranspose);
  EXPECT_EQ(chain.array_to_bytes->id(), CodecId::kBytes);
  EXPECT_EQ(chain.array_to_bytes->endian(), Endian::kBig);
  EXPECT_EQ(chain.array_to_bytes->AsSharding(), nullptr);
  EXPECT_EQ(chain.bytes_to_bytes[0]->id(), CodecId::kGzip);
  EXPECT_EQ(chain.bytes_to_bytes[0]->compression_level(), 3);
  EXPECT_EQ(chain.bytes_to_bytes[1]->id(), CodecId::kZstd);
  EXPECT_EQ(chain.bytes_to_bytes[1]->compression_level(), 7);
  EXPECT_EQ(chain.bytes_to_bytes[2]->id(), CodecId::kCrc32c);
  EXPECT_EQ(chain.bytes_to_bytes[2]->compression_level(), std::nullopt);
  EXPECT_EQ(chain.bytes_to_bytes[3]->id(), CodecId::kOther);  // a codec the enum does not name
  EXPECT_EQ(chain.sharding(), nullptr);
}

TEST(CodecChainTest, IdentityIsLittleEndianBytesAlone) {
  EXPECT_TRUE(BytesOnly(Endian::kLittle).IsIdentity(DataType::kUInt32));
  EXPECT_FALSE(BytesOnly(Endian::kBig).IsIdentity(DataType::kUInt32));
  EXPECT_TRUE(BytesOnly(Endian::kBig).IsIdentity(DataType::kUInt8));  // one byte: no order
  CodecChain unset;
  unset.array_to_bytes = std::make_shared<BytesCodec>(std::nullopt);
  EXPECT_TRUE(unset.IsIdentity(DataType::kUInt8));
  CodecChain compressed = BytesOnly(Endian::kLittle);
  compressed.bytes_to_bytes.push_back(std::make_shared<GzipCodec>(1));
  EXPECT_FALSE(compressed.IsIdentity(DataType::kUInt32));
  EXPECT_TRUE(compressed.BytesStepIsCopy(DataType::kUInt32));
  EXPECT_FALSE(CodecChain().BytesStepIsCopy(DataType::kUInt8));
}

TEST(CodecChainTest, ErrorsPropagate) {
  CodecChain chain = BytesOnly(Endian::kLittle);
  chain.bytes_to_bytes.push_back(std::make_shared<Crc32cCodec>());
  const ChunkSpec spec = MakeSpec(DataType::kUInt32, {4});
  Bytes encoded, decoded;
  EXPECT_ERROR(chain.Encode(spec, Bytes(15), &encoded), ErrorKind::kInvalidArgument, "15 bytes", "needs 16");
  ASSERT_TRUE(chain.Encode(spec, RandomBytes(16, 1), &encoded).ok());
  encoded[3] ^= 1;
  EXPECT_ERROR(chain.Decode(spec, encoded, &decoded), ErrorKind::kCorruptData, "crc32c checksum mismatch");
  // A chunk whose payload verifies but has the wrong size for the spec.
  Bytes short_chunk;
  ASSERT_TRUE(Crc32cCodec().Encode(RandomBytes(12, 2), &short_chunk).ok());
  EXPECT_ERROR(chain.Decode(spec, short_chunk, &decoded), ErrorKind::kCorruptData, "decoded 12 bytes",
               "expected 16");
  CodecChain empty;
  EXPECT_ERROR(empty.Encode(spec, RandomBytes(16, 1), &encoded), ErrorKind::kFailedPrecondition,
               "no array->bytes codec");
}

}  // namespace
}  // namespace tessera
