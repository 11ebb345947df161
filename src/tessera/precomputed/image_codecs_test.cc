#include "tessera/precomputed/image_codecs.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include <gtest/gtest.h>

#include "tessera/precomputed/chunk_encoding.h"

namespace tessera::precomputed {
namespace {

// A smooth image (what JPEG keeps well): gradients per component.
Bytes Smooth(int64_t width, int64_t height, int components) {
  Bytes p(static_cast<size_t>(width * height * components));
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int c = 0; c < components; ++c)
        p[static_cast<size_t>((y * width + x) * components + c)] =
            static_cast<uint8_t>(128 + 60 * std::sin(x / 9.0 + c) * std::cos(y / 11.0));
  return p;
}

Bytes Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& v : b) v = static_cast<uint8_t>(rng());
  return b;
}

int MaxAbsDiff(const Bytes& a, const Bytes& b) {
  int m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(int(a[i]) - int(b[i])));
  return m;
}

TEST(JpegCodecTest, RoundTripsWithinTheQualitysError) {
  for (int components : {1, 3}) {
    for (auto [w, h] : {std::pair<int64_t, int64_t>{64, 64 * 8}, {13, 7 * 5}, {1, 1}}) {
      SCOPED_TRACE(std::to_string(components) + " " + std::to_string(w) + "x" + std::to_string(h));
      const Bytes pixels = Smooth(w, h, components);
      auto encoded = EncodeJpeg(pixels.data(), w, h, components, 95);
      ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
      EXPECT_EQ((*encoded)[0], 0xFF);
      EXPECT_EQ((*encoded)[1], 0xD8);
      auto image = DecodeJpeg(*encoded, w * h * components, "chunk");
      ASSERT_TRUE(image.ok()) << image.status().ToString();
      EXPECT_EQ(image->width, w);
      EXPECT_EQ(image->height, h);
      EXPECT_EQ(image->components, components);
      ASSERT_EQ(image->pixels.size(), pixels.size());
      // Quality 95 on gradients: a few levels (chroma subsampling costs the 3-component case more).
      EXPECT_LE(MaxAbsDiff(image->pixels, pixels), components == 1 ? 4 : 12);
    }
  }
}

TEST(JpegCodecTest, DeterministicAndQualityMatters) {
  const Bytes pixels = Random(32 * 32, 1);
  auto a = EncodeJpeg(pixels.data(), 32, 32, 1, 50);
  auto b = EncodeJpeg(pixels.data(), 32, 32, 1, 50);
  auto c = EncodeJpeg(pixels.data(), 32, 32, 1, 100);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_GT(c->size(), a->size());
}

TEST(JpegCodecTest, RefusesBadArguments) {
  const Bytes pixels(16);
  EXPECT_EQ(EncodeJpeg(pixels.data(), 4, 4, 2, 75).status().kind(), ErrorKind::kInvalidArgument);
  EXPECT_EQ(EncodeJpeg(pixels.data(), 4, 4, 1, 0).status().kind(), ErrorKind::kInvalidArgument);
  EXPECT_EQ(EncodeJpeg(pixels.data(), 4, 4, 1, 101).status().kind(), ErrorKind::kInvalidArgument);
  EXPECT_EQ(EncodeJpeg(pixels.data(), 0, 4, 1, 75).status().kind(), ErrorKind::kInvalidArgument);
}

