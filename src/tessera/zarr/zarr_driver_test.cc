// The Zarr driver's part of a spec: codec blosc's settings resolved, refused where they do not
// apply, and read back from a stored array (DescribeSpec) in place of the chunk codecs as stored.
#include "tessera/zarr/zarr_driver.h"

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"
#include "tessera/api/driver_registry.h"
#include "tessera/spec/array_spec_json.h"
#include "tessera/spec/spec_error.h"
#include "tessera/zarr/array_options.h"

namespace tessera::zarr {
namespace {

using nlohmann::json;

ArraySpec Uint16Spec() {
  ArraySpec s;
  s.dtype = DataType::kUInt16;
  s.shape = {0, 30, 20};
  s.chunk_shape = {2, 10, 10};
  return s;
}

void ExpectFieldError(const Result<ArraySpec>& r, ErrorKind kind, std::string_view field, std::string_view fact) {
  ASSERT_ERROR(r, kind, fact);
  EXPECT_EQ(SpecFieldOfError(r.status()), field) << r.status().ToString();
}

TEST(ZarrDriverBloscTest, ResolvesSettingsInTheZarrSpelling) {
  ArraySpec s = Uint16Spec();
  s.codec = Codec::kBlosc;
  s.zarr.blosc.cname = "lz4hc";
  s.zarr.blosc.shuffle = "bit";
  Result<ArraySpec> r = ResolveSpec(s, Format::kZarr3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->zarr.blosc.shuffle, "bitshuffle");
  EXPECT_EQ(r->zarr.blosc.cname, "lz4hc");
}

TEST(ZarrDriverBloscTest, RefusesSettingsWithoutCodecBlosc) {
  ArraySpec s = Uint16Spec();
  s.zarr.blosc.cname = "blosclz";  // the codec left at zarr3's default, zstd
  ExpectFieldError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "cname", "applies to codec blosc, not zstd");
  s.codec = Codec::kBloscLz4;
  ExpectFieldError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "cname", "give codec blosc");
  s.codec = Codec::kBlosc;
  s.zarr.blosc.cname = "brotli";
  ExpectFieldError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "cname", "blosclz, lz4, lz4hc, zlib, zstd");
  s.zarr.blosc = {};
  s.level = 12;
  ExpectFieldError(ResolveSpec(s, Format::kZarr3), ErrorKind::kInvalidArgument, "level", "0..9");
}

TEST(ZarrDriverBloscTest, OtherFormatsRefuseBloscSettings) {
  ArraySpec s = Uint16Spec();
  s.zarr.blosc.typesize = 2;
  ExpectFieldError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "typesize", "hdf5");
  s.zarr.blosc.shuffle = "shuffle";
  ExpectFieldError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "shuffle", "zarr3");
  s.codec = Codec::kBlosc;
  s.zarr.blosc = {};
  ExpectFieldError(ResolveSpec(s, Format::kHdf5), ErrorKind::kUnsupported, "codec", "blosc");
}

TEST(ZarrDriverBloscTest, SettingsRoundTripThroughTheSpecJson) {
  ArraySpec s = Uint16Spec();
  s.codec = Codec::kBlosc;
  s.level = 9;
  s.zarr.blosc = {"blosclz", "bitshuffle", 4, 512};
  const json j = ArraySpecToJson(s);
  EXPECT_EQ(j["codec"], "blosc");
  EXPECT_EQ(j["zarr3"], (json{{"cname", "blosclz"}, {"shuffle", "bitshuffle"}, {"typesize", 4}, {"blocksize", 512}}));
  Result<ArraySpec> back = ArraySpecFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->zarr.blosc, s.zarr.blosc);
  EXPECT_EQ(back->codec, Codec::kBlosc);
  Result<ArraySpec> bad = ArraySpecFromJson({{"dtype", "uint8"}, {"shape", {1}}, {"zarr3", {{"typesize", "2"}}}});
  ASSERT_ERROR(bad, ErrorKind::kInvalidArgument, "zarr3.typesize", "an integer");
}

