#include "tessera/precomputed/compressed_segmentation.h"

#include <random>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"

namespace tessera::precomputed {
namespace {

Bytes Words(std::initializer_list<uint32_t> words) {
  Bytes out;
  for (uint32_t w : words) PutFixed32LE(&out, w);
  return out;
}

Bytes Labels32(std::initializer_list<uint32_t> labels) { return Words(labels); }

TEST(CompressedSegmentationTest, HandCheckedEncoding) {
  SegmentationGeometry g;
  g.volume_xyz = {2, 1, 1};
  g.block_xyz = {2, 1, 1};
  const Bytes labels = Labels32({5, 7});
  auto encoded = EncodeCompressedSegmentation(g, labels);
  ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
  // channel offset 1 | header: table at 3, 1 bit; values at 2 | values 0b10 | table 5, 7
  EXPECT_EQ(*encoded, Words({1, 0x01000003u, 2, 0b10, 5, 7}));
  Bytes decoded;
  ASSERT_TRUE(DecodeCompressedSegmentation(g, *encoded, &decoded, "chunk").ok());
  EXPECT_EQ(decoded, labels);
}

TEST(CompressedSegmentationTest, UniformBlocksUseZeroBitsAndShareTables) {
  SegmentationGeometry g;
  g.volume_xyz = {4, 2, 1};
  g.block_xyz = {2, 2, 1};
  const Bytes labels = Labels32({9, 9, 9, 9, 9, 9, 9, 9});
  auto encoded = EncodeCompressedSegmentation(g, labels);
  ASSERT_TRUE(encoded.ok());
  // Two 0-bit blocks (no value words), one shared table {9} at word 4 of the channel.
  EXPECT_EQ(*encoded, Words({1, 0x00000004u, 4, 0x00000004u, 5, 9}));
}

TEST(CompressedSegmentationTest, RandomVolumesRoundTrip) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 60; ++trial) {
    SegmentationGeometry g;
    for (int d = 0; d < 3; ++d) {
      g.volume_xyz[d] = 1 + static_cast<int64_t>(rng() % 13);
      g.block_xyz[d] = 1 + static_cast<int64_t>(rng() % 5);
    }
    g.num_channels = 1 + static_cast<int64_t>(rng() % 3);
    g.label_bytes = rng() % 2 ? 8 : 4;
    // Up to 40 distinct labels (so every bit width up to 8 appears), with large uint64 values.
    const uint64_t distinct = 1 + rng() % 40;
    const int64_t n = g.num_channels * g.volume_xyz[0] * g.volume_xyz[1] * g.volume_xyz[2];
    Bytes labels(static_cast<size_t>(n * g.label_bytes));
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t label = (rng() % distinct) * 0x9E3779B97F4A7C15ull;
      if (g.label_bytes == 8) EncodeFixed64LE(labels.data() + 8 * i, label);
      else EncodeFixed32LE(labels.data() + 4 * i, static_cast<uint32_t>(label));
    }
    auto encoded = EncodeCompressedSegmentation(g, labels);
    ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
    Bytes decoded;
    Status st = DecodeCompressedSegmentation(g, *encoded, &decoded, "chunk");
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(decoded, labels) << "trial " << trial;
  }
}

TEST(CompressedSegmentationTest, CorruptDataIsAnErrorNamingTheRange) {
  SegmentationGeometry g;
  g.volume_xyz = {2, 1, 1};
  g.block_xyz = {2, 1, 1};
  Bytes good = Words({1, 0x01000003u, 2, 0b10, 5, 7}), out;
  auto expect_corrupt = [&](Bytes data, const char* needle) {
    Status st = DecodeCompressedSegmentation(g, data, &out, "0-2_0-1_0-1");
    EXPECT_ERROR(st, ErrorKind::kCorruptData, "0-2_0-1_0-1", needle);
  };
  expect_corrupt(Bytes(good.begin(), good.begin() + 8), "[");          // truncated: header past the end
  expect_corrupt(Words({1, 0x03000003u, 2, 0b10, 5, 7}), "3 bits");    // bit width not allowed
  expect_corrupt(Words({1, 0x01000009u, 2, 0b10, 5, 7}), "outside");   // table past the end
  expect_corrupt(Words({7, 0x01000003u, 2, 0b10, 5, 7}), "channel 0"); // channel offset past the data
  expect_corrupt(Words({1, 0x01000004u, 2, 0b10, 5, 7}), "lookup index 1");  // index 1 reads past the table
  expect_corrupt(Bytes(good.begin(), good.end() - 1), "multiple of 4");
}

TEST(CompressedSegmentationTest, RejectsWrongInputSize) {
  SegmentationGeometry g;
  g.volume_xyz = {2, 2, 2};
  g.block_xyz = {8, 8, 8};
  EXPECT_ERROR(EncodeCompressedSegmentation(g, Bytes(12, 0)), ErrorKind::kInvalidArgument, "compressed_segmentation",
               "got 12 bytes", "expected 32");
}

}  // namespace
}  // namespace tessera::precomputed
