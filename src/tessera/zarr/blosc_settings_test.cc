#include "tessera/zarr/blosc_settings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpp_support/status_matchers.h"
#include "tessera/codec/registry.h"
#include "tessera/spec/spec_error.h"
#include "tessera/zarr/array_options.h"

namespace tessera::zarr {
namespace {

using nlohmann::json;

constexpr const char* kCnames[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
constexpr const char* kShuffles[] = {"noshuffle", "shuffle", "bitshuffle"};

json Blosc(const std::string& cname, int clevel, const std::string& shuffle, int typesize, int blocksize) {
  return {{"name", "blosc"},
          {"configuration",
           {{"typesize", typesize}, {"cname", cname}, {"clevel", clevel}, {"shuffle", shuffle}, {"blocksize", blocksize}}}};
}

ArrayOptions Options(DataType dtype, const std::string& codec, bool sharded) {
  ArrayOptions o;
  o.dtype = dtype;
  o.shape = {7, 9};
  o.chunk_shape = {3, 4};
  if (sharded) o.chunks_per_shard = {2, 2};
  o.codec = codec;
  return o;
}

// The chunks' codecs of built metadata: the inner chain when sharded.
json ChunkChain(const ArrayMetadata& m) {
  const json codecs = m.ToJson()["codecs"];
  if (codecs.size() == 1 && codecs[0]["name"] == "sharding_indexed") return codecs[0]["configuration"]["codecs"];
  return codecs;
}

void ExpectFieldError(const Status& st, std::string_view field, std::initializer_list<std::string_view> facts) {
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.kind(), ErrorKind::kInvalidArgument) << st.ToString();
  EXPECT_EQ(SpecFieldOfError(st), field) << st.ToString();
  for (std::string_view fact : facts) EXPECT_NE(st.message().find(fact), std::string::npos) << st.ToString();
}

// Every cname and shuffle, sharded and not, over 1-, 2-, 4- and 8-byte dtypes: the chunks' codecs
// are bytes + exactly the blosc configuration asked for, and the chain encodes and decodes a chunk.
TEST(BloscSettingsTest, EveryCnameAndShuffleIsWrittenAsGiven) {
  for (DataType dtype : {DataType::kUInt8, DataType::kUInt16, DataType::kFloat32, DataType::kInt64}) {
    for (const char* cname : kCnames) {
      for (const char* shuffle : kShuffles) {
        for (bool sharded : {false, true}) {
          SCOPED_TRACE(std::string(DataTypeName(dtype)) + " " + cname + " " + shuffle + (sharded ? " sharded" : ""));
          ArrayOptions o = Options(dtype, "blosc", sharded);
          o.level = 7;
          o.blosc.cname = cname;
          o.blosc.shuffle = shuffle;
          o.blosc.typesize = 2;
          o.blosc.blocksize = 256;
          Result<ArrayMetadata> m = BuildArrayMetadata(o);
          ASSERT_TRUE(m.ok()) << m.status().ToString();
          const json want = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                         Blosc(cname, 7, shuffle, 2, 256)});
          EXPECT_EQ(ChunkChain(*m), want);

          const ChunkSpec spec{dtype, o.chunk_shape, ZeroFill(dtype)};
          Result<CodecChain> chain = ParseCodecChain(ChunkChain(*m), spec);
          ASSERT_TRUE(chain.ok()) << chain.status().ToString();
          Bytes chunk(spec.NumBytes());
          for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<uint8_t>(i * 7 / 5);
          Bytes encoded, decoded;
          ASSERT_TRUE(chain->Encode(spec, ByteView(chunk.data(), chunk.size()), &encoded).ok());
          ASSERT_TRUE(chain->Decode(spec, ByteView(encoded.data(), encoded.size()), &decoded).ok());
          EXPECT_EQ(decoded, chunk);
        }
      }
    }
  }
}

TEST(BloscSettingsTest, ShuffleAliasesAreSpelledTheZarrWay) {
  for (auto [alias, name] : {std::pair{"none", "noshuffle"}, std::pair{"byte", "shuffle"}, std::pair{"bit", "bitshuffle"}}) {
    ArrayOptions o = Options(DataType::kUInt16, "blosc", false);
    o.blosc.shuffle = alias;
    Result<ArrayMetadata> m = BuildArrayMetadata(o);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(ChunkChain(*m)[1]["configuration"]["shuffle"], name) << alias;
  }
}

// Unset settings are zarr-python 3's BloscCodec() defaults.
TEST(BloscSettingsTest, DefaultsAreZarrPythons) {
  Result<ArrayMetadata> u8 = BuildArrayMetadata(Options(DataType::kUInt8, "blosc", false));
  ASSERT_TRUE(u8.ok()) << u8.status().ToString();
  EXPECT_EQ(ChunkChain(*u8)[1], Blosc("zstd", 5, "bitshuffle", 1, 0));
  Result<ArrayMetadata> f64 = BuildArrayMetadata(Options(DataType::kFloat64, "blosc", true));
  ASSERT_TRUE(f64.ok()) << f64.status().ToString();
  EXPECT_EQ(ChunkChain(*f64)[1], Blosc("zstd", 5, "shuffle", 8, 0));
}

