// JPEG XL chunks: tiny streams written by imagecodecs (libjxl 0.11, as cloud-volume writes them),
// decoded by Debian's libjxl; truncated, damaged and oversized streams are errors, never crashes.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "tessera/precomputed/chunk_encoding.h"
#include "tessera/precomputed/image_codecs.h"
#include "tessera/precomputed/info.h"

namespace tessera::precomputed {
namespace {

// imagecodecs.jpegxl_encode(frame, photometric='GRAY', lossless=True) of the 4 wide, 6 high
// frame ((arange(24) * 37 + 11) % 256).reshape(6, 4)
constexpr uint8_t kGray4x6[] = {
    0xff, 0x0a, 0x28, 0x00, 0x06, 0x80, 0xa0, 0xb8, 0x11, 0x08, 0x04, 0x01, 0x00, 0xa4, 0x00, 0x4b,
    0x18, 0x8b, 0x15, 0x52, 0x5c, 0x15, 0xfe, 0x77, 0x39, 0xec, 0xed, 0x91, 0x97, 0xc8, 0xb9, 0xa1,
    0xe2, 0x8f, 0x45, 0x08, 0x0d, 0x20, 0x5c, 0x6f, 0x91, 0xf7, 0x76, 0xd4, 0xf5, 0xb8, 0x5a, 0x69,
    0x51, 0xd7, 0xe7, 0xfe, 0xe3, 0x6a, 0x69, 0x07,
};

// three 5 wide, 4 high frames ((arange(20) * 37 + 11 * s) % 256 for s = 1, 2, 3) as cloud-volume
// writes 3 channels: jpegxl_encode(frames[3][4][5], photometric='RGB', lossless=True), an animation
constexpr uint8_t kThreeFrames5x4[] = {
    0xff, 0x0a, 0x18, 0x30, 0x41, 0x13, 0x00, 0x08, 0x8a, 0x5b, 0x02, 0x08, 0x04, 0x01, 0x00, 0x94,
    0x00, 0x4b, 0x18, 0x8b, 0x15, 0x52, 0x5c, 0xd7, 0x6e, 0x39, 0x4c, 0x16, 0xab, 0x85, 0x33, 0x28,
    0x89, 0xba, 0xfa, 0x7e, 0x34, 0x04, 0x41, 0x10, 0xa5, 0xfb, 0x09, 0xc9, 0x5f, 0x75, 0xb1, 0x4c,
    0x7d, 0x13, 0xb7, 0x2a, 0xcb, 0xd4, 0x08, 0x04, 0x01, 0x00, 0x94, 0x00, 0x4b, 0x18, 0x8b, 0x15,
    0x52, 0x5c, 0x17, 0xe2, 0x96, 0xc3, 0x64, 0x57, 0x26, 0x67, 0x50, 0x92, 0xff, 0x2c, 0x46, 0x47,
    0x08, 0xa1, 0x0f, 0xf1, 0x09, 0x89, 0xbf, 0xaa, 0xda, 0xd2, 0x75, 0xc6, 0x6f, 0x65, 0x86, 0x57,
    0x03, 0x08, 0x04, 0x05, 0x00, 0x88, 0x00, 0x4b, 0x18, 0x8b, 0x15, 0x52, 0x5c, 0x17, 0xea, 0x64,
    0x21, 0x69, 0x9a, 0x76, 0xdf, 0x3e, 0x60, 0x13, 0x0c, 0x40, 0x08, 0xa1, 0x75, 0xf8, 0x45, 0xe8,
    0x53, 0xae, 0x2d, 0xa7, 0x88, 0x5e, 0xe5, 0x2e, 0x37,
};

// one interleaved RGB 4x6 frame (which no writer of chunks makes)
constexpr uint8_t kRgb4x6[] = {
    0xff, 0x0a, 0x28, 0x00, 0x06, 0x80, 0x48, 0x08, 0x04, 0x01, 0x00, 0x04, 0x01, 0x4b, 0x18, 0x93,
    0x8e, 0x83, 0x83, 0x99, 0x22, 0x89, 0xb4, 0x6b, 0xb8, 0xdd, 0x67, 0xcb, 0xc0, 0x5e, 0x6c, 0x2c,
    0x6e, 0x81, 0x41, 0xe0, 0xc0, 0x07, 0x40, 0x17, 0x08, 0x0c, 0x20, 0x31, 0x60, 0xc0, 0xc0, 0xcc,
    0xcc, 0x23, 0x37, 0x91, 0x48, 0x24, 0x49, 0x92, 0x4e, 0x22, 0x91, 0x48, 0x92, 0xe4, 0xa7, 0xe7,
    0xd3, 0x46, 0x52, 0xb3, 0xde, 0x01, 0xd7, 0x1d, 0x17, 0x5a, 0x68, 0xae, 0x0b, 0x00,
};

// RGBA 5x6 (alpha is an extra channel)
constexpr uint8_t kRgba5x6[] = {
    0xff, 0x0a, 0x28, 0x00, 0x08, 0x80, 0x95, 0x08, 0x10, 0x10, 0x00, 0x50, 0x01, 0x4b, 0x18, 0x93,
    0x8e, 0x83, 0x83, 0x29, 0x46, 0x46, 0x93, 0xb1, 0xb5, 0x31, 0xc6, 0x18, 0x11, 0x63, 0xb0, 0x42,
    0x0c, 0x16, 0x8d, 0x8c, 0x41, 0x8c, 0xc1, 0x13, 0x15, 0x79, 0x01, 0xf1, 0x00, 0x7a, 0x9e, 0x85,
    0x07, 0x96, 0x0c, 0x25, 0x70, 0x60, 0x8e, 0xf6, 0x6d, 0x39, 0xcd, 0xe4, 0xe4, 0xf0, 0x9f, 0x01,
    0xe0, 0xbb, 0x8f, 0xfe, 0x8d, 0xf0, 0x93, 0x3e, 0xf4, 0x1b, 0xab, 0x9e, 0x28, 0x67, 0xf5, 0x2b,
    0x55, 0xe5, 0x55, 0x30, 0x46, 0xf4, 0x25, 0x94, 0x5e, 0x49, 0xe3, 0x60, 0xe8, 0x93, 0x23, 0x72,
    0x01,
};

// 16-bit gray 4x6
constexpr uint8_t kGray16Bit4x6[] = {
    0x00, 0x00, 0x00, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a, 0x00, 0x00, 0x00, 0x14,
    0x66, 0x74, 0x79, 0x70, 0x6a, 0x78, 0x6c, 0x20, 0x00, 0x00, 0x00, 0x00, 0x6a, 0x78, 0x6c, 0x20,
    0x00, 0x00, 0x00, 0x09, 0x6a, 0x78, 0x6c, 0x6c, 0x0a, 0x00, 0x00, 0x00, 0x51, 0x6a, 0x78, 0x6c,
    0x63, 0xff, 0x0a, 0x28, 0x00, 0x06, 0xe0, 0x07, 0x28, 0x5a, 0x04, 0x08, 0x04, 0x01, 0x00, 0xe4,
    0x00, 0x4b, 0x38, 0x68, 0x98, 0xc2, 0x83, 0xf7, 0x15, 0x14, 0x24, 0xa4, 0x80, 0x8d, 0x0b, 0x00,
    0xd6, 0xcd, 0x2c, 0x4c, 0x25, 0x45, 0x25, 0x45, 0x25, 0x25, 0x94, 0x14, 0x95, 0x14, 0x95, 0x94,
    0x6a, 0x6f, 0x7f, 0x8d, 0x85, 0x50, 0x52, 0x42, 0x49, 0x51, 0x49, 0xa9, 0xf6, 0x96, 0x5f, 0x63,
    0x09, 0x25, 0x45, 0x25, 0x25, 0x94, 0x94, 0x6a, 0x6f, 0x01,
};

ByteView View(const uint8_t* data, size_t size) { return ByteView(data, size); }
template <size_t N>
ByteView View(const uint8_t (&stream)[N]) {
  return ByteView(stream, N);
}

// The gray frame `s` of `n` samples the streams above hold: (i * 37 + 11 * s) % 256 in row order.
Bytes Frame(int s, int n) {
  Bytes f(n);
  for (int i = 0; i < n; ++i) f[i] = static_cast<uint8_t>((i * 37 + 11 * s) % 256);
  return f;
}

Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

void ExpectCorrupt(const Result<Image>& r, const std::string& where, const std::string& says) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kCorruptData);
  EXPECT_NE(r.status().message().find(where), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().message();
}

TEST(JxlCodecTest, DecodesOneGrayFrame) {
  Result<Image> r = DecodeJxl(View(kGray4x6), 24, "chunk");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->width, 4);
  EXPECT_EQ(r->height, 6);
  EXPECT_EQ(r->components, 1);
  EXPECT_EQ(r->sample_bytes, 1);
  EXPECT_EQ(r->pixels, Frame(1, 24));
}

