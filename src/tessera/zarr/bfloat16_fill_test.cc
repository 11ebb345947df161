#include "tessera/zarr/bfloat16_fill.h"

#include <gtest/gtest.h>

#include "tessera/zarr/metadata.h"

namespace tessera::zarr {
namespace {

uint16_t Bits(const FillValue& f) { return static_cast<uint16_t>(f.bytes[0] | (f.bytes[1] << 8)); }

TEST(BFloat16FillTest, ParsesEveryForm) {
  EXPECT_EQ(Bits(ParseBFloat16FillValue(1.0).value()), 0x3f80);
  EXPECT_EQ(Bits(ParseBFloat16FillValue(-2.5).value()), 0xc020);
  EXPECT_EQ(Bits(ParseBFloat16FillValue(0).value()), 0x0000);
  EXPECT_EQ(Bits(ParseBFloat16FillValue("NaN").value()), 0x7fc0);
  EXPECT_EQ(Bits(ParseBFloat16FillValue("Infinity").value()), 0x7f80);
  EXPECT_EQ(Bits(ParseBFloat16FillValue("-Infinity").value()), 0xff80);
  EXPECT_EQ(Bits(ParseBFloat16FillValue("0x7fc1").value()), 0x7fc1);
  EXPECT_EQ(Bits(ParseBFloat16FillValue("0xABCD").value()), 0xabcd);
  EXPECT_EQ(Bits(ParseBFloat16FillValue(1e300).value()), 0x7f80);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even pattern (1.0).
  EXPECT_EQ(Bits(ParseBFloat16FillValue(1.00390625).value()), 0x3f80);
}

TEST(BFloat16FillTest, RefusesWhatIsNoBFloat16) {
  for (const nlohmann::json& j : {nlohmann::json("nan"), nlohmann::json("0x7fc"), nlohmann::json("0x7fc0000"),
                                  nlohmann::json("0xzzzz"), nlohmann::json(true), nlohmann::json::array()}) {
    Result<FillValue> f = ParseBFloat16FillValue(j);
    ASSERT_FALSE(f.ok()) << j.dump();
    EXPECT_NE(f.status().message().find("bfloat16"), std::string::npos) << f.status().message();
  }
}

TEST(BFloat16FillTest, WritesBackWhatItRead) {
  for (const nlohmann::json& j : {nlohmann::json(1.5), nlohmann::json(-0.0078125), nlohmann::json("NaN"),
                                  nlohmann::json("Infinity"), nlohmann::json("-Infinity"), nlohmann::json("0x7fc1")})
    EXPECT_EQ(BFloat16FillValueToJson(ParseBFloat16FillValue(j).value()), j) << j.dump();
}

TEST(BFloat16FillTest, MetadataReadsBFloat16AsItsBits) {
  const nlohmann::json doc = nlohmann::json::parse(R"({
    "zarr_format": 3, "node_type": "array", "shape": [4, 6], "data_type": "bfloat16",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": -1.0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})");
  Result<ArrayMetadata> m = ArrayMetadata::FromJson(doc);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->bfloat16);
  EXPECT_EQ(m->dtype, DataType::kUInt16);
  EXPECT_EQ(Bits(m->fill_value), 0xbf80);
  const nlohmann::json back = m->ToJson();
  EXPECT_EQ(back["data_type"], "bfloat16");
  EXPECT_EQ(back["fill_value"], -1.0);
}

}  // namespace
}  // namespace tessera::zarr