// blosc-lz4 and blosc-zstd write what they always wrote.
TEST(BloscSettingsTest, PresetsAreUnchanged) {
  ArrayOptions o = Options(DataType::kUInt16, "blosc-lz4", false);
  o.level = 1;
  EXPECT_EQ(ChunkChain(BuildArrayMetadata(o).value())[1], Blosc("lz4", 1, "shuffle", 2, 0));
  o = Options(DataType::kUInt8, "blosc-zstd", true);
  EXPECT_EQ(ChunkChain(BuildArrayMetadata(o).value())[1], Blosc("zstd", 5, "noshuffle", 1, 0));
}

TEST(BloscSettingsTest, InvalidSettingsNameTheSettingAndItsValues) {
  auto build = [](auto set) {
    ArrayOptions o = Options(DataType::kUInt16, "blosc", false);
    set(o);
    return BuildArrayMetadata(o).status();
  };
  ExpectFieldError(build([](ArrayOptions& o) { o.blosc.cname = "snappy"; }), "cname",
                   {"blosclz, lz4, lz4hc, zlib, zstd", "snappy"});
  ExpectFieldError(build([](ArrayOptions& o) { o.blosc.cname = "LZ4"; }), "cname", {"LZ4"});
  ExpectFieldError(build([](ArrayOptions& o) { o.blosc.shuffle = "bits"; }), "shuffle",
                   {"noshuffle, shuffle or bitshuffle", "none, byte, bit", "bits"});
  ExpectFieldError(build([](ArrayOptions& o) { o.blosc.typesize = 0; }), "typesize", {"1..255", "0"});
  ExpectFieldError(build([](ArrayOptions& o) { o.blosc.typesize = 256; }), "typesize", {"1..255", "256"});
  ExpectFieldError(build([](ArrayOptions& o) { o.blosc.blocksize = -1; }), "blocksize", {">= 0", "-1"});
  ExpectFieldError(build([](ArrayOptions& o) { o.level = 10; }), "level", {"0..9", "10"});
}

TEST(BloscSettingsTest, SettingsWithAnotherCodecAreRefused) {
  for (const char* codec : {"none", "zstd", "gzip", "blosc-lz4", "blosc-zstd"}) {
    ArrayOptions o = Options(DataType::kUInt16, codec, false);
    o.blosc.shuffle = "bitshuffle";
    ExpectFieldError(BuildArrayMetadata(o).status(), "shuffle", {"applies to codec blosc", codec});
    o.blosc.cname = "lz4";
    ExpectFieldError(BuildArrayMetadata(o).status(), "cname", {"applies to codec blosc", codec});
  }
  ArrayOptions o = Options(DataType::kUInt16, "zstd", false);
  o.blosc.typesize = 4;
  ExpectFieldError(BuildArrayMetadata(o).status(), "typesize", {"applies to codec blosc"});
  o.blosc = {};
  o.blosc.blocksize = 0;
  ExpectFieldError(BuildArrayMetadata(o).status(), "blocksize", {"applies to codec blosc"});
}

TEST(BloscSettingsTest, SpellsAStoredConfiguration) {
  // The presets stay presets.
  std::optional<SpelledBlosc> lz4 = SpellBlosc(Blosc("lz4", 3, "shuffle", 2, 0)["configuration"], DataType::kUInt16);
  ASSERT_TRUE(lz4);
  EXPECT_EQ(lz4->codec, Codec::kBloscLz4);
  EXPECT_FALSE(lz4->blosc.given());
  EXPECT_EQ(lz4->clevel, 3);
  std::optional<SpelledBlosc> zstd = SpellBlosc(Blosc("zstd", 5, "noshuffle", 1, 0)["configuration"], DataType::kUInt8);
  ASSERT_TRUE(zstd);
  EXPECT_EQ(zstd->codec, Codec::kBloscZstd);
  // Anything else codec blosc writes: its cname and shuffle, typesize and blocksize where not the defaults.
  std::optional<SpelledBlosc> b = SpellBlosc(Blosc("blosclz", 9, "bitshuffle", 2, 0)["configuration"], DataType::kUInt16);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->codec, Codec::kBlosc);
  EXPECT_EQ(b->blosc.cname, "blosclz");
  EXPECT_EQ(b->blosc.shuffle, "bitshuffle");
  EXPECT_FALSE(b->blosc.typesize);
  EXPECT_FALSE(b->blosc.blocksize);
  EXPECT_EQ(b->clevel, 9);
  std::optional<SpelledBlosc> odd = SpellBlosc(Blosc("lz4", 1, "shuffle", 4, 1024)["configuration"], DataType::kUInt16);
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->codec, Codec::kBlosc);
  EXPECT_EQ(odd->blosc.typesize, 4);
  EXPECT_EQ(odd->blosc.blocksize, 1024);
  // What codec blosc does not write.
  EXPECT_FALSE(SpellBlosc(Blosc("snappy", 5, "shuffle", 2, 0)["configuration"], DataType::kUInt16));
  EXPECT_FALSE(SpellBlosc(json{{"cname", "lz4"}}, DataType::kUInt16));
  // Each spelling, built again, is the configuration it came from.
  for (const json& config : {Blosc("blosclz", 9, "bitshuffle", 2, 0), Blosc("lz4", 1, "shuffle", 4, 1024),
                             Blosc("zlib", 0, "noshuffle", 8, 0)}) {
    std::optional<SpelledBlosc> s = SpellBlosc(config["configuration"], DataType::kUInt16);
    ASSERT_TRUE(s);
    Result<json> built = BloscCodecJson(s->blosc, s->clevel, DataType::kUInt16);
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    EXPECT_EQ(*built, config);
  }
}

}  // namespace
}  // namespace tessera::zarr