TEST(JxlCodecTest, DecodesOneFramePerChannelAsPlanes) {
  Result<Image> r = DecodeJxl(View(kThreeFrames5x4), 60, "chunk");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->width, 5);
  EXPECT_EQ(r->height, 4);
  EXPECT_EQ(r->components, 3);
  EXPECT_TRUE(r->planar);
  EXPECT_EQ(r->pixels, Concat({Frame(1, 20), Frame(2, 20), Frame(3, 20)}));
}

TEST(JxlCodecTest, RefusesColorAlphaAndSixteenBitImages) {
  ExpectCorrupt(DecodeJxl(View(kRgb4x6), 1 << 20, "s0/rgb"), "s0/rgb", "color frames");
  ExpectCorrupt(DecodeJxl(View(kRgba5x6), 1 << 20, "s0/alpha"), "s0/alpha", "extra channel");
  ExpectCorrupt(DecodeJxl(View(kGray16Bit4x6), 1 << 20, "s0/16"), "s0/16", "16-bit integer samples");
}

TEST(JxlCodecTest, ImagesLargerThanTheChunkAreRefused) {
  ExpectCorrupt(DecodeJxl(View(kGray4x6), 23, "s0/a"), "s0/a", "larger than the chunk's 23 samples");
  // Three frames fit one by one; the third is refused before it is decoded.
  ExpectCorrupt(DecodeJxl(View(kThreeFrames5x4), 59, "s0/b"), "s0/b", "larger than the chunk's 59 samples");
}

