#include "tessera/codec/sharding_codec.h"

#include <random>

#include <gtest/gtest.h>

#include "tessera/codec/crc32c.h"
#include "tessera/codec/registry.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

nlohmann::json ShardingJson(std::vector<int64_t> inner, const char* location, nlohmann::json codecs) {
  return nlohmann::json::array(
      {{{"name", "sharding_indexed"},
        {"configuration",
         {{"chunk_shape", inner},
          {"codecs", codecs},
          {"index_codecs", {{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}, {{"name", "crc32c"}}}},
          {"index_location", location}}}}});
}

const nlohmann::json kRawBytes = nlohmann::json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});

TEST(ShardingCodecTest, HandCheckedShardLayoutIndexAtEnd) {
  ChunkSpec spec{DataType::kUInt8, {4}, ZeroFill(DataType::kUInt8)};
  auto chain = ParseCodecChain(ShardingJson({2}, "end", kRawBytes), spec);
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  const uint8_t data[] = {1, 2, 0, 0};
  Bytes shard;
  ASSERT_TRUE(chain->Encode(spec, data, &shard).ok());
  // 2 data bytes, then index (2 entries x 16 bytes), then crc32c of the index.
  ASSERT_EQ(shard.size(), 2u + 32u + 4u);
  EXPECT_EQ(shard[0], 1);
  EXPECT_EQ(shard[1], 2);
  EXPECT_EQ(DecodeFixed64LE(&shard[2]), 0u);    // offset of chunk 0
  EXPECT_EQ(DecodeFixed64LE(&shard[10]), 2u);   // nbytes of chunk 0
  EXPECT_EQ(DecodeFixed64LE(&shard[18]), kEmptyShardEntry);
  EXPECT_EQ(DecodeFixed64LE(&shard[26]), kEmptyShardEntry);
  EXPECT_EQ(DecodeFixed32LE(&shard[34]), Crc32c(ByteView(shard.data() + 2, 32)).value);
  Bytes decoded;
  ASSERT_TRUE(chain->Decode(spec, shard, &decoded).ok());
  EXPECT_EQ(decoded, Bytes(data, data + 4));
}

TEST(ShardingCodecTest, IndexAtStartOffsetsCountTheIndex) {
  ChunkSpec spec{DataType::kUInt8, {4}, ZeroFill(DataType::kUInt8)};
  auto chain = ParseCodecChain(ShardingJson({2}, "start", kRawBytes), spec);
  ASSERT_TRUE(chain.ok());
  const uint8_t data[] = {0, 0, 7, 8};
  Bytes shard;
  ASSERT_TRUE(chain->Encode(spec, data, &shard).ok());
  ASSERT_EQ(shard.size(), 36u + 2u);
  EXPECT_EQ(DecodeFixed64LE(&shard[0]), kEmptyShardEntry);
  EXPECT_EQ(DecodeFixed64LE(&shard[16]), 36u);
  EXPECT_EQ(DecodeFixed64LE(&shard[24]), 2u);
  EXPECT_EQ(shard[36], 7);
  Bytes decoded;
  ASSERT_TRUE(chain->Decode(spec, shard, &decoded).ok());
  EXPECT_EQ(decoded, Bytes(data, data + 4));
}

TEST(ShardingCodecTest, RoundTripCompressedAndNested) {
  std::mt19937 rng(3);
  ChunkSpec spec{DataType::kUInt16, {8, 12}, FillValue{{7, 0}}};
  nlohmann::json inner_zstd = nlohmann::json::array(
      {{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}}, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}});
  nlohmann::json nested = ShardingJson({2, 3}, "start", inner_zstd);
  for (const auto& codecs : {ShardingJson({4, 6}, "end", inner_zstd), ShardingJson({4, 6}, "end", nested)}) {
    auto chain = ParseCodecChain(codecs, spec);
    ASSERT_TRUE(chain.ok()) << chain.status().ToString();
    std::vector<uint16_t> values(96);
    for (size_t i = 0; i < values.size(); ++i) values[i] = (i < 48) ? 7 : static_cast<uint16_t>(rng());
    ByteView view(reinterpret_cast<uint8_t*>(values.data()), 192);
    Bytes shard, decoded;
    ASSERT_TRUE(chain->Encode(spec, view, &shard).ok());
    ASSERT_TRUE(chain->Decode(spec, shard, &decoded).ok());
    EXPECT_EQ(decoded, Bytes(view.begin(), view.end()));
  }
}

TEST(ShardingCodecTest, CorruptShardsGiveCorruptDataWithByteRanges) {
  ChunkSpec spec{DataType::kUInt8, {4}, ZeroFill(DataType::kUInt8)};
  auto chain = ParseCodecChain(ShardingJson({2}, "end", kRawBytes), spec);
  ASSERT_TRUE(chain.ok());
  const uint8_t data[] = {1, 2, 3, 4};
  Bytes shard, out;
  ASSERT_TRUE(chain->Encode(spec, data, &shard).ok());
  {
    Bytes bad = shard;
    bad[10] ^= 1;  // inside the index: checksum mismatch
    Status st = chain->Decode(spec, bad, &out);
    EXPECT_ERROR(st, ErrorKind::kCorruptData, "checksum", "bytes [4, 40)");
  }
  {
    Bytes truncated(shard.begin(), shard.begin() + 20);
    Status st = chain->Decode(spec, truncated, &out);
    EXPECT_ERROR(st, ErrorKind::kCorruptData, "shard is 20 bytes", "index (36 bytes)");
  }
  {
    // An entry pointing past the data, with a valid checksum.
    Bytes bad = shard;
    EncodeFixed64LE(&bad[4 + 16], 100);
    EncodeFixed32LE(&bad[36], Crc32c(ByteView(bad.data() + 4, 32)).value);
    Status st = chain->Decode(spec, bad, &out);
    EXPECT_ERROR(st, ErrorKind::kCorruptData, "entry 1", "bytes [100, 102)", "data bytes [0, 4)");
  }
}

TEST(ShardingCodecTest, InnerChunkShapeMustDivideShard) {
  ChunkSpec spec{DataType::kUInt8, {5}, ZeroFill(DataType::kUInt8)};
  auto chain = ParseCodecChain(ShardingJson({2}, "end", kRawBytes), spec);
  EXPECT_ERROR(chain, ErrorKind::kInvalidArgument, "sharding_indexed", "chunk_shape [2]", "[5]");
}

TEST(RegistryTest, UnknownCodecIsUnsupported) {
  ChunkSpec spec{DataType::kUInt8, {4}, ZeroFill(DataType::kUInt8)};
  auto chain = ParseCodecChain(nlohmann::json::parse(R"([{"name":"bytes"},{"name":"lzma9000"}])"), spec);
  EXPECT_ERROR(chain, ErrorKind::kUnsupported, "unknown codec \"lzma9000\"", "supported: ");
  auto no_a2b = ParseCodecChain(nlohmann::json::parse(R"([{"name":"zstd"}])"), spec);
  EXPECT_ERROR(no_a2b, ErrorKind::kInvalidArgument, "zstd (bytes -> bytes) must come after the array -> bytes codec");
  auto none = ParseCodecChain(nlohmann::json::array(), spec);
  EXPECT_ERROR(none, ErrorKind::kInvalidArgument, "no array -> bytes codec");
}

}  // namespace
}  // namespace tessera
