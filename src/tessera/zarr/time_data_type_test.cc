#include "tessera/zarr/time_data_type.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tessera/zarr/metadata.h"
#include "tessera/zarr/v2_metadata.h"

namespace tessera::zarr {
namespace {

int64_t Count(const FillValue& f) {
  int64_t v = 0;
  std::memcpy(&v, f.bytes.data(), 8);
  return v;
}

TEST(TimeDataTypeTest, ParsesV3DataTypeAndRoundTrips) {
  nlohmann::json j = {{"name", "numpy.datetime64"}, {"configuration", {{"unit", "ms"}, {"scale_factor", 10}}}};
  std::optional<TimeDataType> t = TimeDataType::FromJson(j).value();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Numpy(), "<M8[10ms]");
  EXPECT_EQ(t->Description(), "datetime64[10ms]");
  EXPECT_EQ(t->ToJson(), j);
  t = TimeDataType::FromJson({{"name", "numpy.timedelta64"}, {"configuration", {{"unit", "\xce\xbcs"}}}}).value();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Numpy(), "<m8[us]");
  EXPECT_FALSE(TimeDataType::FromJson("int64").value());
  EXPECT_FALSE(TimeDataType::FromJson({{"name", "numpy.datetime64"}, {"configuration", {{"unit", "fortnight"}}}}).ok());
  EXPECT_FALSE(TimeDataType::FromJson({{"name", "numpy.datetime64"}, {"configuration", {{"unit", "s"}, {"scale_factor", 0}}}}).ok());
}

TEST(TimeDataTypeTest, ParsesNumpyStrings) {
  EXPECT_EQ(TimeDataType::FromNumpy("M8[ns]").value()->Numpy(), "<M8[ns]");
  EXPECT_EQ(TimeDataType::FromNumpy("m8[3h]").value()->Numpy(), "<m8[3h]");
  EXPECT_FALSE(TimeDataType::FromNumpy("M8").value());
  EXPECT_FALSE(TimeDataType::FromNumpy("M8[generic]").value());
  EXPECT_FALSE(TimeDataType::FromNumpy("i8").value());
}

TEST(TimeDataTypeTest, FillValueIntegerOrNaT) {
  EXPECT_EQ(Count(ParseTimeFillValue(-5).value()), -5);
  EXPECT_EQ(Count(ParseTimeFillValue("NaT").value()), INT64_MIN);
  EXPECT_EQ(Count(ParseTimeFillValue(nlohmann::json(INT64_MIN)).value()), INT64_MIN);
  EXPECT_FALSE(ParseTimeFillValue("soon").ok());
}

TEST(TimeDataTypeTest, V2DtypeBecomesV3DataTypeWithItsEndian) {
  nlohmann::json v2 = {{"zarr_format", 2}, {"shape", {4}}, {"chunks", {2}}, {"dtype", ">m8[10s]"},
                       {"fill_value", nullptr}, {"compressor", nullptr}, {"filters", nullptr}};
  nlohmann::json v3 = V3DocumentFromV2(v2, nlohmann::json::object(), ".zarray").value();
  ArrayMetadata m = ArrayMetadata::FromJson(v3).value();
  ASSERT_TRUE(m.time);
  EXPECT_EQ(m.time->Numpy(), "<m8[10s]");
  EXPECT_EQ(m.dtype, DataType::kInt64);
  EXPECT_EQ(Count(m.fill_value), INT64_MIN);  // null reads as NaT, as zarr-python fills it
  EXPECT_EQ(v3["codecs"][0]["configuration"]["endian"], "big");
}

}  // namespace
}  // namespace tessera::zarr