TEST(JxlCodecTest, EveryTruncationIsCorruptData) {
  for (ByteView stream : {View(kGray4x6), View(kThreeFrames5x4)}) {
    for (size_t n = 0; n < stream.size(); ++n) {
      Result<Image> r = DecodeJxl(stream.first(n), 1 << 20, "s0/0-4_0-2_0-3");
      ASSERT_FALSE(r.ok()) << "truncated to " << n << " of " << stream.size();
      EXPECT_EQ(r.status().kind(), ErrorKind::kCorruptData);
      EXPECT_NE(r.status().message().find("s0/0-4_0-2_0-3"), std::string::npos) << r.status().message();
    }
  }
}

TEST(JxlCodecTest, FlippedBytesAreAnErrorOrAnImageOfTheChunk) {
  std::mt19937 rng(11);
  for (ByteView stream : {View(kGray4x6), View(kThreeFrames5x4)}) {
    for (int trial = 0; trial < 400; ++trial) {
      Bytes bad(stream.begin(), stream.end());
      for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k)
        bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
      Result<Image> r = DecodeJxl(bad, 60, "chunk");
      if (r.ok()) {
        EXPECT_LE(r->width * r->height * r->components, 60);
        EXPECT_EQ(r->pixels.size(), static_cast<size_t>(r->width * r->height * r->components));
      } else {
        EXPECT_EQ(r.status().kind(), ErrorKind::kCorruptData);
      }
    }
  }
}

