#include "tessera/stream/synthetic.h"

#include <cstring>
#include <random>

#include <gtest/gtest.h>

namespace tessera::stream {
namespace {

TEST(SyntheticTest, CameraValuesAreTheDocumentedGradientPlusNoise) {
  // Element e of rows of 3000: row = e / 3000, col = e % 3000,
  // value = (col % 1024) / 4 + (row % 256) * 3 + 100 + noise, noise = (e * golden) >> 61 in [0, 8).
  Bytes out(2 * 3);
  FillSynthetic(SyntheticKind::kCamera, DataType::kUInt16, 3000, 3001 * 1000 - 1, 3, out.data());
  for (int k = 0; k < 3; ++k) {
    const uint64_t e = 3001 * 1000 - 1 + k, row = e / 3000, col = e % 3000;
    const uint64_t noise = (e * 0x9e3779b97f4a7c15ull) >> 61;
    uint16_t got;
    std::memcpy(&got, out.data() + 2 * k, 2);
    EXPECT_EQ(got, (col % 1024) / 4 + (row % 256) * 3 + 100 + noise) << k;
  }
}

TEST(SyntheticTest, AnySplitGivesTheSameStream) {
  std::mt19937 rng(3);
  for (SyntheticKind kind : {SyntheticKind::kCamera, SyntheticKind::kRandom, SyntheticKind::kZeros}) {
    for (DataType dtype : {DataType::kUInt8, DataType::kUInt16, DataType::kFloat32, DataType::kInt64, DataType::kBool}) {
      const int64_t row = 1 + rng() % 50, n = 1 + rng() % 2000;
      const size_t item = ItemSize(dtype);
      Bytes whole(static_cast<size_t>(n) * item), pieces(whole.size());
      FillSynthetic(kind, dtype, row, 17, n, whole.data());
      for (int64_t i = 0; i < n;) {
        const int64_t m = std::min<int64_t>(n - i, 1 + rng() % 97);
        FillSynthetic(kind, dtype, row, 17 + i, m, pieces.data() + i * item);
        i += m;
      }
      EXPECT_EQ(whole, pieces) << static_cast<int>(kind) << " " << DataTypeName(dtype);
    }
  }
}

TEST(SyntheticTest, ParallelFillGivesTheSameStream) {
  for (SyntheticKind kind : {SyntheticKind::kCamera, SyntheticKind::kRandom}) {
    for (DataType dtype : {DataType::kUInt16, DataType::kFloat32, DataType::kComplex128, DataType::kBool}) {
      const int64_t n = (int64_t{1} << 20) + 12345;
      const size_t item = ItemSize(dtype);
      Bytes serial(static_cast<size_t>(n) * item), parallel(serial.size());
      FillSynthetic(kind, dtype, 777, 4321, n, serial.data());
      FillSyntheticParallel(kind, dtype, 777, 4321, n, parallel.data(), 3);
      EXPECT_EQ(serial, parallel) << static_cast<int>(kind) << " " << DataTypeName(dtype);
    }
  }
}

}  // namespace
}  // namespace tessera::stream
