#include "tessera/index/morton.h"

#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::index {
namespace {

TEST(CompressedMortonTest, HandCheckedCodes) {
  // 2x2x2 grid: plain interleave x0 y0 z0.
  const int64_t cube[3] = {2, 2, 2};
  int64_t g[3] = {1, 0, 1};
  EXPECT_EQ(CompressedMortonCode(g, cube), 0b101u);
  // 4x1x2 grid: y has no bits; bit order x0 z0 x1.
  const int64_t flat[3] = {4, 1, 2};
  int64_t a[3] = {3, 0, 1}, b[3] = {2, 0, 1}, c[3] = {1, 0, 0};
  EXPECT_EQ(CompressedMortonCode(a, flat), 0b111u);
  EXPECT_EQ(CompressedMortonCode(b, flat), 0b110u);
  EXPECT_EQ(CompressedMortonCode(c, flat), 0b001u);
  // 3x5x1 grid: x has 2 bits, y 3 bits: x0 y0 x1 y1 y2.
  const int64_t odd[3] = {3, 5, 1};
  int64_t d[3] = {2, 4, 0};  // x = 10b, y = 100b -> x0=0 y0=0 x1=1 y1=0 y2=1
  EXPECT_EQ(CompressedMortonCode(d, odd), 0b10100u);
  EXPECT_EQ(CompressedMortonBits(odd), 5);
}

TEST(CompressedMortonTest, CodesAreDistinctAndFitTheirBits) {
  const int64_t grid[3] = {5, 3, 9};
  std::set<uint64_t> seen;
  const int bits = CompressedMortonBits(grid);
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        int64_t g[3] = {x, y, z};
        const uint64_t code = CompressedMortonCode(g, grid);
        EXPECT_LT(code, uint64_t{1} << bits);
        EXPECT_TRUE(seen.insert(code).second);
      }
}

TEST(CompressedMortonTest, LargeAsymmetricGridUsesAll64Bits) {
  const int64_t grid[3] = {int64_t{1} << 20, int64_t{1} << 20, int64_t{1} << 24};
  EXPECT_EQ(CompressedMortonBits(grid), 64);
  int64_t g[3] = {0, 0, (int64_t{1} << 24) - 1};
  // z's top 4 bits come after x and y run out of bits: bits 60..63.
  EXPECT_EQ(CompressedMortonCode(g, grid) >> 60, 0xFu);
}

TEST(CompressedMortonTest, LowBitsGoToXYZInTurnWhileEachHasBits) {
  const int bits[3] = {1, 3, 2};  // x, y, z bits of the grid
  int out[3];
  MortonLowBitsPerDimension(bits, 0, out);
  EXPECT_EQ((std::vector<int>{out[0], out[1], out[2]}), (std::vector<int>{0, 0, 0}));
  MortonLowBitsPerDimension(bits, 4, out);  // x y z | y (x has no second bit)
  EXPECT_EQ((std::vector<int>{out[0], out[1], out[2]}), (std::vector<int>{1, 2, 1}));
  MortonLowBitsPerDimension(bits, 6, out);  // every bit
  EXPECT_EQ((std::vector<int>{out[0], out[1], out[2]}), (std::vector<int>{1, 3, 2}));
  MortonLowBitsPerDimension(bits, 9, out);  // more bits than the code has: all of them
  EXPECT_EQ((std::vector<int>{out[0], out[1], out[2]}), (std::vector<int>{1, 3, 2}));
}

}  // namespace
}  // namespace tessera::index
