#include "tessera/zarr/v2_metadata.h"

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"

namespace tessera::zarr {
namespace {

Result<nlohmann::json> Translate(const std::string& changes) {
  nlohmann::json a = nlohmann::json::parse(R"({"zarr_format": 2, "shape": [10], "chunks": [4], "dtype": ">i4",
      "fill_value": 0, "order": "C", "compressor": null, "filters": null})");
  const nlohmann::json patch = nlohmann::json::parse(changes);
  for (const auto& [key, value] : patch.items()) a[key] = value;
  return V3DocumentFromV2(a, nlohmann::json::object(), "a/.zarray");
}

TEST(ZarrV2Metadata, FiltersBecomeCodecsAroundTheBytesCodec) {
  // What zarr-python 3 writes for filters=[Delta(">i4", astype=">i2"), Shuffle(2)], compressors=BZ2().
  auto doc = Translate(R"({"filters": [{"id": "delta", "dtype": ">i4", "astype": ">i2"}, {"id": "shuffle", "elementsize": 2}],
                           "compressor": {"id": "bz2", "level": 1}})");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ((*doc)["codecs"], nlohmann::json::parse(R"([
      {"name": "numcodecs.delta", "configuration": {"dtype": ">i4", "astype": ">i2"}},
      {"name": "bytes", "configuration": {"endian": "big"}},
      {"name": "numcodecs.shuffle", "configuration": {"elementsize": 2}},
      {"name": "numcodecs.bz2", "configuration": {"level": 1}}])"));
}

TEST(ZarrV2Metadata, CompressorsAndChecksumFilters) {
  auto lzma = Translate(R"({"compressor": {"id": "lzma", "format": 1, "check": -1, "preset": null, "filters": null},
                            "filters": [{"id": "crc32"}, {"id": "fletcher32"}]})");
  ASSERT_TRUE(lzma.ok()) << lzma.status().ToString();
  const nlohmann::json& codecs = (*lzma)["codecs"];
  ASSERT_EQ(codecs.size(), 4u);
  EXPECT_EQ(codecs[1]["name"], "numcodecs.crc32");
  EXPECT_EQ(codecs[2]["name"], "numcodecs.fletcher32");
  EXPECT_EQ(codecs[3], nlohmann::json::parse(
                           R"({"name": "numcodecs.lzma", "configuration": {"format": 1, "check": -1, "preset": null, "filters": null}})"));
  auto zlib = Translate(R"({"compressor": {"id": "zlib", "level": 4}})");
  ASSERT_TRUE(zlib.ok());
  EXPECT_EQ((*zlib)["codecs"][1], nlohmann::json::parse(R"({"name": "numcodecs.zlib", "configuration": {"level": 4}})"));
}

TEST(ZarrV2Metadata, DeltaOnlyWithTheArraysOwnDtypeAndBeforeBytesFilters) {
  EXPECT_ERROR(Translate(R"({"filters": [{"id": "delta", "dtype": "<i4"}]})"), ErrorKind::kUnsupported, "a/.zarray",
               "filter delta's dtype \"<i4\"", "\">i4\"");
  EXPECT_ERROR(Translate(R"({"filters": [{"id": "shuffle", "elementsize": 4}, {"id": "delta", "dtype": ">i4"}]})"),
               ErrorKind::kUnsupported, "a/.zarray", "filter delta after numcodecs.shuffle");
  EXPECT_ERROR(Translate(R"({"filters": [{"id": "delta"}]})"), ErrorKind::kInvalidArgument, "a/.zarray", "delta needs a \"dtype\"");
  EXPECT_ERROR(Translate(R"({"filters": {"id": "delta"}})"), ErrorKind::kInvalidArgument, "a/.zarray", "\"filters\" must be null or a list");
  // A 1-byte astype writes no byte order.
  auto narrow = Translate(R"({"filters": [{"id": "delta", "dtype": ">i4", "astype": "|i1"}]})");
  ASSERT_TRUE(narrow.ok()) << narrow.status().ToString();
  EXPECT_EQ((*narrow)["codecs"][1], nlohmann::json({{"name", "bytes"}}));
}

TEST(ZarrV2Metadata, QuantizeAndBitRound) {
  auto doc = Translate(R"({"dtype": ">f8", "filters": [{"id": "quantize", "digits": 3, "dtype": ">f8", "astype": ">f4"},
                                                        {"id": "bitround", "keepbits": 6}]})");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ((*doc)["codecs"], nlohmann::json::parse(R"([
      {"name": "numcodecs.quantize", "configuration": {"digits": 3, "dtype": ">f8", "astype": ">f4"}},
      {"name": "numcodecs.bitround", "configuration": {"keepbits": 6}},
      {"name": "bytes", "configuration": {"endian": "big"}}])"));
}

}  // namespace
}  // namespace tessera::zarr
