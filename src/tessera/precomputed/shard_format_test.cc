#include "tessera/precomputed/shard_format.h"

#include <map>
#include <random>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"

namespace tessera::precomputed {
namespace {

ShardingSpec IdentitySpec(int minishard_bits, int shard_bits, ShardEncoding index_enc, ShardEncoding data_enc) {
  ShardingSpec s;
  s.minishard_bits = minishard_bits;
  s.shard_bits = shard_bits;
  s.minishard_index_encoding = index_enc;
  s.data_encoding = data_enc;
  return s;
}

ByteView View(const std::string& s) { return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

Bytes U64s(std::initializer_list<uint64_t> values) {
  Bytes out;
  for (uint64_t v : values) PutFixed64LE(&out, v);
  return out;
}

TEST(ShardFormatTest, HandCheckedShardBytes) {
  // minishard_bits 1, shard_bits 1, identity: ids 1, 5 -> minishard 1; id 4 -> minishard 0; all shard 0.
  const ShardingSpec spec = IdentitySpec(1, 1, ShardEncoding::kRaw, ShardEncoding::kRaw);
  const std::string a = "A", b = "BB", c = "CCC";
  auto shard = EncodeShard(spec, {{5, View(c)}, {1, View(a)}, {4, View(b)}});
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  Bytes expected = U64s({2, 26, 30, 78});                        // shard index (relative to byte 32)
  expected.insert(expected.end(), {'B', 'B'});                   // [32, 34) chunk 4
  Bytes ms0 = U64s({4, 0, 2});                                   // [34, 58) minishard 0 index
  expected.insert(expected.end(), ms0.begin(), ms0.end());
  expected.insert(expected.end(), {'A', 'C', 'C', 'C'});         // [58, 59) chunk 1, [59, 62) chunk 5
  Bytes ms1 = U64s({1, 4, 26, 0, 1, 3});                         // [62, 110) minishard 1 index
  expected.insert(expected.end(), ms1.begin(), ms1.end());
  EXPECT_EQ(*shard, expected);

  auto range = MinishardIndexRange(spec, *shard, 1, shard->size(), "0.shard");
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(*range, std::make_pair(uint64_t{62}, uint64_t{110}));
  auto entries = DecodeMinishardIndex(ByteView(*shard).subspan(62, 48), 32, shard->size(), "0.shard");
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(*entries, (std::vector<ChunkEntry>{{1, 58, 59}, {5, 59, 62}}));
}

TEST(ShardFormatTest, RandomShardsRoundTripWithEveryEncoding) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    ShardingSpec spec = IdentitySpec(static_cast<int>(rng() % 4), 0, rng() % 2 ? ShardEncoding::kGzip : ShardEncoding::kRaw,
                                     rng() % 2 ? ShardEncoding::kGzip : ShardEncoding::kRaw);
    if (rng() % 2) spec.hash = ShardHash::kMurmurHash3_x86_128;
    spec.preshift_bits = static_cast<int>(rng() % 3);
    std::map<uint64_t, Bytes> chunks;
    const int n = static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      Bytes data(rng() % 50);
      for (auto& byte : data) byte = static_cast<uint8_t>(rng() % 4);
      chunks[rng() % 1000] = data;
    }
    std::vector<std::pair<uint64_t, ByteView>> input;
    for (const auto& [id, data] : chunks) input.emplace_back(id, data);
    auto shard = EncodeShard(spec, input);
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    std::map<uint64_t, Bytes> decoded;
    for (uint64_t m = 0; m < spec.num_minishards(); ++m) {
      auto range = MinishardIndexRange(spec, *shard, m, shard->size(), "s");
      ASSERT_TRUE(range.ok()) << range.status().ToString();
      if (range->first == range->second) continue;
      auto index = DecodeShardBytes(spec.minishard_index_encoding,
                                    ByteView(*shard).subspan(range->first, range->second - range->first));
      ASSERT_TRUE(index.ok());
      auto entries = DecodeMinishardIndex(*index, spec.ShardIndexBytes(), shard->size(), "s");
      ASSERT_TRUE(entries.ok()) << entries.status().ToString();
      for (const ChunkEntry& e : *entries) {
        EXPECT_EQ(spec.Locate(e.chunk_id).minishard, m);
        auto data = DecodeShardBytes(spec.data_encoding, ByteView(*shard).subspan(e.begin, e.end - e.begin));
        ASSERT_TRUE(data.ok());
        decoded[e.chunk_id] = *data;
      }
    }
    EXPECT_EQ(decoded, chunks);
  }
}

