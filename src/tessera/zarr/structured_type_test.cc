#include "tessera/zarr/structured_type.h"

#include <gtest/gtest.h>

namespace tessera::zarr {
namespace {

TEST(StructuredTypeTest, FieldsBecomeNumpysStructure) {
  nlohmann::json j = nlohmann::json::parse(R"({"name": "structured", "configuration": {"fields":
      [["a", "int32"], ["b", ">f8"], ["s", {"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}}]]}})");
  std::optional<FixedBytesType> t = StructuredTypeFromJson(j).value();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->item_bytes, 15u);
  EXPECT_EQ(t->structure["formats"], nlohmann::json({"<i4", ">f8", "|S3"}));
  EXPECT_EQ(t->structure["offsets"], nlohmann::json({0, 4, 12}));
  EXPECT_EQ(t->Description(), "structured {a: <i4, b: >f8, s: |S3}");
  EXPECT_TRUE(t->endian_fields);  // "int32" follows the bytes codec's endian
  EXPECT_EQ(t->ToJson(), j);
  EXPECT_FALSE(StructuredTypeFromJson("int32").value());
}

TEST(StructuredTypeTest, RefusesSubarraysAndNestedFieldsNamingThem) {
  Result<std::optional<FixedBytesType>> sub = StructuredTypeFromJson(
      nlohmann::json::parse(R"({"name": "structured", "configuration": {"fields": [["a", "<i4", [2]]]}})"));
  EXPECT_EQ(sub.status().kind(), ErrorKind::kUnsupported);
  Result<std::optional<FixedBytesType>> nested = StructuredTypeFromJson(nlohmann::json::parse(
      R"({"name": "structured", "configuration": {"fields": [["inner", [["x", "<i4"]]]]}})"));
  ASSERT_EQ(nested.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(nested.status().message().find("\"inner\""), std::string::npos);
}

}  // namespace
}  // namespace tessera::zarr
