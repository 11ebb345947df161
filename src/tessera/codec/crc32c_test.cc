#include "tessera/codec/crc32c.h"

#include <gtest/gtest.h>

#include <random>

#include "cpp_support/codec_helpers.h"

namespace tessera {
namespace {

using codec_test::RandomBytes;

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(AsView("123456789")).value, 0xE3069283u);
  EXPECT_EQ(Crc32c(ByteView()).value, 0u);
  // From the Python crc32c package.
  EXPECT_EQ(Crc32c(AsView("a")).value, 0xC1D04330u);
  EXPECT_EQ(Crc32c(AsView("hello zarr")).value, 0x6EA065BAu);
  Bytes ramp(256);
  for (int i = 0; i < 256; ++i) ramp[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(Crc32c(ramp).value, 0x9C44184Bu);
  // RFC 3720 B.4: 32 bytes of zeros, 32 bytes of 0xff.
  EXPECT_EQ(Crc32c(Bytes(32, 0x00)).value, 0x8A9136AAu);
  EXPECT_EQ(Crc32c(Bytes(32, 0xff)).value, 0x62A8AB43u);
}

TEST(Crc32cTest, BothImplementationsMatchKnownVector) {
  const std::string text = "123456789";
  const ByteView data = AsView(text);
  EXPECT_EQ(crc32c_internal::ExtendPortable(Crc32cValue{0}, data).value, 0xE3069283u);
  if (crc32c_internal::HardwareAvailable()) {
    EXPECT_EQ(crc32c_internal::ExtendHardware(Crc32cValue{0}, data).value, 0xE3069283u);
  }
}

TEST(Crc32cTest, PortableAndHardwareAgreeOnRandomData) {
  if (!crc32c_internal::HardwareAvailable()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  const Bytes pool = RandomBytes(1 << 16, 42);
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 2000; ++trial) {
    const size_t offset = rng() % 64;  // every alignment
    const size_t length = trial < 100 ? static_cast<size_t>(trial) : rng() % (pool.size() - 64);
    const ByteView data = ByteView(pool).subspan(offset, length);
    const Crc32cValue seed{static_cast<uint32_t>(rng())};
    ASSERT_EQ(crc32c_internal::ExtendPortable(seed, data),
              crc32c_internal::ExtendHardware(seed, data))
        << "offset " << offset << " length " << length;
  }
}

TEST(Crc32cTest, ExtendEqualsWholeComputation) {
  const Bytes data = RandomBytes(1000, 3);
  const Crc32cValue whole = Crc32c(data);
  for (size_t split : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    const ByteView view(data);
    EXPECT_EQ(ExtendCrc32c(Crc32c(view.first(split)), view.subspan(split)), whole) << split;
    EXPECT_EQ(crc32c_internal::ExtendPortable(
                  crc32c_internal::ExtendPortable(Crc32cValue{0}, view.first(split)),
                  view.subspan(split)),
              whole)
        << split;
  }
}

TEST(Crc32cTest, DetectsSingleBitFlips) {
  Bytes data = RandomBytes(100, 4);
  const Crc32cValue original = Crc32c(data);
  for (size_t bit = 0; bit < data.size() * 8; bit += 13) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(Crc32c(data), original);
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

}  // namespace
}  // namespace tessera
