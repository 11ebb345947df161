#include "tessera/zarr/metadata.h"

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"
#include "tessera/zarr/v2_metadata.h"

namespace tessera::zarr {
namespace {

const char* kDoc = R"({
  "zarr_format": 3, "node_type": "array", "shape": [10, 0, 3], "data_type": "float32",
  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4, 3]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}},
  "fill_value": "NaN", "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
  "attributes": {"a": 1}, "dimension_names": ["t", null, "c"],
  "storage_transformers": [], "extension": {"must_understand": false}
})";

TEST(MetadataTest, ParsesAndRoundTrips) {
  auto m = ArrayMetadata::FromJson(nlohmann::json::parse(kDoc));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->shape, (std::vector<int64_t>{10, 0, 3}));
  EXPECT_EQ(m->dtype, DataType::kFloat32);
  EXPECT_EQ(m->chunk_key_encoding.Key({1, 2, 0}), "c.1.2.0");
  float f;
  std::memcpy(&f, m->fill_value.bytes.data(), 4);
  EXPECT_TRUE(std::isnan(f));
  auto again = ArrayMetadata::FromJson(m->ToJson());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ToJson(), m->ToJson());
  EXPECT_EQ(m->ToJson()["fill_value"], "NaN");
}

TEST(MetadataTest, ChunkKeyEncodings) {
  ChunkKeyEncoding def;
  EXPECT_EQ(def.Key({0, 12}), "c/0/12");
  EXPECT_EQ(def.Key({}), "c");
  auto v2 = ChunkKeyEncoding::FromJson(nlohmann::json::parse(R"({"name":"v2"})"));
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->Key({3, 4}), "3.4");
  EXPECT_EQ(v2->Key({}), "0");
}

TEST(MetadataTest, FillValueEncodings) {
  auto f = ParseFillValue(DataType::kFloat64, "-Infinity");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(FillValueToJson(DataType::kFloat64, *f), "-Infinity");
  auto hex = ParseFillValue(DataType::kFloat32, "0x7fc00001");
  ASSERT_TRUE(hex.ok());
  EXPECT_EQ(FillValueToJson(DataType::kFloat32, *hex), "0x7fc00001");
  auto c = ParseFillValue(DataType::kComplex64, nlohmann::json::parse(R"([1.5, "NaN"])"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(FillValueToJson(DataType::kComplex64, *c), nlohmann::json::parse(R"([1.5, "NaN"])"));
  auto h = ParseFillValue(DataType::kFloat16, 1.5);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->bytes, (Bytes{0x00, 0x3e}));
  EXPECT_EQ(FillValueToJson(DataType::kFloat16, *h), 1.5);
  EXPECT_ERROR(ParseFillValue(DataType::kUInt8, 256), ErrorKind::kInvalidArgument, "fill_value 256 out of range");
  EXPECT_ERROR(ParseFillValue(DataType::kInt8, -129), ErrorKind::kInvalidArgument, "fill_value -129 out of range");
  EXPECT_ERROR(ParseFillValue(DataType::kBool, 1), ErrorKind::kInvalidArgument, "fill_value 1 is not a boolean");
  auto u64 = ParseFillValue(DataType::kUInt64, nlohmann::json::parse("18446744073709551615"));
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(u64->bytes, Bytes(8, 0xff));
}

TEST(MetadataTest, RejectsBadDocuments) {
  auto bad_json = ParseJsonDocument("{\"zarr_format\": 3,", "store/zarr.json");
  EXPECT_ERROR(bad_json, ErrorKind::kCorruptData, "store/zarr.json", "malformed JSON at byte");
  auto j = nlohmann::json::parse(kDoc);
  j["data_type"] = "int4";
  EXPECT_ERROR(ArrayMetadata::FromJson(j), ErrorKind::kUnsupported, "data type \"int4\"");
  j = nlohmann::json::parse(kDoc);
  j["data_type"] = {{"name", "string"}};
  EXPECT_ERROR(ArrayMetadata::FromJson(j), ErrorKind::kUnsupported, "data_type {\"name\":\"string\"}");
  j = nlohmann::json::parse(kDoc);
  j["mystery"] = 1;
  EXPECT_ERROR(ArrayMetadata::FromJson(j), ErrorKind::kUnsupported, "unknown field \"mystery\"");
  j = nlohmann::json::parse(kDoc);
  j.erase("codecs");
  EXPECT_ERROR(ArrayMetadata::FromJson(j), ErrorKind::kInvalidArgument, "missing \"codecs\"");
  j = nlohmann::json::parse(kDoc);
  j["chunk_grid"]["configuration"]["chunk_shape"] = {4, 4};
  EXPECT_ERROR(ArrayMetadata::FromJson(j), ErrorKind::kInvalidArgument, "chunk_shape rank does not match shape rank");
  j = nlohmann::json::parse(kDoc);
  j["chunk_grid"]["name"] = 5;
  EXPECT_ERROR(ArrayMetadata::FromJson(j), ErrorKind::kUnsupported, "only the \"regular\" chunk_grid");
}

// Members of the wrong type in a .zarray (found by fuzzing: each once escaped as a JSON exception).
TEST(MetadataTest, RejectsV2MembersOfTheWrongType) {
  const auto v2 = [](const char* change) {
    nlohmann::json a = nlohmann::json::parse(R"({"zarr_format": 2, "shape": [6, 5], "chunks": [4, 2], "dtype": "<u4",
        "fill_value": 3, "order": "C", "compressor": {"id": "blosc", "cname": "zstd"}})");
    const nlohmann::json patch = nlohmann::json::parse(change);
    for (const auto& [key, value] : patch.items()) {
      if (key == "compressor") a[key].update(value);
      else a[key] = value;  // unlike merge_patch, keeps a null
    }
    return V3DocumentFromV2(a, nlohmann::json::object(), "a/.zarray");
  };
  auto plain = v2("{}");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_ERROR(v2(R"({"order": null})"), ErrorKind::kInvalidArgument, "a/.zarray", "\"order\" must be a string, not null");
  EXPECT_ERROR(v2(R"({"order": "K"})"), ErrorKind::kInvalidArgument, "a/.zarray", "order must be \"C\" or \"F\"");
  EXPECT_ERROR(v2(R"({"zarr_format": "2"})"), ErrorKind::kInvalidArgument, "a/.zarray", "zarr_format is not 2");
  EXPECT_ERROR(v2(R"({"dimension_separator": 1})"), ErrorKind::kInvalidArgument, "\"dimension_separator\" must be a string");
  EXPECT_ERROR(v2(R"({"compressor": {"cname": 5}})"), ErrorKind::kInvalidArgument, "compressor", "\"cname\" must be a string");
  EXPECT_ERROR(v2(R"({"filters": [{"id": 5}]})"), ErrorKind::kInvalidArgument, "a/.zarray", "filter must be an object with an \"id\"");
  EXPECT_ERROR(v2(R"({"filters": [{"id": "astype", "encode_dtype": "<f4"}]})"), ErrorKind::kUnsupported, "a/.zarray", "filter \"astype\"");
  EXPECT_ERROR(v2(R"({"compressor": {"id": "zfpy"}})"), ErrorKind::kUnsupported, "a/.zarray", "compressor \"zfpy\"");
  // null is how zarr-python 2 says "the default separator".
  auto dotted = v2(R"({"dimension_separator": null})");
  ASSERT_TRUE(dotted.ok()) << dotted.status().ToString();
  EXPECT_EQ((*dotted)["chunk_key_encoding"]["configuration"]["separator"], ".");
}

}  // namespace
}  // namespace tessera::zarr
