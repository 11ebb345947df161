#include "tessera/precomputed/murmurhash3.h"

#include <string>

#include <gtest/gtest.h>

namespace tessera::precomputed {
namespace {

std::string Hex(const std::array<uint8_t, 16>& d) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) s += {kDigits[b >> 4], kDigits[b & 15]};
  return s;
}

std::array<uint8_t, 16> Hash(const std::string& key, uint32_t seed) {
  return MurmurHash3_x86_128(ByteView(reinterpret_cast<const uint8_t*>(key.data()), key.size()), seed);
}

// SMHasher's verification test, the published check value of the reference implementation:
// hash keys {}, {0}, {0,1}, ... of lengths 0..255 with seed 256 - length, hash the concatenated
// digests with seed 0, and read the first 4 bytes as a little-endian uint32.
TEST(MurmurHash3Test, SmhasherVerificationValue) {
  Bytes key, digests;
  for (int len = 0; len < 256; ++len) {
    const std::array<uint8_t, 16> d = MurmurHash3_x86_128(key, static_cast<uint32_t>(256 - len));
    digests.insert(digests.end(), d.begin(), d.end());
    key.push_back(static_cast<uint8_t>(len));
  }
  const std::array<uint8_t, 16> final = MurmurHash3_x86_128(digests, 0);
  EXPECT_EQ(DecodeFixed32LE(final.data()), 0xB3ECE62Au);
}

// Digests of short keys (every tail length class) as the reference implementation computes them
// (checked against mmh3 5.3.1's hash128(key, seed, x64arch=False)).
TEST(MurmurHash3Test, KnownDigests) {
  EXPECT_EQ(Hex(Hash("", 0)), "00000000000000000000000000000000");
  EXPECT_EQ(Hex(Hash("", 1)), "ecadc488b901d254b901d254b901d254");
  EXPECT_EQ(Hex(Hash("a", 0)), "3c9394a71bb056551bb056551bb05655");
  EXPECT_EQ(Hex(Hash("abc", 1)), "ab7b7c320083a3210083a3210083a321");
  EXPECT_EQ(Hex(Hash("0123456789abcdef", 0)), "09447dfb0ad3ae369b1dad48fd3b2b57");
  EXPECT_EQ(Hex(Hash("The quick brown fox jumps over the lazy dog", 0)), "c383152f672ceeec6cf67b5d2c1de9e5");
  EXPECT_EQ(Hex(Hash("The quick brown fox jumps over the lazy dog", 1)), "1dc2a4d5eb7306345dffae2b99ae7e9f");
}

TEST(MurmurHash3Test, ChunkIdHashIsTheLowEightBytesOfTheDigest) {
  EXPECT_EQ(MurmurHash3ChunkId(0), 0x4772b084e028ae41ull);
  EXPECT_EQ(MurmurHash3ChunkId(1), 0xe8bd67d616d4ce9aull);
  EXPECT_EQ(MurmurHash3ChunkId(2), 0xd62f9cd21b013f5aull);
  EXPECT_EQ(MurmurHash3ChunkId(0x123456789abcdef0ull), 0x535693d33dd34552ull);
  EXPECT_EQ(MurmurHash3ChunkId(~0ull), 0x574f66bd212b5d1aull);
}

}  // namespace
}  // namespace tessera::precomputed