TEST(JpegCodecTest, GarbageTruncationAndOversizeAreCorruptData) {
  const Bytes pixels = Smooth(24, 40, 3);
  auto encoded = EncodeJpeg(pixels.data(), 24, 40, 3, 80);
  ASSERT_TRUE(encoded.ok());
  for (size_t n = 0; n < encoded->size(); ++n) {
    Result<Image> r = DecodeJpeg(ByteView(encoded->data(), n), 24 * 40 * 3, "s0/0-24_0-8_0-5");
    ASSERT_FALSE(r.ok()) << "truncated to " << n;
    EXPECT_EQ(r.status().kind(), ErrorKind::kCorruptData);
    EXPECT_NE(r.status().message().find("s0/0-24_0-8_0-5"), std::string::npos) << r.status().message();
  }
  // Flipped bytes: an error or an image of the same size, never a crash (the sanitizer build runs this).
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    Bytes bad = *encoded;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    Result<Image> r = DecodeJpeg(bad, 24 * 40 * 3, "chunk");
    if (r.ok()) EXPECT_EQ(r->pixels.size(), static_cast<size_t>(r->width * r->height * r->components));
    else EXPECT_EQ(r.status().kind(), ErrorKind::kCorruptData);
  }
  Result<Image> big = DecodeJpeg(*encoded, 24 * 40 * 3 - 1, "chunk");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("larger than"), std::string::npos) << big.status().message();
  EXPECT_FALSE(DecodeJpeg(Random(500, 3), 1 << 20, "chunk").ok());
}

TEST(PngCodecTest, RoundTripsExactlyInEveryComponentCountAndDepth) {
  for (int components = 1; components <= 4; ++components) {
    for (int sample_bytes : {1, 2}) {
      for (int level : {0, 6, 9}) {
        const int64_t w = 17, h = 9 * 4;
        const Bytes pixels = Random(static_cast<size_t>(w * h * components * sample_bytes), components * 10 + sample_bytes);
        auto encoded = EncodePng(pixels.data(), w, h, components, sample_bytes, level);
        ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
        auto image = DecodePng(*encoded, w * h * components, "chunk");
        ASSERT_TRUE(image.ok()) << image.status().ToString();
        EXPECT_EQ(image->width, w);
        EXPECT_EQ(image->height, h);
        EXPECT_EQ(image->components, components);
        EXPECT_EQ(image->sample_bytes, sample_bytes);
        EXPECT_EQ(image->pixels, pixels) << components << " components, " << 8 * sample_bytes << " bits, level " << level;
      }
    }
  }
}

// PNG stores 16-bit samples big-endian: a stored (level 0) image shows them in its raw rows.
TEST(PngCodecTest, SixteenBitSamplesAreBigEndianInTheStream) {
  const Bytes pixels = {0x34, 0x12};  // one little-endian sample, 0x1234
  auto encoded = EncodePng(pixels.data(), 1, 1, 1, 2, 0);
  ASSERT_TRUE(encoded.ok());
  const Bytes big = {0x12, 0x34};
  EXPECT_NE(std::search(encoded->begin(), encoded->end(), big.begin(), big.end()), encoded->end());
  auto image = DecodePng(*encoded, 1, "chunk");
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->pixels, pixels);
}

TEST(PngCodecTest, GarbageTruncationAndOversizeAreCorruptData) {
  const Bytes pixels = Random(20 * 30 * 2 * 2, 5);
  auto encoded = EncodePng(pixels.data(), 20, 30, 2, 2, 6);
  ASSERT_TRUE(encoded.ok());
  for (size_t n = 0; n < encoded->size(); ++n) {
    Result<Image> r = DecodePng(ByteView(encoded->data(), n), 20 * 30 * 2, "s0/chunk");
    ASSERT_FALSE(r.ok()) << "truncated to " << n;
    EXPECT_EQ(r.status().kind(), ErrorKind::kCorruptData);
    EXPECT_NE(r.status().message().find("s0/chunk"), std::string::npos);
  }
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    Bytes bad = *encoded;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    Result<Image> r = DecodePng(bad, 20 * 30 * 2, "chunk");
    if (r.ok()) EXPECT_EQ(r->pixels.size(), static_cast<size_t>(r->width * r->height * r->components * r->sample_bytes));
    else EXPECT_EQ(r.status().kind(), ErrorKind::kCorruptData);
  }
  EXPECT_FALSE(DecodePng(*encoded, 20 * 30 * 2 - 1, "chunk").ok());
  EXPECT_FALSE(DecodePng(Random(300, 9), 1 << 20, "chunk").ok());
}

