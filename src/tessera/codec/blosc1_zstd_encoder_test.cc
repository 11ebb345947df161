// The zstd blosc encoder must write exactly the bytes c-blosc's blosc_compress_ctx writes for the
// same settings (readers see no difference, and stores stay byte for byte what they were): every
// case here compares the two buffers whole, then decodes ours with c-blosc.
#include "tessera/codec/blosc1_zstd_encoder.h"

#include <blosc.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::RandomBytes;

BloscOptions ZstdOptions(int clevel, BloscShuffle shuffle, int typesize, int blocksize = 0) {
  BloscOptions o;
  o.cname = "zstd";
  o.clevel = clevel;
  o.shuffle = shuffle;
  o.typesize = typesize;
  o.blocksize = blocksize;
  return o;
}

Bytes CBloscEncoding(const BloscOptions& o, const Bytes& in) {
  Bytes out(in.size() + BLOSC_MAX_OVERHEAD);
  const int written = blosc_compress_ctx(o.clevel, static_cast<int>(o.shuffle), static_cast<size_t>(o.typesize),
                                         in.size(), in.data(), out.data(), out.size(), "zstd",
                                         static_cast<size_t>(o.blocksize), 1);
  EXPECT_GT(written, 0) << "c-blosc failed on " << in.size() << " bytes";
  out.resize(written > 0 ? static_cast<size_t>(written) : 0);
  return out;
}

std::string Describe(const BloscOptions& o, size_t bytes, const std::string& data) {
  return data + " data, " + std::to_string(bytes) + " bytes, clevel " + std::to_string(o.clevel) + ", " +
         std::string(BloscShuffleName(o.shuffle)) + ", typesize " + std::to_string(o.typesize) + ", blocksize " +
         std::to_string(o.blocksize);
}

void ExpectSameBytesAsCBlosc(const BloscOptions& o, const Bytes& in, const std::string& data) {
  const std::string what = Describe(o, in.size(), data);
  ASSERT_TRUE(Blosc1ZstdEncoderHandles(o)) << what;
  Bytes ours;
  const Status st = EncodeBlosc1Zstd(o, in, &ours);
  ASSERT_TRUE(st.ok()) << what << ": " << st.ToString();
  const Bytes theirs = CBloscEncoding(o, in);
  ASSERT_EQ(ours.size(), theirs.size()) << what;
  ASSERT_TRUE(ours == theirs) << what << ": first difference at byte "
                              << (std::mismatch(ours.begin(), ours.end(), theirs.begin()).first - ours.begin());
  Bytes decoded(in.size() + 1);
  const int n = blosc_decompress_ctx(ours.data(), decoded.data(), decoded.size(), 1);
  ASSERT_EQ(n, static_cast<int>(in.size())) << what;
  decoded.resize(in.size());
  EXPECT_TRUE(decoded == in) << what;
}

// Camera-like 16-bit samples: a smooth signal plus a little noise (compressible, shuffle matters).
Bytes CameraLike(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t sample = i / 2;
    const unsigned value = 1000 + (sample % 4096) / 8 + static_cast<unsigned>(rng() % 7);
    out[i] = static_cast<uint8_t>(i % 2 == 0 ? value : value >> 8);
  }
  return out;
}

// Blocks that alternate between compressible and incompressible, so one buffer holds zstd frames and
// raw blocks.
Bytes HalfRandom(size_t n, uint64_t seed) {
  Bytes out = RandomBytes(n, seed);
  for (size_t i = 0; i < n; ++i)
    if ((i / 20000) % 2 == 0) out[i] = static_cast<uint8_t>(i / 300);
  return out;
}

struct NamedData {
  std::string name;
  Bytes bytes;
};

std::vector<NamedData> DataOfSize(size_t n, uint64_t seed) {
  return {{"random", RandomBytes(n, seed)},
          {"zero", Bytes(n, 0)},
          {"camera", CameraLike(n, seed)},
          {"half-random", HalfRandom(n, seed)}};
}

constexpr BloscShuffle kShuffles[] = {BloscShuffle::kNoShuffle, BloscShuffle::kShuffle};

TEST(Blosc1ZstdEncoderTest, HandlesZstdWithoutBitShuffleOnly) {
  EXPECT_TRUE(Blosc1ZstdEncoderHandles(ZstdOptions(5, BloscShuffle::kShuffle, 2)));
  EXPECT_TRUE(Blosc1ZstdEncoderHandles(ZstdOptions(5, BloscShuffle::kNoShuffle, 2)));
  EXPECT_FALSE(Blosc1ZstdEncoderHandles(ZstdOptions(5, BloscShuffle::kBitShuffle, 2)));
  BloscOptions lz4 = ZstdOptions(5, BloscShuffle::kShuffle, 2);
  lz4.cname = "lz4";
  EXPECT_FALSE(Blosc1ZstdEncoderHandles(lz4));
}

