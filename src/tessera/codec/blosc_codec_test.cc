#include "tessera/codec/blosc_codec.h"

#include <blosc.h>
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using codec_test::FromHex;
using codec_test::MakeSpec;
using codec_test::RampBytes;
using codec_test::RandomBytes;

bool HasCompressor(const char* cname) { return blosc_compname_to_compcode(cname) >= 0; }

BloscOptions Options(std::string cname, int clevel, BloscShuffle shuffle, int typesize,
                     int blocksize = 0) {
  BloscOptions o;
  o.cname = std::move(cname);
  o.clevel = clevel;
  o.shuffle = shuffle;
  o.typesize = typesize;
  o.blocksize = blocksize;
  return o;
}

// An array of uint16 0..63, little-endian: what numcodecs encoded below.
Bytes Arange64UInt16() {
  Bytes out(128, 0);
  for (int i = 0; i < 64; ++i) out[2 * i] = static_cast<uint8_t>(i);
  return out;
}

TEST(BloscCodecTest, RoundTripsCompressorsShufflesAndLevels) {
  for (const char* cname : {"lz4", "lz4hc", "blosclz", "zstd", "zlib", "snappy"}) {
    if (!HasCompressor(cname)) continue;
    for (BloscShuffle shuffle :
         {BloscShuffle::kNoShuffle, BloscShuffle::kShuffle, BloscShuffle::kBitShuffle}) {
      for (int clevel : {0, 1, 5, 9}) {
        for (int typesize : {1, 2, 4, 8, 16}) {
          const BloscCodec codec(Options(cname, clevel, shuffle, typesize));
          for (size_t n : {0, 1, 15, 1000, 70000}) {
            codec_test::ExpectRoundTrip(codec, RampBytes(n));
            codec_test::ExpectRoundTrip(codec, RandomBytes(n, n + clevel));
          }
        }
      }
    }
  }
}

TEST(BloscCodecTest, ExplicitBlocksize) {
  const BloscCodec codec(Options("lz4", 5, BloscShuffle::kShuffle, 4, 4096));
  codec_test::ExpectRoundTrip(codec, RampBytes(100000));
  Bytes encoded;
  ASSERT_TRUE(codec.Encode(RampBytes(100000), &encoded).ok());
  size_t nbytes = 0, cbytes = 0, blocksize = 0;
  blosc_cbuffer_sizes(encoded.data(), &nbytes, &cbytes, &blocksize);
  EXPECT_EQ(nbytes, 100000u);
  EXPECT_EQ(cbytes, encoded.size());
  // c-blosc adjusts a forced blocksize (to 64 KiB here), but it still splits the buffer.
  EXPECT_LT(blocksize, 100000u);
}

TEST(BloscCodecTest, ShuffleIsRecordedInTheHeader) {
  Bytes encoded;
  const BloscCodec codec(Options("lz4", 5, BloscShuffle::kShuffle, 2));
  ASSERT_TRUE(codec.Encode(RampBytes(4096), &encoded).ok());
  size_t typesize = 0;
  int flags = 0;
  blosc_cbuffer_metainfo(encoded.data(), &typesize, &flags);
  EXPECT_EQ(typesize, 2u);
  EXPECT_TRUE(flags & BLOSC_DOSHUFFLE);
}

TEST(BloscCodecTest, BoundHoldsForIncompressibleData) {
  const BloscCodec codec(Options("zstd", 9, BloscShuffle::kBitShuffle, 4));
  for (size_t n : {0, 1, 100, 65536, 1 << 20}) {
    Bytes encoded;
    ASSERT_TRUE(codec.Encode(RandomBytes(n, n), &encoded).ok());
    EXPECT_EQ(codec.MaxEncodedSize(n), n + BLOSC_MAX_OVERHEAD);
    EXPECT_LE(encoded.size(), *codec.MaxEncodedSize(n));
  }
}

TEST(BloscCodecTest, DecodesNumcodecsBuffers) {
  // numcodecs.Blosc(cname="zstd", clevel=5, shuffle=SHUFFLE, typesize=2).encode(arange(64, "<u2"))
  const Bytes zstd_shuffled = FromHex(
      "0201910280000000800000006a000000140000005200000028b52ffd20804d02001404000102030405060708"
      "090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334"
      "35363738393a3b3c3d3e3f00010001251005");
  // numcodecs.Blosc(cname="lz4", clevel=9, shuffle=BITSHUFFLE, typesize=2).encode(same)
  const Bytes lz4_bitshuffled = FromHex(
      "0201340280000000800000003f000000140000002700000013aa010013cc010013f001002300ff02002300ff"
      "0400400000ffff0c000f020036500000000000");
  // numcodecs.Blosc(cname="blosclz", clevel=0, shuffle=NOSHUFFLE).encode(b"hello zarr")
  const Bytes stored = FromHex("020112010a0000000a0000001a00000068656c6c6f207a617272");

  const BloscCodec codec(Options("lz4", 5, BloscShuffle::kShuffle, 1));  // settings do not matter
  Bytes decoded;
  ASSERT_TRUE(codec.Decode(zstd_shuffled, &decoded).ok());
  EXPECT_EQ(decoded, Arange64UInt16());
  ASSERT_TRUE(codec.Decode(lz4_bitshuffled, &decoded).ok());
  EXPECT_EQ(decoded, Arange64UInt16());
  ASSERT_TRUE(codec.Decode(stored, &decoded).ok());
  EXPECT_EQ(AsString(decoded), "hello zarr");
}

