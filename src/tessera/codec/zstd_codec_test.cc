#include "tessera/codec/zstd_codec.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <thread>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::RampBytes;
using codec_test::RandomBytes;

// A frame whose header does not record the content size, as streaming encoders write.
Bytes EncodeWithoutContentSize(const Bytes& data, int level) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  Bytes out(ZSTD_compressBound(data.size()));
  const size_t n = ZSTD_compress2(cctx, out.data(), out.size(), data.data(), data.size());
  ZSTD_freeCCtx(cctx);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  EXPECT_EQ(ZSTD_getFrameContentSize(out.data(), out.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  return out;
}

TEST(ZstdCodecTest, RoundTripsLevelsAndChecksum) {
  for (int level : {-5, -1, 0, 1, 3, 9, 19}) {
    for (bool checksum : {false, true}) {
      const ZstdCodec codec(level, checksum);
      for (size_t n : {0, 1, 100, 70000, 400000}) {
        codec_test::ExpectRoundTrip(codec, RampBytes(n));
        codec_test::ExpectRoundTrip(codec, RandomBytes(n, n + 3));
      }
    }
  }
}

TEST(ZstdCodecTest, FrameRecordsContentSizeAndChecksumFlag) {
  // RFC 8878: byte 4 is the frame header descriptor; bit 2 is Content_Checksum_flag.
  constexpr uint8_t kChecksumFlag = 0x04;
  Bytes encoded;
  ASSERT_TRUE(ZstdCodec(3, true).Encode(RampBytes(5000), &encoded).ok());
  EXPECT_EQ(ZSTD_getFrameContentSize(encoded.data(), encoded.size()), 5000u);
  EXPECT_EQ(encoded[4] & kChecksumFlag, kChecksumFlag);
  ASSERT_TRUE(ZstdCodec(3, false).Encode(RampBytes(5000), &encoded).ok());
  EXPECT_EQ(encoded[4] & kChecksumFlag, 0);
}

TEST(ZstdCodecTest, BoundHoldsForIncompressibleData) {
  const ZstdCodec codec(1, true);
  for (size_t n : {0, 1, 1000, 131072, 1 << 20}) {
    const Bytes data = RandomBytes(n, n);
    Bytes encoded;
    ASSERT_TRUE(codec.Encode(data, &encoded).ok());
    EXPECT_EQ(codec.MaxEncodedSize(n), ZSTD_compressBound(n));
    EXPECT_LE(encoded.size(), *codec.MaxEncodedSize(n));
  }
}

TEST(ZstdCodecTest, DecodesFrameWithoutContentSize) {
  const ZstdCodec codec(0, false);
  for (size_t n : {0, 1, 1000, 1 << 20}) {
    const Bytes data = n % 2 ? RandomBytes(n, n) : RampBytes(n);
    Bytes decoded;
    const Status st = codec.Decode(EncodeWithoutContentSize(data, 3), &decoded);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(decoded, data);
  }
}

TEST(ZstdCodecTest, DecodesZstdCliStreamFromStdin) {
  // printf 'hello zarr streamed' | zstd -c: no content size, with a content checksum.
  const Bytes frame = FromHex("28b52ffd045899000068656c6c6f207a6172722073747265616d656407b16d93");
  ASSERT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  Bytes decoded;
  ASSERT_TRUE(ZstdCodec(0, false).Decode(frame, &decoded).ok());
  EXPECT_EQ(AsString(decoded), "hello zarr streamed");
}

TEST(ZstdCodecTest, DecodesNumcodecsZstd) {
  // numcodecs.Zstd(level=3, checksum=True).encode(np.arange(64, dtype="<u2"))
  const Bytes frame = FromHex(
      "28b52ffd24806d02000248120810f86c061fab4c017b79777573716f6d6b69676563615f5d5b59575553514f4d"
      "4b49474543413f3d3b39373533312f2d2b29272523211f1d1b19171513110f0d0b0907050301bf0300ade17556");
  Bytes decoded;
  ASSERT_TRUE(ZstdCodec(0, false).Decode(frame, &decoded).ok());
  ASSERT_EQ(decoded.size(), 128u);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(decoded[2 * i], i);
    EXPECT_EQ(decoded[2 * i + 1], 0);
  }
}

