#include "tessera/hdf5/filter_decoders.h"

#include <blosc.h>
#include <lz4.h>
#include <liblzf/lzf.h>  // the test is not built with liblzf's include flags
#include <zstd.h>
extern "C" {
#include <szlib.h>
}

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "cpp_support/status_matchers.h"

namespace tessera::hdf5 {
namespace {

const std::string kWhat = "chunk (1,2) of f.h5 at 0x100..0x180";

// ---- scale-offset: streams built by hand from the layout in filter_scale_offset.cc ----------------

Filter ScaleOffset(uint32_t scale_type, int32_t factor, uint32_t count, uint32_t cls, uint32_t size, bool big_endian,
                   bool fill_defined = false, uint64_t fill_bits = 0) {
  Filter f{kFilterScaleOffset, kFilterOptional, "scaleoffset", std::vector<uint32_t>(20, 0)};
  f.client_data[0] = scale_type;
  f.client_data[1] = static_cast<uint32_t>(factor);
  f.client_data[2] = count;
  f.client_data[3] = cls;
  f.client_data[4] = size;
  f.client_data[5] = 1;
  f.client_data[6] = big_endian ? 1 : 0;
  f.client_data[7] = fill_defined ? 1 : 0;
  f.client_data[8] = static_cast<uint32_t>(fill_bits);
  f.client_data[9] = static_cast<uint32_t>(fill_bits >> 32);
  return f;
}

Bytes ScaleOffsetStream(uint32_t minbits, uint64_t minimum, const std::vector<uint64_t>& packed) {
  Bytes out(21, 0);
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(minbits >> (8 * i));
  out[4] = 8;
  for (int i = 0; i < 8; ++i) out[5 + i] = static_cast<uint8_t>(minimum >> (8 * i));
  uint64_t bit = 0;
  for (uint64_t v : packed) {
    for (int b = static_cast<int>(minbits) - 1; b >= 0; --b, ++bit) {
      if (bit / 8 >= out.size() - 21) out.push_back(0);
      if ((v >> b) & 1) out[21 + bit / 8] |= static_cast<uint8_t>(0x80 >> (bit % 8));
    }
  }
  return out;
}

template <typename T>
std::vector<T> As(const Bytes& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

TEST(Hdf5FilterDecoders, ScaleOffsetIntegersAddTheMinimumAndMapAllOnesToTheFill) {
  // int16, minbits 3, minimum -4: packed 0..6 give -4..2, 7 (all ones) is the fill value 1000.
  const std::vector<uint64_t> packed = {0, 1, 6, 7, 3};
  const Bytes stream = ScaleOffsetStream(3, static_cast<uint64_t>(int64_t{-4}), packed);
  Bytes out;
  ASSERT_TRUE(DecodeScaleOffset(ScaleOffset(2, 0, 5, 0, 2, false, true, 1000), stream, 10, true, kWhat, &out).ok());
  EXPECT_EQ(As<int16_t>(out), (std::vector<int16_t>{-4, -3, 2, 1000, -1}));
  // Without a fill value all ones is an ordinary value.
  ASSERT_TRUE(DecodeScaleOffset(ScaleOffset(2, 0, 5, 0, 2, false), stream, 10, true, kWhat, &out).ok());
  EXPECT_EQ(As<int16_t>(out), (std::vector<int16_t>{-4, -3, 2, 3, -1}));
  // Big-endian datasets come back in their own byte order.
  ASSERT_TRUE(DecodeScaleOffset(ScaleOffset(2, 0, 5, 0, 2, true), stream, 10, true, kWhat, &out).ok());
  EXPECT_EQ(out[0], 0xff);
  EXPECT_EQ(out[1], 0xfc);
}

TEST(Hdf5FilterDecoders, ScaleOffsetBitsCrossByteBoundaries) {
  std::vector<uint64_t> packed;
  std::vector<uint32_t> expected;
  for (uint32_t i = 0; i < 50; ++i) {
    packed.push_back((i * 2654435761u) & 0x7ffff);  // 19 bits
    expected.push_back(static_cast<uint32_t>(packed.back() + 7));
  }
  Bytes out;
  ASSERT_TRUE(DecodeScaleOffset(ScaleOffset(2, 0, 50, 0, 4, false), ScaleOffsetStream(19, 7, packed), 200, true,
                                kWhat, &out).ok());
  EXPECT_EQ(As<uint32_t>(out), expected);
}

TEST(Hdf5FilterDecoders, ScaleOffsetFloatsDivideByTenToTheFactor) {
  const float minimum = -1.5f;
  uint32_t min_bits;
  std::memcpy(&min_bits, &minimum, 4);
  Bytes out;
  ASSERT_TRUE(DecodeScaleOffset(ScaleOffset(0, 2, 3, 1, 4, false), ScaleOffsetStream(10, min_bits, {0, 150, 1023}), 12,
                                true, kWhat, &out).ok());
  EXPECT_EQ(As<float>(out), (std::vector<float>{-1.5f, 150.0f / 100.0f + minimum, 1023.0f / 100.0f + minimum}));
  const double dmin = 20.25;
  uint64_t dmin_bits;
  std::memcpy(&dmin_bits, &dmin, 8);
  ASSERT_TRUE(DecodeScaleOffset(ScaleOffset(0, 3, 2, 1, 8, false), ScaleOffsetStream(40, dmin_bits, {5, 1ull << 39}),
                                16, true, kWhat, &out).ok());
  EXPECT_EQ(As<double>(out), (std::vector<double>{5 / 1000.0 + dmin, std::ldexp(1.0, 39) / 1000.0 + dmin}));
}

TEST(Hdf5FilterDecoders, ScaleOffsetFullPrecisionIsStoredAsIs) {
  Bytes stream = ScaleOffsetStream(32, 0, {});
  for (uint8_t b : {1, 2, 3, 4, 5, 6, 7, 8}) stream.push_back(b);
  Bytes out;
  ASSERT_TRUE(DecodeScaleOffset(ScaleOffset(2, 0, 2, 0, 4, false), stream, 8, true, kWhat, &out).ok());
  EXPECT_EQ(out, (Bytes{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Hdf5FilterDecoders, ScaleOffsetRefusesDamage) {
  Bytes out;
  const Filter f = ScaleOffset(2, 0, 5, 0, 2, false);
  EXPECT_ERROR(DecodeScaleOffset(f, Bytes(20, 0), 10, true, kWhat, &out), ErrorKind::kCorruptData, kWhat,
               "scaleoffset", "21-byte header");
  EXPECT_ERROR(DecodeScaleOffset(f, ScaleOffsetStream(17, 0, {}), 10, true, kWhat, &out), ErrorKind::kCorruptData,
               "minbits 17", "16 bits");
  Bytes short_body = ScaleOffsetStream(3, 0, {1, 2, 3, 4, 5});
  short_body.pop_back();
  EXPECT_ERROR(DecodeScaleOffset(f, short_body, 10, true, kWhat, &out), ErrorKind::kCorruptData,
               "5 elements of 3 bits need 2");
  EXPECT_ERROR(DecodeScaleOffset(f, ScaleOffsetStream(3, 0, {1, 2, 3, 4, 5}), 12, true, kWhat, &out),
               ErrorKind::kCorruptData, "5 elements of 2 bytes", "12");
  Filter few = f;
  few.client_data.resize(8);
  EXPECT_ERROR(DecodeScaleOffset(few, ScaleOffsetStream(3, 0, {1}), 10, true, kWhat, &out), ErrorKind::kCorruptData,
               "8 values, expected 20");
  EXPECT_ERROR(DecodeScaleOffset(ScaleOffset(1, 0, 5, 1, 4, false), ScaleOffsetStream(3, 0, {1}), 20, true, kWhat,
                                 &out),
               ErrorKind::kUnsupported, "float scale type 1");
  EXPECT_ERROR(DecodeScaleOffset(ScaleOffset(2, 0, 5, 0, 3, false), ScaleOffsetStream(3, 0, {1}), 15, true, kWhat,
                                 &out),
               ErrorKind::kCorruptData, "integer size 3");
}

// ---- bitshuffle ------------------------------------------------------------------------------------

Bytes Pattern(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(gen() % 7 == 0 ? gen() : gen() % 4);
  return b;
}

TEST(Hdf5FilterDecoders, BitTransposeOfEightBytes) {
  // Eight 1-byte elements, element i = 1 << i: row k holds bit k of every element, so only
  // element k's bit: the identity matrix.
  const uint8_t in[8] = {1, 2, 4, 8, 16, 32, 64, 128};
  uint8_t shuffled[8], back[8];
  BitShuffleBlock(in, 8, 1, shuffled);
  EXPECT_EQ(Bytes(shuffled, shuffled + 8), Bytes(in, in + 8));
  // Element 0 = 0xff: every row has bit 0 set.
  const uint8_t first[8] = {0xff, 0, 0, 0, 0, 0, 0, 0};
  BitShuffleBlock(first, 8, 1, shuffled);
  EXPECT_EQ(Bytes(shuffled, shuffled + 8), Bytes(8, 1));
  BitUnshuffleBlock(shuffled, 8, 1, back);
  EXPECT_EQ(Bytes(back, back + 8), Bytes(first, first + 8));
  for (size_t elem : {1, 2, 3, 4, 8, 16}) {
    const Bytes raw = Pattern(64 * elem, static_cast<uint32_t>(elem));
    Bytes s(raw.size()), u(raw.size());
    BitShuffleBlock(raw.data(), 64, elem, s.data());
    BitUnshuffleBlock(s.data(), 64, elem, u.data());
    EXPECT_EQ(u, raw) << elem;
  }
}

// Bitshuffle's stored form for `count` elements: blocks, optionally LZ4-framed, then the tail.
Bytes BitshuffleEncode(const Bytes& raw, size_t elem, size_t block, bool lz4) {
  const size_t count = raw.size() / elem, whole = count - count % 8;
  Bytes out;
  if (lz4) {
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<uint8_t>(uint64_t{raw.size()} >> (8 * i)));
    for (int i = 3; i >= 0; --i) out.push_back(static_cast<uint8_t>((block * elem) >> (8 * i)));
  }
  for (size_t done = 0; done < whole;) {
    const size_t n = std::min(block, whole - done);
    Bytes bits(n * elem);
    BitShuffleBlock(raw.data() + done * elem, n, elem, bits.data());
    if (lz4) {
      Bytes c(LZ4_compressBound(static_cast<int>(bits.size())));
      const int size = LZ4_compress_default(reinterpret_cast<const char*>(bits.data()), reinterpret_cast<char*>(c.data()),
                                            static_cast<int>(bits.size()), static_cast<int>(c.size()));
      for (int i = 3; i >= 0; --i) out.push_back(static_cast<uint8_t>(size >> (8 * i)));
      out.insert(out.end(), c.begin(), c.begin() + size);
    } else {
      out.insert(out.end(), bits.begin(), bits.end());
    }
    done += n;
  }
  out.insert(out.end(), raw.begin() + whole * elem, raw.end());
  return out;
}

TEST(Hdf5FilterDecoders, BitshuffleBlocksAndTail) {
  for (bool lz4 : {false, true}) {
    const size_t elem = 4, block = 64;
    const Bytes raw = Pattern(4 * 203, 5);  // 3 blocks of 64, one of 8, 3 elements as they are
    Filter f{kFilterBitshuffle, 0, "bitshuffle", {0, 4, static_cast<uint32_t>(elem), block, lz4 ? 2u : 0u, 0}};
    Bytes out;
    ASSERT_TRUE(DecodeBitshuffle(f, elem, BitshuffleEncode(raw, elem, block, lz4), raw.size(), true, kWhat, &out).ok());
    EXPECT_EQ(out, raw) << lz4;
    Bytes cut = BitshuffleEncode(raw, elem, block, lz4);
    cut.resize(cut.size() - 13);
    EXPECT_ERROR(DecodeBitshuffle(f, elem, cut, raw.size(), true, kWhat, &out), ErrorKind::kCorruptData, kWhat,
                 "bitshuffle filter", " byte ");
  }
  Filter odd{kFilterBitshuffle, 0, "bitshuffle", {0, 4, 4, 12, 0, 0}};
  Bytes out;
  EXPECT_ERROR(DecodeBitshuffle(odd, 4, Bytes(64, 0), 64, true, kWhat, &out), ErrorKind::kCorruptData,
               "block size of 12 elements");
  Filter zstd9{kFilterBitshuffle, 0, "bitshuffle", {0, 4, 4, 0, 9, 0}};
  EXPECT_ERROR(DecodeBitshuffle(zstd9, 4, Bytes(64, 0), 64, true, kWhat, &out), ErrorKind::kUnsupported,
               "compression 9");
}

// ---- lz4, zstd, blosc, lzf, szip --------------------------------------------------------------------

TEST(Hdf5FilterDecoders, Lz4FramingWithCompressedAndRawBlocks) {
  const Bytes raw = Pattern(250, 9);
  Bytes stored = {0, 0, 0, 0, 0, 0, 0, 250, 0, 0, 0, 200};
  Bytes c(LZ4_compressBound(200));
  const int size = LZ4_compress_default(reinterpret_cast<const char*>(raw.data()), reinterpret_cast<char*>(c.data()),
                                        200, static_cast<int>(c.size()));
  ASSERT_LT(size, 200);
  for (int i = 3; i >= 0; --i) stored.push_back(static_cast<uint8_t>(size >> (8 * i)));
  stored.insert(stored.end(), c.begin(), c.begin() + size);
  for (uint8_t b : {0, 0, 0, 50}) stored.push_back(b);  // the last 50 bytes stored as they are
  stored.insert(stored.end(), raw.begin() + 200, raw.end());
  Bytes out;
  ASSERT_TRUE(DecodeLz4Filter(stored, 250, true, kWhat, &out).ok());
  EXPECT_EQ(out, raw);
  EXPECT_ERROR(DecodeLz4Filter(stored, 251, true, kWhat, &out), ErrorKind::kCorruptData, "lz4 filter",
               "decoded size of 250", "251");
  Bytes cut(stored.begin(), stored.end() - 1);
  EXPECT_ERROR(DecodeLz4Filter(cut, 250, true, kWhat, &out), ErrorKind::kCorruptData, kWhat, "states 50 bytes");
  Bytes zero_blocks = stored;
  zero_blocks[11] = 0;
  EXPECT_ERROR(DecodeLz4Filter(zero_blocks, 250, true, kWhat, &out), ErrorKind::kCorruptData, "block size 0");
}

TEST(Hdf5FilterDecoders, ZstdBloscAndLzfWholeChunks) {
  const Bytes raw = Pattern(4000, 3);
  Bytes out;
  Bytes z(ZSTD_compressBound(raw.size()));
  z.resize(ZSTD_compress(z.data(), z.size(), raw.data(), raw.size(), 3));
  ASSERT_TRUE(DecodeZstdFilter(z, raw.size(), true, kWhat, &out).ok());
  EXPECT_EQ(out, raw);
  EXPECT_ERROR(DecodeZstdFilter(z, raw.size() - 1, true, kWhat, &out), ErrorKind::kCorruptData, "zstd filter",
               "more than the chunk's 3999 bytes");
  EXPECT_ERROR(DecodeZstdFilter(Bytes(30, 7), raw.size(), true, kWhat, &out), ErrorKind::kCorruptData, kWhat,
               "zstd filter", "corrupt");

  Bytes b(raw.size() + BLOSC_MAX_OVERHEAD);
  b.resize(blosc_compress_ctx(5, BLOSC_SHUFFLE, 4, raw.size(), raw.data(), b.data(), b.size(), "lz4", 0, 1));
  ASSERT_TRUE(DecodeBloscFilter(b, raw.size(), true, kWhat, &out).ok());
  EXPECT_EQ(out, raw);
  Bytes bad_blosc = b;
  bad_blosc[12] ^= 0x40;  // the stored size
  EXPECT_ERROR(DecodeBloscFilter(bad_blosc, raw.size(), true, kWhat, &out), ErrorKind::kCorruptData, kWhat,
               "blosc filter");

  Bytes l(raw.size() + 100);
  l.resize(lzf_compress(raw.data(), raw.size(), l.data(), l.size()));
  ASSERT_GT(l.size(), 0u);
  ASSERT_TRUE(DecodeLzf(l, raw.size(), true, kWhat, &out).ok());
  EXPECT_EQ(out, raw);
  EXPECT_ERROR(DecodeLzf(l, raw.size() - 10, true, kWhat, &out), ErrorKind::kCorruptData, "lzf filter",
               "more than the chunk's");
  EXPECT_ERROR(DecodeLzf(l, raw.size() + 10, true, kWhat, &out), ErrorKind::kCorruptData, "decodes to 4000 bytes");
  // After scale-offset the stage size is a bound.
  ASSERT_TRUE(DecodeLzf(l, raw.size() + 10, false, kWhat, &out).ok());
  EXPECT_EQ(out, raw);
}

TEST(Hdf5FilterDecoders, SzipThroughLibaec) {
  std::vector<uint16_t> values(1024);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(1000 + (i * 37) % 50);
  const size_t nbytes = values.size() * 2;
  SZ_com_t params{};
  params.options_mask = SZ_NN_OPTION_MASK | SZ_LSB_OPTION_MASK | SZ_RAW_OPTION_MASK;
  params.bits_per_pixel = 16;
  params.pixels_per_block = 16;
  params.pixels_per_scanline = 256;
  Bytes stored(4 + nbytes * 2);
  size_t produced = stored.size() - 4;
  ASSERT_EQ(SZ_BufftoBuffCompress(stored.data() + 4, &produced, values.data(), nbytes, &params), SZ_OK);
  stored.resize(4 + produced);
  EncodeFixed32LE(stored.data(), static_cast<uint32_t>(nbytes));
  Filter f{kFilterSzip, 0, "szip", {static_cast<uint32_t>(params.options_mask), 16, 16, 256}};
  Bytes out;
  ASSERT_TRUE(DecodeSzip(f, stored, nbytes, true, kWhat, &out).ok());
  EXPECT_EQ(std::memcmp(out.data(), values.data(), nbytes), 0);
  EXPECT_ERROR(DecodeSzip(f, stored, nbytes + 2, true, kWhat, &out), ErrorKind::kCorruptData, "szip filter",
               "decoded size of 2048");
  Filter bad = f;
  bad.client_data[2] = 99;  // bits per pixel: at most 32, or 64
  EXPECT_ERROR(DecodeSzip(bad, stored, nbytes, true, kWhat, &out), ErrorKind::kCorruptData, "bits per pixel 99");
  bad = f;
  bad.client_data[3] = 1u << 30;  // libaec would size a buffer from it
  EXPECT_ERROR(DecodeSzip(bad, stored, nbytes, true, kWhat, &out), ErrorKind::kCorruptData,
               "pixels per scanline 1073741824");
  bad = f;
  bad.client_data[2] = 24;  // in range, but not what the stream was written with
  Status wrong = DecodeSzip(bad, stored, nbytes, true, kWhat, &out);
  if (!wrong.ok()) EXPECT_ERROR(wrong, ErrorKind::kCorruptData, kWhat, "szip filter");
  Bytes cut(stored.begin(), stored.begin() + 20);
  EXPECT_ERROR(DecodeSzip(f, cut, nbytes, true, kWhat, &out), ErrorKind::kCorruptData, kWhat, "szip");
}

// ---- the pipeline -------------------------------------------------------------------------------

TEST(Hdf5FilterDecoders, ScaleOffsetUnderACompressor) {
  // h5py's order: scale-offset, then a compressor; the compressor's output is scale-offset's stream,
  // smaller than the chunk (or larger, at full precision).
  std::vector<uint64_t> packed(100);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = i % 13;
  for (uint32_t minbits : {4u, 16u}) {
    Bytes stream = ScaleOffsetStream(minbits, 0, minbits == 16 ? std::vector<uint64_t>{} : packed);
    if (minbits == 16)
      for (size_t i = 0; i < packed.size(); ++i) stream.insert(stream.end(), {static_cast<uint8_t>(packed[i]), 0});
    Bytes z(ZSTD_compressBound(stream.size()));
    z.resize(ZSTD_compress(z.data(), z.size(), stream.data(), stream.size(), 3));
    const FilterPipeline pipeline = {ScaleOffset(2, 0, 100, 0, 2, false), Filter{kFilterZstd, 1, "zstd", {3}}};
    Bytes out;
    ASSERT_TRUE(DecodeChunk(pipeline, 0, 2, z, 200, kWhat, &out).ok()) << minbits;
    std::vector<uint16_t> expected(packed.begin(), packed.end());
    EXPECT_EQ(As<uint16_t>(out), expected);
  }
}

}  // namespace
}  // namespace tessera::hdf5
