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

TEST(ShardingCodecTest, TheChainNamesItsShardingCodec) {
  ChunkSpec spec{DataType::kUInt8, {4}, ZeroFill(DataType::kUInt8)};
  auto chain = ParseCodecChain(ShardingJson({2}, "end", kRawBytes), spec);
  ASSERT_TRUE(chain.ok());
  EXPECT_EQ(chain->array_to_bytes->id(), CodecId::kSharding);
  const ShardingCodec* sharding = chain->sharding();
  ASSERT_NE(sharding, nullptr);
  EXPECT_EQ(sharding, chain->array_to_bytes->AsSharding());
  EXPECT_EQ(sharding->inner_codecs().array_to_bytes->id(), CodecId::kBytes);
}

// AssembleShard lays a shard out without copying its chunks: the parts are the index and views of
// the slots, and joined they are what Encode writes.
TEST(ShardingCodecTest, AssembledPartsViewTheSlotsAndMatchEncode) {
  for (const char* location : {"start", "end"}) {
    SCOPED_TRACE(location);
    ChunkSpec spec{DataType::kUInt8, {6}, ZeroFill(DataType::kUInt8)};
    auto chain = ParseCodecChain(ShardingJson({2}, location, kRawBytes), spec);
    ASSERT_TRUE(chain.ok());
    const ShardingCodec& sharding = *chain->sharding();
    const uint8_t data[] = {1, 2, 0, 0, 5, 6};
    Bytes encoded;
    ASSERT_TRUE(chain->Encode(spec, data, &encoded).ok());
    const std::optional<ByteView> slots[] = {ByteView(data, 2), std::nullopt, ByteView(data + 4, 2)};
    auto layout = sharding.AssembleShard(slots);
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    EXPECT_FALSE(layout->empty());
    ASSERT_EQ(layout->parts().size(), 3u);
    const bool start = std::string(location) == "start";
    EXPECT_EQ(layout->parts()[start ? 1 : 0].data(), data);      // the slot itself, not a copy
    EXPECT_EQ(layout->parts()[start ? 2 : 1].data(), data + 4);
    EXPECT_EQ(layout->size(), encoded.size());
    EXPECT_EQ(layout->Concatenate(), encoded);
    // Moving keeps the index part valid.
    ShardLayout moved = std::move(layout).value();
    EXPECT_EQ(moved.Concatenate(), encoded);

    const std::optional<ByteView> none[3];
    auto empty = sharding.AssembleShard(none);
    ASSERT_TRUE(empty.ok());
    EXPECT_TRUE(empty->empty());
    ASSERT_EQ(empty->parts().size(), 1u);  // the all-empty index alone (a nested shard's encoding)
    Bytes index_only;
    ASSERT_TRUE(sharding.EncodeIndex(ShardIndex::AllEmpty(3), &index_only).ok());
    EXPECT_EQ(empty->Concatenate(), index_only);
  }
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
