#include "tessera/zarr/vlen_chunk.h"

#include <gtest/gtest.h>

namespace tessera::zarr {
namespace {

TEST(VlenChunkTest, RoundTripsEmptyAndUnicodeElements) {
  const std::vector<std::string> elements = {"a", "", "b\xc3\xa9", std::string("x\0y", 3)};
  Bytes encoded = EncodeVlenChunk(elements);
  // count, then length + bytes per element
  EXPECT_EQ(encoded.size(), 4u + 4 * 4 + 1 + 0 + 3 + 3);
  Result<std::vector<std::string>> decoded = DecodeVlenChunk(encoded, elements.size(), "c/0");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, elements);
}

TEST(VlenChunkTest, RefusesWrongCountNamingTheChunk) {
  Bytes encoded = EncodeVlenChunk(std::vector<std::string>{"a", "b"});
  Result<std::vector<std::string>> decoded = DecodeVlenChunk(encoded, 3, "arr/c/1");
  ASSERT_EQ(decoded.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(decoded.status().message().find("arr/c/1"), std::string::npos);
  EXPECT_NE(decoded.status().message().find("holds 2 elements, the chunk has 3"), std::string::npos);
}

TEST(VlenChunkTest, RefusesLengthPastTheEndWithItsByteRange) {
  Bytes encoded = EncodeVlenChunk(std::vector<std::string>{"abc"});
  encoded[4] = 200;  // element 0 claims 200 bytes
  Result<std::vector<std::string>> decoded = DecodeVlenChunk(encoded, 1, "c/0");
  ASSERT_EQ(decoded.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(decoded.status().message().find("element 0 (bytes 8..208) runs past the end"), std::string::npos)
      << decoded.status().message();
}

TEST(VlenChunkTest, RefusesTruncatedHeaderHugeCountAndTrailingBytes) {
  EXPECT_EQ(DecodeVlenChunk(Bytes{1, 0}, 1, "k").status().kind(), ErrorKind::kCorruptData);
  Bytes huge = {0xff, 0xff, 0xff, 0x0f};
  Result<std::vector<std::string>> h = DecodeVlenChunk(huge, 0x0fffffff, "k");
  ASSERT_EQ(h.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(h.status().message().find("too short"), std::string::npos);
  Bytes trailing = EncodeVlenChunk(std::vector<std::string>{"a"});
  trailing.push_back(7);
  Result<std::vector<std::string>> t = DecodeVlenChunk(trailing, 1, "k");
  ASSERT_EQ(t.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(t.status().message().find("follow the last element"), std::string::npos);
}

}  // namespace
}  // namespace tessera::zarr
