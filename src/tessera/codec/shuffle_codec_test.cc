#include "tessera/codec/shuffle_codec.h"

#include <gtest/gtest.h>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::RandomBytes;

TEST(ShuffleCodecTest, MatchesNumcodecs) {
  // numcodecs.Shuffle(elementsize=4).encode(np.arange(6, dtype="<u4"))
  Bytes input;
  for (uint32_t i = 0; i < 6; ++i) PutFixed32LE(&input, i);
  Bytes encoded;
  ASSERT_TRUE(ShuffleCodec(4).Encode(input, &encoded).ok());
  EXPECT_EQ(encoded, FromHex("000102030405000000000000000000000000000000000000"));
}

TEST(ShuffleCodecTest, RoundTripsEveryElementSize) {
  for (size_t element_bytes : {0, 1, 2, 3, 4, 8, 16}) {
    const ShuffleCodec codec(element_bytes);
    for (size_t elements : {0, 1, 7, 1000}) {
      const size_t n = elements * std::max<size_t>(element_bytes, 1);
      codec_test::ExpectRoundTrip(codec, RandomBytes(n, n + element_bytes));
    }
  }
}

TEST(ShuffleCodecTest, RefusesPartialElements) {
  Bytes out;
  EXPECT_ERROR(ShuffleCodec(4).Encode(RandomBytes(7, 1), &out), ErrorKind::kInvalidArgument, "numcodecs.shuffle", "7 bytes", "elementsize 4");
  EXPECT_ERROR(ShuffleCodec(4).Decode(RandomBytes(7, 1), &out), ErrorKind::kCorruptData, "numcodecs.shuffle", "7 bytes", "elementsize 4");
}

TEST(ShuffleCodecTest, FactoryTakesTheItemSizeByDefault) {
  auto defaulted = MakeShuffleCodec(nlohmann::json::object(), codec_test::MakeSpec(DataType::kFloat64, {4}));
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ((*defaulted)->ToJson(), nlohmann::json({{"name", "numcodecs.shuffle"}, {"configuration", {{"elementsize", 8}}}}));
  auto given = MakeShuffleCodec({{"elementsize", 2}}, codec_test::MakeSpec(DataType::kFloat64, {4}));
  ASSERT_TRUE(given.ok());
  EXPECT_EQ((*given)->ToJson()["configuration"]["elementsize"], 2);
  EXPECT_ERROR(MakeShuffleCodec({{"elementsize", -1}}, codec_test::MakeSpec(DataType::kUInt8, {4})), ErrorKind::kInvalidArgument,
               "numcodecs.shuffle codec", "\"elementsize\"");
}

}  // namespace
}  // namespace tessera
