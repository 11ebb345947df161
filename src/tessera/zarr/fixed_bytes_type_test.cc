#include "tessera/zarr/fixed_bytes_type.h"

#include <gtest/gtest.h>

#include "tessera/zarr/metadata.h"

namespace tessera::zarr {
namespace {

TEST(FixedBytesTypeTest, ParsesV3AndNumpyNames) {
  std::optional<FixedBytesType> t =
      FixedBytesType::FromJson({{"name", "fixed_length_utf32"}, {"configuration", {{"length_bytes", 28}}}}).value();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Numpy(), "<U7");
  EXPECT_EQ(t->units(), 7);
  EXPECT_EQ(t->unit(), DataType::kUInt32);
  EXPECT_EQ(FixedBytesType::FromNumpy("S5")->ToJson()["name"], "null_terminated_bytes");
  EXPECT_EQ(FixedBytesType::FromNumpy("V8")->Numpy(), "|V8");
  EXPECT_FALSE(FixedBytesType::FromNumpy("S0"));
  EXPECT_FALSE(FixedBytesType::FromNumpy("i4"));
  EXPECT_FALSE(FixedBytesType::FromJson("uint8").value());
  EXPECT_FALSE(FixedBytesType::FromJson({{"name", "fixed_length_utf32"}, {"configuration", {{"length_bytes", 6}}}}).ok());
}

TEST(FixedBytesTypeTest, FillValues) {
  FixedBytesType s = *FixedBytesType::FromNumpy("S4");
  EXPECT_EQ(ParseFixedBytesFill(s, "YWI=").value(), (Bytes{'a', 'b', 0, 0}));
  EXPECT_EQ(ParseFixedBytesFill(s, nullptr).value(), Bytes(4, 0));
  EXPECT_FALSE(ParseFixedBytesFill(s, "YWJjZGU=").ok());  // 5 bytes
  FixedBytesType u = *FixedBytesType::FromNumpy("U2");
  EXPECT_EQ(ParseFixedBytesFill(u, "\xc3\xa9").value(), (Bytes{0xe9, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_FALSE(ParseFixedBytesFill(u, "abc").ok());
}

TEST(FixedBytesTypeTest, MetadataGainsTheUnitDimension) {
  nlohmann::json doc = nlohmann::json::parse(R"({
    "zarr_format": 3, "node_type": "array", "shape": [6],
    "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}},
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": "",
    "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
                "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes"}]}}]})");
  ArrayMetadata m = ArrayMetadata::FromJson(doc).value();
  EXPECT_EQ(m.shape, (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(m.chunk_shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(m.codecs[0]["configuration"]["chunk_shape"], nlohmann::json({2, 3}));
  EXPECT_EQ(m.chunk_key_encoding.Key({1, 0}), "c/1");
  EXPECT_EQ(m.ToJson()["shape"], nlohmann::json({6}));
  EXPECT_EQ(m.ToJson()["codecs"], doc["codecs"]);
  doc["fill_value"] = "ab";  // no repetition of one code unit, in a sharded array
  EXPECT_EQ(ArrayMetadata::FromJson(doc).status().kind(), ErrorKind::kUnsupported);
}

}  // namespace
}  // namespace tessera::zarr