TEST(ZstdCodecTest, DecodesConcatenatedAndSkippableFrames) {
  const ZstdCodec codec(1, true);
  const Bytes a = RampBytes(3000), b = RandomBytes(500, 2), c = RampBytes(70000);
  Bytes stream, part;
  ASSERT_TRUE(codec.Encode(a, &part).ok());
  stream.insert(stream.end(), part.begin(), part.end());
  // A skippable frame: magic 0x184D2A50, 4-byte length, payload.
  const Bytes skippable = FromHex("502a4d1803000000abcdef");
  stream.insert(stream.end(), skippable.begin(), skippable.end());
  part = EncodeWithoutContentSize(b, 1);
  stream.insert(stream.end(), part.begin(), part.end());
  ASSERT_TRUE(codec.Encode(c, &part).ok());
  stream.insert(stream.end(), part.begin(), part.end());
  Bytes decoded;
  const Status st = codec.Decode(stream, &decoded);
  ASSERT_TRUE(st.ok()) << st.ToString();
  Bytes expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  expected.insert(expected.end(), c.begin(), c.end());
  EXPECT_EQ(decoded, expected);
}

TEST(ZstdCodecTest, CorruptInputIsCorruptData) {
  const ZstdCodec codec(3, true);
  Bytes encoded, decoded;
  ASSERT_TRUE(codec.Encode(RampBytes(3000), &encoded).ok());
  codec_test::ExpectDamageIsCorruptData(codec, encoded);
  codec_test::ExpectDamageIsCorruptData(codec, EncodeWithoutContentSize(RandomBytes(300, 5), 3));
  const Status garbage = codec.Decode(AsView("definitely not zstd"), &decoded);
  // ZSTD_getErrorName's text is kept.
  EXPECT_ERROR(garbage, ErrorKind::kCorruptData, "zstd codec", "frame at byte 0", "Unknown frame descriptor");
}

TEST(ZstdCodecTest, ChecksumMismatchIsDetected) {
  const ZstdCodec codec(3, true);
  Bytes encoded, decoded;
  ASSERT_TRUE(codec.Encode(RandomBytes(1000, 8), &encoded).ok());  // stored raw: payload visible
  encoded[encoded.size() - 1] ^= 0x01;                             // last checksum byte
  const Status st = codec.Decode(encoded, &decoded);
  EXPECT_ERROR(st, ErrorKind::kCorruptData, "zstd codec", "checksum");
}

// A prefix decode gives exactly the data's first bytes for prefixes inside, at and across the
// 128 KiB block boundaries; truncation is an error; a checksummed frame and a frame recording a
// different size are decoded whole (the checksum verified, the size left for the caller to check).
TEST(ZstdCodecTest, DecodePrefixStopsEarlyAndStaysExact) {
  const ZstdCodec codec(1, false);
  Bytes data = RandomBytes(600000, 11);
  for (size_t i = 0; i < data.size(); i += 3) data[i] = 0;  // compressible, several blocks
  Bytes encoded, decoded;
  ASSERT_TRUE(codec.Encode(data, &encoded).ok());
  for (size_t prefix : {size_t{0}, size_t{1}, size_t{131071}, size_t{131072}, size_t{131073}, size_t{400000},
                        data.size() - 1, data.size()}) {
    ASSERT_TRUE(codec.DecodePrefix(encoded, data.size(), prefix, &decoded).ok()) << prefix;
    ASSERT_EQ(decoded.size(), data.size());
    EXPECT_TRUE(std::equal(data.begin(), data.begin() + prefix, decoded.begin())) << prefix;
  }
  Bytes truncated(encoded.begin(), encoded.begin() + encoded.size() / 2);
  EXPECT_ERROR(codec.DecodePrefix(truncated, data.size(), data.size() - 1, &decoded), ErrorKind::kCorruptData,
               "zstd codec");

  const ZstdCodec checked(1, true);
  ASSERT_TRUE(checked.Encode(data, &encoded).ok());
  encoded[encoded.size() - 1] ^= 0x01;  // the checksum: a prefix decode still verifies it
  EXPECT_ERROR(checked.DecodePrefix(encoded, data.size(), 10, &decoded), ErrorKind::kCorruptData, "zstd codec",
               "checksum");

  ASSERT_TRUE(codec.Encode(data, &encoded).ok());
  ASSERT_TRUE(codec.DecodePrefix(encoded, data.size() + 5, 10, &decoded).ok());
  EXPECT_EQ(decoded, data);  // the whole frame: the caller sees the size it did not expect
}