TEST(BloscCodecTest, CorruptInputIsCorruptData) {
  const BloscCodec codec(Options("lz4", 5, BloscShuffle::kShuffle, 2));
  Bytes encoded, decoded;
  ASSERT_TRUE(codec.Encode(RampBytes(3000), &encoded).ok());
  codec_test::ExpectDamageIsCorruptData(codec, encoded);
  Bytes random_input = RandomBytes(200, 77);
  EXPECT_ERROR(codec.Decode(random_input, &decoded), ErrorKind::kCorruptData, "blosc codec");
  EXPECT_ERROR(codec.Decode(ByteView(encoded).first(10), &decoded), ErrorKind::kCorruptData, "blosc codec",
               "input is 10 bytes", "header");
  // A header claiming more compressed bytes than given.
  Bytes lying = encoded;
  EncodeFixed32LE(lying.data() + 12, static_cast<uint32_t>(encoded.size() + 100));
  EXPECT_ERROR(codec.Decode(lying, &decoded), ErrorKind::kCorruptData, "blosc codec",
               "header says " + std::to_string(encoded.size() + 100), "input has " + std::to_string(encoded.size()));
}

TEST(BloscCodecTest, ThreadsShareTheCodec) {
  const BloscCodec codec(Options("zstd", 5, BloscShuffle::kShuffle, 4));
  std::vector<std::thread> threads;
  std::vector<int> ok(6, 0);
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      int good = 0;
      for (int i = 0; i < 20; ++i) {
        const Bytes data = i % 2 ? RampBytes(5000 + i) : RandomBytes(5000 + i, 10 * t + i);
        Bytes encoded, decoded;
        good += codec.Encode(data, &encoded).ok() && codec.Decode(encoded, &decoded).ok() &&
                decoded == data;
      }
      ok[t] = good;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 6; ++t) EXPECT_EQ(ok[t], 20);
}

TEST(BloscCodecTest, FactoryDefaultsFollowZarrPython) {
  auto u16 = MakeBloscCodec(nullptr, MakeSpec(DataType::kUInt16, {8}));
  ASSERT_TRUE(u16.ok()) << u16.status().ToString();
  EXPECT_EQ((*u16)->name(), "blosc");
  EXPECT_EQ((*u16)->ToJson(), nlohmann::json::parse(R"({"name":"blosc","configuration":
      {"typesize":2,"cname":"zstd","clevel":5,"shuffle":"shuffle","blocksize":0}})"));
  auto u8 = MakeBloscCodec(nlohmann::json::object(), MakeSpec(DataType::kUInt8, {8}));
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ((*u8)->ToJson()["configuration"]["shuffle"], "bitshuffle");
  EXPECT_EQ((*u8)->ToJson()["configuration"]["typesize"], 1);
}

TEST(BloscCodecTest, FactoryJsonRoundTrip) {
  const nlohmann::json config = nlohmann::json::parse(
      R"({"typesize":4,"cname":"lz4","clevel":1,"shuffle":"bitshuffle","blocksize":8192})");
  auto codec = MakeBloscCodec(config, MakeSpec(DataType::kUInt16, {8}));
  ASSERT_TRUE(codec.ok()) << codec.status().ToString();
  EXPECT_EQ((*codec)->ToJson(), nlohmann::json({{"name", "blosc"}, {"configuration", config}}));
  auto again =
      MakeBloscCodec((*codec)->ToJson()["configuration"], MakeSpec(DataType::kUInt16, {8}));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->ToJson(), (*codec)->ToJson());
}

TEST(BloscCodecTest, FactoryRejectsBadConfig) {
  const ChunkSpec spec = MakeSpec(DataType::kFloat32, {8});
  const struct {
    const char* json;
    const char* field;
  } kCases[] = {
      {R"({"cname":"brotli"})", "cname"},   {R"({"cname":3})", "cname"},
      {R"({"clevel":10})", "clevel"},       {R"({"clevel":-1})", "clevel"},
      {R"({"shuffle":"byte"})", "shuffle"}, {R"({"shuffle":1})", "shuffle"},
      {R"({"typesize":0})", "typesize"},    {R"({"blocksize":-5})", "blocksize"},
      {R"({"level":5})", "level"},
  };
  for (const auto& c : kCases) {
    EXPECT_ERROR(MakeBloscCodec(nlohmann::json::parse(c.json), spec), ErrorKind::kInvalidArgument, "blosc codec",
                 std::string("\"") + c.field + "\"")
        << c.json;
  }
}

}  // namespace
}  // namespace tessera
