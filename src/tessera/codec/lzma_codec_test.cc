#include "tessera/codec/lzma_codec.h"

#include <gtest/gtest.h>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::RampBytes;
using codec_test::RandomBytes;

void ExpectArange64(const Bytes& decoded) {
  ASSERT_EQ(decoded.size(), 128u);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(decoded[2 * i], i);
    EXPECT_EQ(decoded[2 * i + 1], 0);
  }
}

TEST(LzmaCodecTest, RoundTripsBothFormatsAndBoundHolds) {
  for (int format : {LzmaCodec::kFormatXz, LzmaCodec::kFormatAlone}) {
    for (uint32_t preset : {0u, 6u, 1u | 0x80000000u}) {
      const LzmaCodec codec(format, LzmaCodec::kCheckDefault, preset);
      for (size_t n : {0, 1, 100, 65536, 200000}) {
        codec_test::ExpectRoundTrip(codec, RampBytes(n));
        codec_test::ExpectRoundTrip(codec, RandomBytes(n, n + preset));
      }
    }
  }
  for (int check : {0, 1, 4, 10}) codec_test::ExpectRoundTrip(LzmaCodec(LzmaCodec::kFormatXz, check, 1), RampBytes(5000));
}

TEST(LzmaCodecTest, DecodesNumcodecsLzma) {
  Bytes decoded;
  const LzmaCodec codec(LzmaCodec::kFormatXz, -1, 6);
  // numcodecs.LZMA().encode(np.arange(64, dtype="<u2")): .xz, CRC64
  ASSERT_TRUE(codec.Decode(FromHex("fd377a585a000004e6d6b4460200210116000000742fe5a3e0007f00655d000060027ff3e273323ffeed1de58ddec6c79f37a5dac8de0848c4664f58463ca385c60c39f06c2e8732b36074da8dac19dca262f40c2c52888740fc499c0233467b61723e35c24d6773985908e143934796fd3a80840383881489440e9f07a7448cca7c6a0000000000376aee2339fdc16000018101800100001ce642c7b1c467fb020000000004595a"), &decoded).ok());
  ExpectArange64(decoded);
  // numcodecs.LZMA(format=2): .lzma ("alone")
  ASSERT_TRUE(codec.Decode(FromHex("5d00008000ffffffffffffffff000060027ff3e273323ffeed1de58ddec6c79f37a5dac8de0848c4664f58463ca385c60c39f06c2e8732b36074da8dac19dca262f40c2c52888740fc499c0233467b61723e35c24d6773985908e143934796fd3a80840383881489440e9f07a7448ced6c3c1bfffc090000"), &decoded).ok());
  ExpectArange64(decoded);
  // numcodecs.LZMA(check=1, preset=1): .xz, CRC32
  ASSERT_TRUE(codec.Decode(FromHex("fd377a585a0000016922de360200210110000000a8708e86e0007f00645d0000000041fb6ed6df647a85d719aef9b98b3f0ed00104731bc386a036be649f3e540a2f1794d86678e1f954f64bcfec8d9127ce3e7fcd936d112488a4b8593212489e937ba81ba7b840df1826a031cf8b2131f6e7cb2c4255868ae50dc243b7c6079b1f0000df698d4200017c800100000090ceefb63e300d8b020000000001595a"), &decoded).ok());
  ExpectArange64(decoded);
}

TEST(LzmaCodecTest, CorruptInputIsCorruptData) {
  const LzmaCodec codec(LzmaCodec::kFormatXz, -1, 1);
  Bytes encoded, decoded;
  ASSERT_TRUE(codec.Encode(RandomBytes(700, 5), &encoded).ok());
  codec_test::ExpectDamageIsCorruptData(codec, encoded);
  EXPECT_ERROR(codec.Decode(AsView("this is not xz data at all"), &decoded), ErrorKind::kCorruptData, "numcodecs.lzma");
  Bytes trailing = encoded;
  trailing.push_back(0x42);
  EXPECT_ERROR(codec.Decode(trailing, &decoded), ErrorKind::kCorruptData, "numcodecs.lzma");
}

TEST(LzmaCodecTest, FactoryAndJson) {
  // What zarr-python 3 writes for zarr.codecs.numcodecs.LZMA(): an empty configuration.
  auto defaulted = MakeLzmaCodec(nlohmann::json::object());
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ((*defaulted)->ToJson()["configuration"],
            nlohmann::json({{"format", 1}, {"check", -1}, {"preset", 6}, {"filters", nullptr}}));
  // numcodecs' own get_config() (Zarr v2), id removed.
  ASSERT_TRUE(MakeLzmaCodec({{"format", 1}, {"check", -1}, {"preset", nullptr}, {"filters", nullptr}}).ok());
  ASSERT_TRUE(MakeLzmaCodec({{"format", 2}, {"preset", 9u | 0x80000000u}}).ok());
  EXPECT_ERROR(MakeLzmaCodec({{"format", 3}}), ErrorKind::kUnsupported, "numcodecs.lzma codec", "format", "raw");
  EXPECT_ERROR(MakeLzmaCodec({{"filters", {{{"id", 33}}}}}), ErrorKind::kUnsupported, "numcodecs.lzma codec", "\"filters\"");
  EXPECT_ERROR(MakeLzmaCodec({{"check", 2}}), ErrorKind::kInvalidArgument, "numcodecs.lzma codec", "\"check\"", "got 2");
  EXPECT_ERROR(MakeLzmaCodec({{"preset", 10}}), ErrorKind::kInvalidArgument, "numcodecs.lzma codec", "\"preset\"", "got 10");
  EXPECT_ERROR(MakeLzmaCodec({{"level", 1}}), ErrorKind::kInvalidArgument, "numcodecs.lzma codec", "unknown", "\"level\"");
}

}  // namespace
}  // namespace tessera