// The spec DescribeSpec gives a stored array: what writes its chunk codecs again.
ArraySpec Described(const json& metadata, DataType dtype) {
  const std::vector<int64_t> chunks = {2, 10, 10}, no_shards;
  const json description = json::object();
  ArraySpec s;
  s.dtype = dtype;
  s.shape = {4, 30, 20};
  s.chunk_shape = chunks;
  ZarrDriver().DescribeSpec({metadata, description, chunks, no_shards, 0}, &s);
  return s;
}

json MetadataWith(const json& chunk_codecs) {
  ArrayOptions o;
  o.dtype = DataType::kUInt16;
  o.shape = {4, 30, 20};
  o.chunk_shape = {2, 10, 10};
  o.chunk_codecs = chunk_codecs;
  return BuildArrayMetadata(o).value().ToJson();
}

json BloscConfig(const std::string& cname, const std::string& shuffle, int typesize, int blocksize) {
  return {{"name", "blosc"},
          {"configuration",
           {{"typesize", typesize}, {"cname", cname}, {"clevel", 9}, {"shuffle", shuffle}, {"blocksize", blocksize}}}};
}

const json kBytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};

TEST(ZarrDriverBloscTest, DescribesABloscArrayWithItsSettings) {
  for (const char* cname : {"blosclz", "lz4", "lz4hc", "zlib", "zstd"}) {
    for (const char* shuffle : {"noshuffle", "bitshuffle"}) {
      SCOPED_TRACE(std::string(cname) + " " + shuffle);
      const ArraySpec s = Described(MetadataWith(json::array({kBytes, BloscConfig(cname, shuffle, 2, 0)})), DataType::kUInt16);
      EXPECT_EQ(s.codec, Codec::kBlosc);
      EXPECT_EQ(s.level, 9);
      EXPECT_EQ(s.zarr.blosc.cname, cname);
      EXPECT_EQ(s.zarr.blosc.shuffle, shuffle);
      EXPECT_FALSE(s.zarr.blosc.typesize);
      EXPECT_TRUE(s.zarr.chunk_codecs.is_null()) << s.zarr.chunk_codecs.dump();
    }
  }
  const ArraySpec odd = Described(MetadataWith(json::array({kBytes, BloscConfig("zlib", "shuffle", 4, 4096)})), DataType::kUInt16);
  EXPECT_EQ(odd.zarr.blosc.typesize, 4);
  EXPECT_EQ(odd.zarr.blosc.blocksize, 4096);
  EXPECT_TRUE(odd.zarr.chunk_codecs.is_null()) << odd.zarr.chunk_codecs.dump();
  // The preset stays the preset.
  const ArraySpec lz4 = Described(MetadataWith(json::array({kBytes, BloscConfig("lz4", "shuffle", 2, 0)})), DataType::kUInt16);
  EXPECT_EQ(lz4.codec, Codec::kBloscLz4);
  EXPECT_FALSE(lz4.zarr.blosc.given());
  EXPECT_TRUE(lz4.zarr.chunk_codecs.is_null());
}

TEST(ZarrDriverBloscTest, ChainsTheSettingsCannotSpellAreCarriedAsStored) {
  const json transpose = {{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}};
  const json with_transpose = json::array({transpose, kBytes, BloscConfig("blosclz", "bitshuffle", 2, 0)});
  const ArraySpec t = Described(MetadataWith(with_transpose), DataType::kUInt16);
  EXPECT_EQ(t.zarr.chunk_codecs, with_transpose);
  const json snappy = json::array({kBytes, BloscConfig("snappy", "shuffle", 2, 0)});
  const ArraySpec sn = Described(MetadataWith(snappy), DataType::kUInt16);
  EXPECT_EQ(sn.zarr.chunk_codecs, snappy);
  EXPECT_FALSE(sn.zarr.blosc.given());
}

}  // namespace
}  // namespace tessera::zarr