TEST(ZstdCodecTest, HugeClaimedContentSizeIsRejectedWithoutAllocating) {
  // Frame header: magic, FHD 0xE0 (8-byte content size, single segment), content size 2^40.
  Bytes frame = FromHex(
      "28b52ffde0"
      "0000000000010000");
  // One empty raw last block (header 0x000001).
  frame.insert(frame.end(), {0x01, 0x00, 0x00});
  Bytes decoded;
  EXPECT_ERROR(ZstdCodec(0, false).Decode(frame, &decoded), ErrorKind::kCorruptData, "zstd codec",
               "frame header at byte 0", "claims 1099511627776 decoded bytes");
}

TEST(ZstdCodecTest, ThreadsShareTheCodec) {
  const ZstdCodec codec(3, true);
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      int good = 0;
      for (int i = 0; i < 20; ++i) {
        const Bytes data = RandomBytes(1000 + 37 * i, 100 * t + i);
        Bytes encoded, decoded;
        good += codec.Encode(data, &encoded).ok() && codec.Decode(encoded, &decoded).ok() &&
                decoded == data;
      }
      ok[t] = good;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(ok[t], 20);
}

TEST(ZstdCodecTest, FactoryAndJson) {
  auto defaulted = MakeZstdCodec(nullptr);
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ((*defaulted)->ToJson(),
            nlohmann::json({{"name", "zstd"}, {"configuration", {{"level", 0}}}}));
  const nlohmann::json config = {{"level", -3}, {"checksum", true}};
  auto codec = MakeZstdCodec(config);
  ASSERT_TRUE(codec.ok());
  EXPECT_EQ((*codec)->name(), "zstd");
  EXPECT_EQ((*codec)->ToJson(), nlohmann::json({{"name", "zstd"}, {"configuration", config}}));
  // zarr-python writes an explicit false checksum; it reads back as the same codec.
  auto explicit_false = MakeZstdCodec({{"level", 1}, {"checksum", false}});
  ASSERT_TRUE(explicit_false.ok());
  EXPECT_EQ((*explicit_false)->ToJson(),
            nlohmann::json({{"name", "zstd"}, {"configuration", {{"level", 1}}}}));
  // Each error names the codec, the field and the value it got.
  for (const nlohmann::json& config :
       {nlohmann::json({{"level", 23}}), nlohmann::json({{"level", -200000}}), nlohmann::json({{"level", "3"}})}) {
    EXPECT_ERROR(MakeZstdCodec(config), ErrorKind::kInvalidArgument, "zstd codec", "\"level\"",
                 "got " + config["level"].dump());
  }
  EXPECT_ERROR(MakeZstdCodec({{"checksum", 1}}), ErrorKind::kInvalidArgument, "zstd codec", "\"checksum\"",
               "true or false", "got 1");
  EXPECT_ERROR(MakeZstdCodec({{"level", 1}, {"window", 10}}), ErrorKind::kInvalidArgument, "zstd codec", "unknown",
               "\"window\"");
}

}  // namespace
}  // namespace tessera
