#include "tessera/precomputed/sharding_spec.h"

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"

namespace tessera::precomputed {
namespace {

nlohmann::json Spec(const char* hash, int preshift, int minishard, int shard) {
  return {{"@type", "neuroglancer_uint64_sharded_v1"}, {"hash", hash}, {"preshift_bits", preshift},
          {"minishard_bits", minishard}, {"shard_bits", shard}, {"minishard_index_encoding", "gzip"},
          {"data_encoding", "raw"}};
}

TEST(ShardingSpecTest, ParsesAndWritesBack) {
  auto s = ShardingSpec::FromJson(Spec("murmurhash3_x86_128", 9, 6, 15));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->hash, ShardHash::kMurmurHash3_x86_128);
  EXPECT_EQ(s->preshift_bits, 9);
  EXPECT_EQ(s->minishard_index_encoding, ShardEncoding::kGzip);
  EXPECT_EQ(s->data_encoding, ShardEncoding::kRaw);
  EXPECT_EQ(s->ToJson(), Spec("murmurhash3_x86_128", 9, 6, 15));
  // Encodings default to raw.
  nlohmann::json j = Spec("identity", 0, 0, 0);
  j.erase("minishard_index_encoding");
  j.erase("data_encoding");
  EXPECT_EQ(ShardingSpec::FromJson(j)->minishard_index_encoding, ShardEncoding::kRaw);
}

TEST(ShardingSpecTest, LocatesChunksByTheDocumentedBitFields) {
  ShardingSpec s = *ShardingSpec::FromJson(Spec("identity", 2, 3, 4));
  // hashed = id >> 2; minishard = bits [0, 3); shard = bits [3, 7).
  const uint64_t id = (0b1011ull << 5) | (0b101ull << 2) | 0b11ull;  // shard 1011, minishard 101, preshift 11
  EXPECT_EQ(s.Locate(id).minishard, 0b101u);
  EXPECT_EQ(s.Locate(id).shard, 0b1011u);
  EXPECT_EQ(s.ShardIndexBytes(), 128u);
  ShardingSpec m = *ShardingSpec::FromJson(Spec("murmurhash3_x86_128", 0, 2, 3));
  // MurmurHash3ChunkId(1) = 0xe8bd67d616d4ce9a: low 2 bits 10b, next 3 bits 110b.
  EXPECT_EQ(m.Locate(1).minishard, 2u);
  EXPECT_EQ(m.Locate(1).shard, 6u);
}

TEST(ShardingSpecTest, ShardFileNamesAreZeroPaddedLowercaseHex) {
  EXPECT_EQ(ShardingSpec::FromJson(Spec("identity", 0, 0, 0))->ShardFileName(0), "0.shard");
  EXPECT_EQ(ShardingSpec::FromJson(Spec("identity", 0, 0, 5))->ShardFileName(0x1f), "1f.shard");
  EXPECT_EQ(ShardingSpec::FromJson(Spec("identity", 0, 0, 9))->ShardFileName(0xab), "0ab.shard");
  EXPECT_EQ(ShardingSpec::FromJson(Spec("identity", 0, 0, 16))->ShardFileName(0xbeef), "beef.shard");
}

TEST(ShardingSpecTest, RejectsMalformedSpecsNamingTheField) {
  auto bad = [](nlohmann::json j, const char* needle, ErrorKind kind = ErrorKind::kInvalidArgument) {
    EXPECT_ERROR(ShardingSpec::FromJson(j), kind, "sharding", needle) << j.dump();
  };
  nlohmann::json j = Spec("identity", 0, 0, 0);
  bad(nlohmann::json::array(), "object");
  j["@type"] = "neuroglancer_uint64_sharded_v2";
  bad(j, "\"@type\" must be \"neuroglancer_uint64_sharded_v1\", not \"neuroglancer_uint64_sharded_v2\"",
      ErrorKind::kUnsupported);
  j = Spec("sha1", 0, 0, 0);
  bad(j, "\"hash\" must be \"identity\" or \"murmurhash3_x86_128\", not \"sha1\"", ErrorKind::kUnsupported);
  j = Spec("identity", 65, 0, 0);
  bad(j, "preshift_bits");
  j = Spec("identity", 0, 33, 0);
  bad(j, "minishard_bits");
  j = Spec("identity", 0, 30, 40);
  bad(j, "at most 64");
  j = Spec("identity", 0, 0, 0);
  j["data_encoding"] = "zstd";
  bad(j, "data_encoding");
  j = Spec("identity", 0, 0, 0);
  j.erase("shard_bits");
  bad(j, "shard_bits");
}

}  // namespace
}  // namespace tessera::precomputed
