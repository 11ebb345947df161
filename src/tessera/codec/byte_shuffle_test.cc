#include "tessera/codec/byte_shuffle.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace tessera {
namespace {

// The definition, element by element: byte j of element i at j * elements + i; a tail past the last
// whole element copied.
std::vector<uint8_t> ReferenceShuffle(size_t element_bytes, const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out(in);
  if (element_bytes <= 1) return out;
  const size_t elements = in.size() / element_bytes;
  for (size_t i = 0; i < elements; ++i)
    for (size_t j = 0; j < element_bytes; ++j) out[j * elements + i] = in[i * element_bytes + j];
  return out;
}

TEST(ByteShuffleTest, HandCheckedTwoAndFourByteElements) {
  const std::vector<uint8_t> two = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07};  // 3 elements and a tail byte
  std::vector<uint8_t> out(two.size());
  ByteShuffle(2, two.size(), two.data(), out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{0x01, 0x03, 0x05, 0x02, 0x04, 0x06, 0x07}));
  const std::vector<uint8_t> four = {1, 2, 3, 4, 5, 6, 7, 8};
  out.assign(four.size(), 0);
  ByteShuffle(4, four.size(), four.data(), out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 5, 2, 6, 3, 7, 4, 8}));
}

TEST(ByteShuffleTest, MatchesTheDefinitionAndUnshuffles) {
  std::mt19937 rng(7);
  for (size_t element_bytes : {1, 2, 3, 4, 5, 8, 16, 300}) {
    for (size_t bytes : {0, 1, 2, 15, 31, 32, 33, 64, 1000, 4099, 32768}) {
      std::vector<uint8_t> in(bytes);
      for (auto& b : in) b = static_cast<uint8_t>(rng());
      std::vector<uint8_t> shuffled(bytes), back(bytes);
      ByteShuffle(element_bytes, bytes, in.data(), shuffled.data());
      EXPECT_EQ(shuffled, ReferenceShuffle(element_bytes, in)) << element_bytes << " x " << bytes;
      ByteUnshuffle(element_bytes, bytes, shuffled.data(), back.data());
      EXPECT_EQ(back, in) << element_bytes << " x " << bytes;
    }
  }
}

}  // namespace
}  // namespace tessera