// The chunk layer: planar [c][z][y][x] voxels <-> one image x wide and y*z high with the channels
// interleaved, as Neuroglancer and tensorstore lay it out.
TEST(ImageChunkTest, PngChunksInterleaveChannelsAndRoundTrip) {
  ScaleInfo scale;
  scale.encoding = ChunkEncoding::kPng;
  scale.chunk_size = {5, 4, 3};
  const std::array<int64_t, 3> extent{5, 4, 3};
  const int64_t channels = 3;
  const Bytes voxels = Random(static_cast<size_t>(channels * 5 * 4 * 3 * 2), 21);  // uint16
  auto encoded = EncodeChunk(scale, channels, DataType::kUInt16, extent, voxels);
  ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
  auto image = DecodePng(*encoded, 1 << 20, "chunk");
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->width, 5);
  EXPECT_EQ(image->height, 12);
  EXPECT_EQ(image->components, 3);
  // Pixel (x=2, row y + 4*z = 1 + 4*2) component 1 is voxel [c=1][z=2][y=1][x=2].
  const size_t pixel = (9 * 5 + 2) * 3 + 1, voxel = ((1 * 3 + 2) * 4 + 1) * 5 + 2;
  EXPECT_EQ(image->pixels[pixel * 2], voxels[voxel * 2]);
  EXPECT_EQ(image->pixels[pixel * 2 + 1], voxels[voxel * 2 + 1]);
  auto decoded = DecodeChunk(scale, channels, DataType::kUInt16, extent, *encoded, "chunk");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, voxels);
  // The wrong channel count, dtype or extent is corrupt data naming what was expected.
  auto wrong = DecodeChunk(scale, 2, DataType::kUInt16, extent, *encoded, "s0/0-5_0-4_0-3");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(wrong.status().message().find("s0/0-5_0-4_0-3"), std::string::npos);
  EXPECT_FALSE(DecodeChunk(scale, channels, DataType::kUInt8, extent, *encoded, "chunk").ok());
  EXPECT_FALSE(DecodeChunk(scale, channels, DataType::kUInt16, {4, 4, 3}, *encoded, "chunk").ok());
}

// An edge chunk along z stored whole (a continued scale's, before its info grew) is cut.
TEST(ImageChunkTest, AChunkLongerAlongZThanTheExtentIsCut) {
  ScaleInfo scale;
  scale.encoding = ChunkEncoding::kPng;
  scale.chunk_size = {4, 2, 4};
  const Bytes whole = Random(4 * 2 * 4, 31);
  auto encoded = EncodeChunk(scale, 1, DataType::kUInt8, {4, 2, 4}, whole);
  ASSERT_TRUE(encoded.ok());
  auto cut = DecodeChunk(scale, 1, DataType::kUInt8, {4, 2, 3}, *encoded, "chunk");
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(*cut, Bytes(whole.begin(), whole.begin() + 4 * 2 * 3));
}

TEST(ImageChunkTest, JpegChunksOfThreeChannels) {
  ScaleInfo scale;
  scale.encoding = ChunkEncoding::kJpeg;
  scale.jpeg_quality = 100;
  scale.chunk_size = {16, 8, 2};
  const std::array<int64_t, 3> extent{16, 8, 2};
  Bytes voxels(3 * 16 * 8 * 2);
  for (size_t i = 0; i < voxels.size(); ++i) voxels[i] = static_cast<uint8_t>(i / 256 * 60 + 20);  // flat per channel
  auto encoded = EncodeChunk(scale, 3, DataType::kUInt8, extent, voxels);
  ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
  auto decoded = DecodeChunk(scale, 3, DataType::kUInt8, extent, *encoded, "chunk");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_LE(MaxAbsDiff(*decoded, voxels), 3);
}

}  // namespace
}  // namespace tessera::precomputed