// Options c-blosc refuses are refused, never encoded with a typesize of 0 or an out-of-range level.
TEST(Blosc1ZstdEncoderTest, InvalidOptionsAreRefused) {
  const Bytes in = CameraLike(1000, 7);
  Bytes out;
  EXPECT_ERROR(EncodeBlosc1Zstd(ZstdOptions(5, BloscShuffle::kShuffle, 0), in, &out), ErrorKind::kInvalidArgument,
               "typesize 0");
  EXPECT_ERROR(EncodeBlosc1Zstd(ZstdOptions(10, BloscShuffle::kShuffle, 2), in, &out), ErrorKind::kInvalidArgument,
               "clevel 10");
  EXPECT_ERROR(EncodeBlosc1Zstd(ZstdOptions(-1, BloscShuffle::kShuffle, 2), in, &out), ErrorKind::kInvalidArgument,
               "clevel -1");
  EXPECT_ERROR(EncodeBlosc1Zstd(ZstdOptions(5, BloscShuffle::kShuffle, 2, -4), in, &out), ErrorKind::kInvalidArgument,
               "blocksize -4");
}

// Small and odd sizes around c-blosc's thresholds (128-byte minimum, typesize multiples), every
// typesize and clevel.
TEST(Blosc1ZstdEncoderTest, SmallBuffersEveryTypesizeAndLevel) {
  const size_t sizes[] = {0, 1, 2, 3, 7, 15, 16, 17, 127, 128, 129, 255, 256, 1000, 4097};
  const int typesizes[] = {1, 2, 3, 4, 8, 16, 255, 300};
  uint64_t seed = 1;
  for (size_t n : sizes)
    for (const NamedData& data : DataOfSize(n, seed++))
      for (int typesize : typesizes)
        for (BloscShuffle shuffle : kShuffles)
          for (int clevel = 0; clevel <= 9; ++clevel)
            ExpectSameBytesAsCBlosc(ZstdOptions(clevel, shuffle, typesize), data.bytes, data.name);
}

// Buffers of several automatic blocks, with partial last blocks and sizes that are not a multiple of
// the typesize.
TEST(Blosc1ZstdEncoderTest, MultiBlockBuffersLowLevels) {
  const size_t sizes[] = {32767, 32768, 32769, 65536 + 7, 100001, 262144 + 3};
  const int typesizes[] = {1, 2, 4, 8, 16, 3};
  uint64_t seed = 100;
  for (size_t n : sizes)
    for (const NamedData& data : DataOfSize(n, seed++))
      for (int typesize : typesizes)
        for (BloscShuffle shuffle : kShuffles)
          for (int clevel : {1, 2, 3})
            ExpectSameBytesAsCBlosc(ZstdOptions(clevel, shuffle, typesize), data.bytes, data.name);
  // A stream writer's chunk sizes (1 MiB and up), at the level acquisitions use.
  for (size_t n : {size_t{1 << 20} + 5, size_t{2 << 20}})
    for (const NamedData& data : DataOfSize(n, seed++))
      for (int typesize : {2, 4})
        for (BloscShuffle shuffle : kShuffles)
          ExpectSameBytesAsCBlosc(ZstdOptions(1, shuffle, typesize), data.bytes, data.name);
}

// The higher levels (larger blocks, zstd levels up to its maximum) on fewer sizes: they are slow.
TEST(Blosc1ZstdEncoderTest, MultiBlockBuffersHighLevels) {
  uint64_t seed = 200;
  for (size_t n : {size_t{70001}, size_t{150001}})
    for (const NamedData& data : DataOfSize(n, seed++))
      for (int typesize : {2})
        for (BloscShuffle shuffle : kShuffles)
          for (int clevel : {4, 5, 6, 7, 8, 9})
            ExpectSameBytesAsCBlosc(ZstdOptions(clevel, shuffle, typesize), data.bytes, data.name);
}

// A forced blocksize: below c-blosc's minimum (clamped to 128), not a multiple of the typesize,
// larger than the buffer.
TEST(Blosc1ZstdEncoderTest, ForcedBlocksizes) {
  uint64_t seed = 300;
  for (size_t n : {size_t{100}, size_t{5000}, size_t{40003}})
    for (const NamedData& data : DataOfSize(n, seed++))
      for (int blocksize : {1, 100, 128, 4096, 5001, 70000})
        for (int typesize : {1, 2, 3, 16})
          for (BloscShuffle shuffle : kShuffles)
            for (int clevel : {0, 1, 5})
              ExpectSameBytesAsCBlosc(ZstdOptions(clevel, shuffle, typesize, blocksize), data.bytes, data.name);
}

// Threads each keep their own zstd context: concurrent encodings stay c-blosc's bytes.
TEST(Blosc1ZstdEncoderTest, ConcurrentThreadsMatchCBlosc) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int round = 0; round < 3; ++round) {
        const Bytes in = CameraLike(300000 + 1000 * t + round, 400 + t);
        ExpectSameBytesAsCBlosc(ZstdOptions(1 + (t + round) % 3, BloscShuffle::kShuffle, 2), in, "camera");
      }
    });
  }
  for (std::thread& th : threads) th.join();
}

// A high level's workspace is not kept, and the next low-level buffer on the thread still matches.
TEST(Blosc1ZstdEncoderTest, LevelsInterleavedOnOneThread) {
  const Bytes in = CameraLike(200000, 500);
  for (int clevel : {9, 1, 8, 2, 9, 1})
    ExpectSameBytesAsCBlosc(ZstdOptions(clevel, BloscShuffle::kShuffle, 2), in, "camera");
}

}  // namespace
}  // namespace tessera