TEST(ShardFormatTest, CorruptIndicesAreErrorsNamingTheFileAndRange) {
  const ShardingSpec spec = IdentitySpec(1, 0, ShardEncoding::kRaw, ShardEncoding::kRaw);
  const std::string a = "A";
  Bytes shard = *EncodeShard(spec, {{1, View(a)}});
  // Truncated shard index.
  auto r = MinishardIndexRange(spec, ByteView(shard).subspan(0, 20), 0, shard.size(), "3.shard");
  EXPECT_ERROR(r, ErrorKind::kCorruptData, "3.shard", "shard index bytes [0, 32)", "truncated (20 bytes)");
  // Minishard index range past the end of the file.
  Bytes bad = shard;
  EncodeFixed64LE(bad.data() + 24, 1000);
  const std::string size = std::to_string(bad.size());
  r = MinishardIndexRange(spec, bad, 1, bad.size(), "3.shard");
  EXPECT_ERROR(r, ErrorKind::kCorruptData, "3.shard", "entry 1 at bytes [16, 32)", ", 1000)",
               "the " + size + "-byte shard");
  // Start after end.
  EncodeFixed64LE(bad.data() + 16, 7);
  EncodeFixed64LE(bad.data() + 24, 3);
  EXPECT_ERROR(MinishardIndexRange(spec, bad, 1, bad.size(), "3.shard"), ErrorKind::kCorruptData, "3.shard",
               "entry 1 at bytes [16, 32)", "range [7, 3)");
  EXPECT_ERROR(MinishardIndexRange(spec, shard, 2, shard.size(), "3.shard"), ErrorKind::kInvalidArgument, "3.shard",
               "minishard out of range");
  // A minishard index whose size is not a multiple of 24, and one pointing past the end.
  EXPECT_ERROR(DecodeMinishardIndex(Bytes(23, 0), 32, 100, "3.shard"), ErrorKind::kCorruptData, "3.shard",
               "minishard index of 23 bytes", "24-byte entries");
  Bytes past = U64s({1, 0, 1000});
  EXPECT_ERROR(DecodeMinishardIndex(past, 32, 100, "3.shard [40, 64)"), ErrorKind::kCorruptData, "3.shard [40, 64)",
               "entry 0 (chunk 1)", "100-byte shard");
  Bytes overflow = U64s({1, ~uint64_t{0}, 5});
  EXPECT_ERROR(DecodeMinishardIndex(overflow, 32, 100, "3.shard"), ErrorKind::kCorruptData, "3.shard",
               "entry 0 (chunk 1)", "100-byte shard");
  // gzip garbage.
  EXPECT_ERROR(DecodeShardBytes(ShardEncoding::kGzip, View("not gzip")), ErrorKind::kCorruptData, "gzip codec");
}

TEST(ShardFormatTest, RejectsDuplicateIdsAndMixedShards) {
  const std::string a = "A";
  EXPECT_ERROR(EncodeShard(IdentitySpec(1, 0, ShardEncoding::kRaw, ShardEncoding::kRaw), {{1, View(a)}, {1, View(a)}}),
               ErrorKind::kInvalidArgument, "chunk id 1 given twice");
  EXPECT_ERROR(EncodeShard(IdentitySpec(0, 2, ShardEncoding::kRaw, ShardEncoding::kRaw), {{1, View(a)}, {2, View(a)}}),
               ErrorKind::kInvalidArgument, "different shards");
}

// DecodeShardEntries lists every chunk of a shard EncodeShard built, with its bytes' range, and
// names the minishard index's byte range when one is corrupt.
TEST(ShardFormatTest, DecodeShardEntriesListsEveryChunk) {
  for (const ShardEncoding enc : {ShardEncoding::kRaw, ShardEncoding::kGzip}) {
    const ShardingSpec spec = IdentitySpec(2, 0, enc, enc);
    std::vector<std::string> data;
    std::vector<std::pair<uint64_t, ByteView>> chunks;
    for (uint64_t id : {9, 2, 4, 7, 0})
      data.push_back(std::string(static_cast<size_t>(id + 1), static_cast<char>('a' + id)));
    size_t k = 0;
    for (uint64_t id : {9, 2, 4, 7, 0}) chunks.emplace_back(id, View(data[k++]));
    auto shard = EncodeShard(spec, chunks);
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    auto entries = DecodeShardEntries(spec, *shard, "memory://s.shard");
    ASSERT_TRUE(entries.ok()) << entries.status().ToString();
    std::map<uint64_t, std::string> got;
    for (const ChunkEntry& e : *entries) {
      auto bytes = DecodeShardBytes(enc, ByteView(*shard).subspan(e.begin, e.end - e.begin));
      ASSERT_TRUE(bytes.ok());
      got[e.chunk_id] = std::string(bytes->begin(), bytes->end());
    }
    EXPECT_EQ(got, (std::map<uint64_t, std::string>{{0, "a"}, {2, "ccc"}, {4, "eeeee"}, {7, "hhhhhhhh"},
                                                    {9, "jjjjjjjjjj"}}));
    // Minishard 1's index (chunk 9) moved past the end of the file.
    Bytes bad = *shard;
    for (int b = 0; b < 8; ++b) bad[static_cast<size_t>(16 + b)] = static_cast<uint8_t>((bad.size() + 8) >> (8 * b));
    for (int b = 0; b < 8; ++b) bad[static_cast<size_t>(24 + b)] = static_cast<uint8_t>((bad.size() + 16) >> (8 * b));
    auto corrupt = DecodeShardEntries(spec, bad, "memory://s.shard");
    ASSERT_FALSE(corrupt.ok());
    EXPECT_EQ(corrupt.status().kind(), ErrorKind::kCorruptData);
    EXPECT_NE(corrupt.status().message().find("memory://s.shard"), std::string::npos) << corrupt.status().ToString();
    EXPECT_NE(corrupt.status().message().find("bytes ["), std::string::npos) << corrupt.status().ToString();
  }
}

}  // namespace
}  // namespace tessera::precomputed
