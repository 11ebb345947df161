#include "tessera/pyramid/ome_collections.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "cpp_support/status_matchers.h"
#include "tessera/pyramid/ome.h"

namespace tessera::pyramid {
namespace {

using nlohmann::json;

// A 2 x 3 plate with two acquisitions of up to 2 fields each, as the spec's plate example.
OmePlate TwoByThreePlate() {
  OmePlate plate;
  plate.name = "test";
  plate.rows = {"A", "B"};
  plate.columns = {"1", "2", "3"};
  plate.field_count = 4;
  plate.acquisitions = {{1, "Meas_01(2012-07-31_10-41-12)", 2, "", 1343731272000, std::nullopt},
                        {2, "Meas_02(201207-31_11-56-41)", 2, "", 1343735801000, std::nullopt}};
  return plate;
}

// The spec's image-label example (examples/colors_properties.json).
OmeImageLabel CellsLabel() {
  OmeImageLabel label;
  label.colors = {{0, {0, 0, 128, 128}}, {1, {0, 128, 0, 128}}};
  label.properties = json::parse(R"j([
      {"label-value": 0, "area (pixels)": 1200, "class": "intercellular space"},
      {"label-value": 1, "area (pixels)": 1650, "class": "cell", "cell type": "neuron"}])j");
  return label;
}

TEST(OmeCollectionsTest, LabelsGroupListsItsImages) {
  EXPECT_EQ(LabelsGroupAttributes({"cells", "nuclei"}),
            json::parse(R"j({"ome": {"version": "0.5", "labels": ["cells", "nuclei"]}})j"));
  EXPECT_EQ(LabelsGroupAttributes({}), json::parse(R"j({"ome": {"version": "0.5", "labels": []}})j"));
}

TEST(OmeCollectionsTest, ImageLabelAsTheSpecExample) {
  const OmeImageLabel label = CellsLabel();
  ASSERT_TRUE(CheckImageLabel(label).ok()) << CheckImageLabel(label).ToString();
  EXPECT_EQ(ImageLabelMember(label), json::parse(R"j({
      "version": "0.5",
      "colors": [{"label-value": 0, "rgba": [0, 0, 128, 128]}, {"label-value": 1, "rgba": [0, 128, 0, 128]}],
      "properties": [
        {"label-value": 0, "area (pixels)": 1200, "class": "intercellular space"},
        {"label-value": 1, "area (pixels)": 1650, "class": "cell", "cell type": "neuron"}],
      "source": {"image": "../../"}})j"));

  // Nothing given: the version and the default source only.
  EXPECT_EQ(ImageLabelMember(OmeImageLabel{}), json::parse(R"j({"version": "0.5", "source": {"image": "../../"}})j"));
  OmeImageLabel no_source;
  no_source.source_image.clear();
  EXPECT_EQ(ImageLabelMember(no_source), json::parse(R"j({"version": "0.5"})j"));
}

TEST(OmeCollectionsTest, ImageLabelChecksNameTheField) {
  struct Bad {
    const char* what;
    OmeImageLabel label;
    const char* field;
    const char* names;
  };
  std::vector<Bad> bad;
  bad.push_back({"rgba above 255", CellsLabel(), "image-label.colors[1].rgba", "256 is outside 0 to 255"});
  bad.back().label.colors[1].rgba[2] = 256;
  bad.push_back({"rgba below 0", CellsLabel(), "image-label.colors[0].rgba", "-1 is outside 0 to 255"});
  bad.back().label.colors[0].rgba[3] = -1;
  bad.push_back({"a colour twice", CellsLabel(), "image-label.colors[1]", "label-value 0 is listed twice"});
  bad.back().label.colors[1].label_value = 0;
  bad.push_back({"properties not an array", CellsLabel(), "image-label.properties", "expected an array"});
  bad.back().label.properties = json::object();
  bad.push_back({"a property not an object", CellsLabel(), "image-label.properties[1]", "integer \"label-value\""});
  bad.back().label.properties[1] = 1;
  bad.push_back({"a property without label-value", CellsLabel(), "image-label.properties[0]", "got {\"class\""});
  bad.back().label.properties[0] = {{"class", "x"}};
  bad.push_back({"a fractional label-value", CellsLabel(), "image-label.properties[1]", "got {\"label-value\":1.5}"});
  bad.back().label.properties[1] = {{"label-value", 1.5}};
  bad.push_back({"a property twice", CellsLabel(), "image-label.properties[1]", "label-value 0 is listed twice"});
  bad.back().label.properties[1]["label-value"] = 0;
  bad.push_back({"colours and properties disagree", CellsLabel(), "image-label.properties", "different label values"});
  bad.back().label.properties[1]["label-value"] = 2;
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.what);
    const Status s = CheckImageLabel(b.label);
    EXPECT_ERROR(s, ErrorKind::kInvalidArgument, b.field, b.names);
    EXPECT_EQ(s.field(), b.field);
  }

  // Either list alone is fine, as are colours without rgba values to check.
  OmeImageLabel colors_only = CellsLabel();
  colors_only.properties = json::array();
  EXPECT_TRUE(CheckImageLabel(colors_only).ok());
  OmeImageLabel properties_only = CellsLabel();
  properties_only.colors.clear();
  EXPECT_TRUE(CheckImageLabel(properties_only).ok());
}