TEST(JxlChunkTest, FramesAreTheChunksChannelsXWideAndYTimesZHigh) {
  ScaleInfo scale;
  scale.encoding = ChunkEncoding::kJxl;
  scale.chunk_size = {4, 2, 3};
  const Bytes gray(std::begin(kGray4x6), std::end(kGray4x6));
  auto one = DecodeChunk(scale, 1, DataType::kUInt8, {4, 2, 3}, gray, "c");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(*one, Frame(1, 24));
  // An edge chunk of 2 z rows stored a whole chunk (3 rows) high is cut.
  auto short_one = DecodeChunk(scale, 1, DataType::kUInt8, {4, 2, 2}, gray, "c");
  ASSERT_TRUE(short_one.ok()) << short_one.status().ToString();
  const Bytes whole = Frame(1, 24);
  EXPECT_EQ(*short_one, Bytes(whole.begin(), whole.begin() + 16));
  // The wrong shape is corrupt data naming the chunk.
  auto wrong = DecodeChunk(scale, 1, DataType::kUInt8, {2, 4, 3}, gray, "s0/x");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("s0/x"), std::string::npos) << wrong.status().message();

  scale.chunk_size = {5, 2, 2};
  const Bytes three_frames(std::begin(kThreeFrames5x4), std::end(kThreeFrames5x4));
  auto three = DecodeChunk(scale, 3, DataType::kUInt8, {5, 2, 2}, three_frames, "c");
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  EXPECT_EQ(*three, Concat({Frame(1, 20), Frame(2, 20), Frame(3, 20)}));  // planar [c][z][y][x], as the frames
  // Each channel's plane is cut to the extent.
  auto cut = DecodeChunk(scale, 3, DataType::kUInt8, {5, 2, 1}, three_frames, "c");
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  Bytes expected;
  for (int s = 1; s <= 3; ++s) {
    const Bytes f = Frame(s, 20);
    expected.insert(expected.end(), f.begin(), f.begin() + 10);
  }
  EXPECT_EQ(*cut, expected);
  EXPECT_FALSE(DecodeChunk(scale, 1, DataType::kUInt8, {5, 2, 2}, three_frames, "c").ok());  // 3 frames, 1 channel
}

TEST(JxlChunkTest, JxlIsReadNotWritten) {
  auto parsed = ParseChunkEncoding("JXL", false, "info");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, ChunkEncoding::kJxl);
  auto written = ParseChunkEncoding("jxl", true, "encoding");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.status().message().find("read, not written"), std::string::npos) << written.status().message();
  ScaleInfo scale;
  scale.encoding = ChunkEncoding::kJxl;
  scale.chunk_size = {4, 2, 3};
  EXPECT_FALSE(EncodeChunk(scale, 1, DataType::kUInt8, {4, 2, 3}, Frame(1, 24)).ok());
}

TEST(JxlChunkTest, HoldsOneOrThreeChannelsOfUint8) {
  EXPECT_TRUE(CheckEncodingHolds(ChunkEncoding::kJxl, DataType::kUInt8, 1, "info").ok());
  EXPECT_TRUE(CheckEncodingHolds(ChunkEncoding::kJxl, DataType::kUInt8, 3, "info").ok());
  EXPECT_FALSE(CheckEncodingHolds(ChunkEncoding::kJxl, DataType::kUInt8, 2, "info").ok());
  EXPECT_FALSE(CheckEncodingHolds(ChunkEncoding::kJxl, DataType::kUInt16, 1, "info").ok());
}

}  // namespace
}  // namespace tessera::precomputed