TEST(OmeCollectionsTest, PlateWellsSortedOnceEachWithPaths) {
  const OmePlate plate = TwoByThreePlate();
  ASSERT_TRUE(CheckPlate(plate).ok()) << CheckPlate(plate).ToString();
  // Fields are created in any order, several per well.
  const json j = PlateAttributes(plate, {{1, 2}, {0, 0}, {1, 0}, {0, 0}, {0, 2}, {1, 2}});
  EXPECT_EQ(j, json::parse(R"j({"ome": {"version": "0.5", "plate": {
      "version": "0.5",
      "name": "test",
      "rows": [{"name": "A"}, {"name": "B"}],
      "columns": [{"name": "1"}, {"name": "2"}, {"name": "3"}],
      "wells": [
        {"path": "A/1", "rowIndex": 0, "columnIndex": 0},
        {"path": "A/3", "rowIndex": 0, "columnIndex": 2},
        {"path": "B/1", "rowIndex": 1, "columnIndex": 0},
        {"path": "B/3", "rowIndex": 1, "columnIndex": 2}],
      "field_count": 4,
      "acquisitions": [
        {"id": 1, "name": "Meas_01(2012-07-31_10-41-12)", "maximumfieldcount": 2, "starttime": 1343731272000},
        {"id": 2, "name": "Meas_02(201207-31_11-56-41)", "maximumfieldcount": 2, "starttime": 1343735801000}]
      }}})j"));

  // Unset members are left out; a plate before its first field has no wells.
  OmePlate bare;
  bare.rows = {"A"};
  bare.columns = {"1"};
  bare.acquisitions = {{0, "", 0, "first", std::nullopt, 7}};
  EXPECT_EQ(PlateAttributes(bare, {}), json::parse(R"j({"ome": {"version": "0.5", "plate": {
      "version": "0.5", "rows": [{"name": "A"}], "columns": [{"name": "1"}], "wells": [],
      "acquisitions": [{"id": 0, "description": "first", "endtime": 7}]}}})j"));
}

TEST(OmeCollectionsTest, PlateChecksNameTheField) {
  struct Bad {
    const char* what;
    OmePlate plate;
    const char* field;
    const char* names;
  };
  std::vector<Bad> bad;
  bad.push_back({"no rows", TwoByThreePlate(), "plate.rows", "at least one"});
  bad.back().plate.rows.clear();
  bad.push_back({"no columns", TwoByThreePlate(), "plate.columns", "at least one"});
  bad.back().plate.columns.clear();
  bad.push_back({"a row not alphanumeric", TwoByThreePlate(), "plate.rows[1].name", "\"B-1\" is not alphanumeric"});
  bad.back().plate.rows[1] = "B-1";
  bad.push_back({"an empty column", TwoByThreePlate(), "plate.columns[0].name", "\"\" is not alphanumeric"});
  bad.back().plate.columns[0] = "";
  bad.push_back({"a column twice", TwoByThreePlate(), "plate.columns[2].name", "\"1\" repeats an earlier name"});
  bad.back().plate.columns[2] = "1";
  bad.push_back({"rows apart only by case", TwoByThreePlate(), "plate.rows[1].name", "\"a\" repeats", });
  bad.back().plate.rows[1] = "a";
  bad.push_back({"negative field_count", TwoByThreePlate(), "plate.field_count", "-1 is negative"});
  bad.back().plate.field_count = -1;
  bad.push_back({"negative acquisition id", TwoByThreePlate(), "plate.acquisitions[0].id", "-3 is negative"});
  bad.back().plate.acquisitions[0].id = -3;
  bad.push_back({"acquisition id twice", TwoByThreePlate(), "plate.acquisitions[1].id", "1 is used twice"});
  bad.back().plate.acquisitions[1].id = 1;
  bad.push_back({"negative maximumfieldcount", TwoByThreePlate(), "plate.acquisitions[1].maximumfieldcount",
                 "-2 is negative"});
  bad.back().plate.acquisitions[1].maximum_field_count = -2;
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.what);
    const Status s = CheckPlate(b.plate);
    EXPECT_ERROR(s, ErrorKind::kInvalidArgument, b.field, b.names);
    EXPECT_EQ(s.field(), b.field);
  }
}

TEST(OmeCollectionsTest, WellListsItsFieldsAndTheirAcquisitions) {
  const OmePlate plate = TwoByThreePlate();
  const std::vector<OmeWellImage> images = {{"0", 1}, {"1", 1}, {"2", 2}, {"3", 2}};
  ASSERT_TRUE(CheckWell(plate, images).ok()) << CheckWell(plate, images).ToString();
  EXPECT_EQ(WellAttributes(images), json::parse(R"j({"ome": {"version": "0.5", "well": {"version": "0.5", "images": [
      {"path": "0", "acquisition": 1}, {"path": "1", "acquisition": 1},
      {"path": "2", "acquisition": 2}, {"path": "3", "acquisition": 2}]}}})j"));

  // A plate with at most one acquisition: the images need not name it.
  OmePlate single = plate;
  single.acquisitions.resize(1);
  EXPECT_TRUE(CheckWell(single, {{"0", std::nullopt}, {"1", 1}}).ok());
  EXPECT_EQ(WellAttributes({{"0", std::nullopt}}),
            json::parse(R"j({"ome": {"version": "0.5", "well": {"version": "0.5", "images": [{"path": "0"}]}}})j"));

  EXPECT_ERROR(CheckWell(plate, {{"0", 1}, {"0", 2}}), ErrorKind::kInvalidArgument, "well.images[1].path",
               "\"0\" is used twice");
  EXPECT_ERROR(CheckWell(plate, {{"f_0", 1}}), ErrorKind::kInvalidArgument, "well.images[0].path",
               "\"f_0\" is not alphanumeric");
  EXPECT_ERROR(CheckWell(plate, {{"0", 1}, {"1", 3}}), ErrorKind::kInvalidArgument, "well.images[1].acquisition",
               "3 is not an acquisition of the plate (ids: 1, 2)");
  EXPECT_ERROR(CheckWell(plate, {{"0", std::nullopt}}), ErrorKind::kInvalidArgument, "well.images[0].acquisition",
               "the plate has 2 acquisitions");
  OmePlate none = plate;
  none.acquisitions.clear();
  EXPECT_ERROR(CheckWell(none, {{"0", 0}}), ErrorKind::kInvalidArgument, "(ids: none)");
  EXPECT_ERROR(CheckWell(plate, {{"0", 1}, {"1", 1}, {"2", 2}, {"3", 2}, {"4", 2}}), ErrorKind::kInvalidArgument,
               "well.images", "5 fields of view, more than the plate's field_count 4");
}

TEST(OmeCollectionsTest, FieldPathsRelativeToThePlate) {
  const OmePlate plate = TwoByThreePlate();
  auto f = ParseFieldPath(plate, "B/3/0");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->well, (OmeWell{1, 2}));
  EXPECT_EQ(f->field, "0");
  f = ParseFieldPath(plate, "A/1/f2");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->well, (OmeWell{0, 0}));
  EXPECT_EQ(f->field, "f2");

  EXPECT_ERROR(ParseFieldPath(plate, "C/1/0"), ErrorKind::kInvalidArgument, "field path \"C/1/0\"",
               "row \"C\" is not one of the plate's rows (A, B)");
  EXPECT_ERROR(ParseFieldPath(plate, "A/4/0"), ErrorKind::kInvalidArgument, "field path \"A/4/0\"",
               "column \"4\" is not one of the plate's columns (1, 2, 3)");
  EXPECT_ERROR(ParseFieldPath(plate, "A/1"), ErrorKind::kInvalidArgument, "field path \"A/1\"",
               "expected row/column/field", "e.g. \"A/1/0\"");
  EXPECT_ERROR(ParseFieldPath(plate, "A/1/0/labels"), ErrorKind::kInvalidArgument, "expected row/column/field");
  EXPECT_ERROR(ParseFieldPath(plate, "/A/1/0"), ErrorKind::kInvalidArgument, "expected row/column/field");
  EXPECT_ERROR(ParseFieldPath(plate, "A/1/"), ErrorKind::kInvalidArgument, "the field \"\" is not alphanumeric");
  EXPECT_ERROR(ParseFieldPath(plate, "a/1/0"), ErrorKind::kInvalidArgument, "row \"a\"");
}

}  // namespace
}  // namespace tessera::pyramid
