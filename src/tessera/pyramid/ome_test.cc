#include "tessera/pyramid/ome.h"

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"

namespace tessera::pyramid {
namespace {

TEST(OmeTest, ParsesAndChecksAxes) {
  auto axes = ParseOmeAxes("t:time:second,c:channel,z:space:micrometer,y:space:micrometer,x:space:micrometer");
  ASSERT_TRUE(axes.ok()) << axes.status().ToString();
  ASSERT_EQ(axes->size(), 5u);
  EXPECT_EQ((*axes)[0], (OmeAxis{"t", "time", "second"}));
  EXPECT_EQ((*axes)[1], (OmeAxis{"c", "channel", ""}));
  EXPECT_EQ(DefaultFactors(*axes), (std::vector<int64_t>{1, 1, 2, 2, 2}));

  struct Bad {
    const char* axes;
    const char* names;  // what the message must name
  };
  for (const Bad& bad : {Bad{"x:space", "2 to 5 axes, not 1"},
                         Bad{"y:space,x", "\"x\" is not name:type or name:type:unit"},
                         Bad{"y:space,y:space", "the name \"y\" is used twice"},
                         Bad{"y:space:micrometer,x:space:furlong", "\"furlong\" is not a space unit"},
                         Bad{"y:space,x:space,t:time", "\"t\" (time) is out of order"},
                         Bad{"t:time:meter,y:space,x:space", "\"meter\" is not a time unit"},
                         Bad{"a:space,b:space,c:space,d:space", "2 or 3 space axes, not 4"},
                         Bad{"t:time,u:time,y:space,x:space", "at most one time axis"},
                         Bad{"c:channel,d:custom,y:space,x:space", "at most one channel"}}) {
    SCOPED_TRACE(bad.axes);
    auto r = ParseOmeAxes(bad.axes);
    EXPECT_ERROR(r, ErrorKind::kInvalidArgument, bad.names);
    EXPECT_EQ(r.status().message().rfind("axes: ", 0), 0u) << r.status().ToString();
  }
}

TEST(OmeTest, DefaultAxesFromRankOrNames) {
  EXPECT_EQ(DefaultOmeAxes(3, {}),
            (std::vector<OmeAxis>{{"z", "space", ""}, {"y", "space", ""}, {"x", "space", ""}}));
  EXPECT_EQ(DefaultOmeAxes(5, {})[0], (OmeAxis{"t", "time", ""}));
  EXPECT_EQ(DefaultOmeAxes(5, {})[1], (OmeAxis{"c", "channel", ""}));
  const auto camera = DefaultOmeAxes(3, {"t", "y", "x"});
  EXPECT_EQ(camera[0], (OmeAxis{"t", "time", ""}));
  EXPECT_EQ(DefaultFactors(camera), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_TRUE(CheckOmeAxes(camera).ok());
}

TEST(OmeTest, LevelsScaleAndCentre) {
  OmeImage image;
  image.name = "stack";
  image.axes = *ParseOmeAxes("t:time:second,y:space:micrometer,x:space:micrometer");
  image.voxel_size = {0.5, 0.2, 0.2};
  image.factors = {1, 2, 2};
  image.levels = 3;
  image.method = "mean";
  const nlohmann::json j = OmeAttributes(image);
  EXPECT_EQ(j["ome"]["version"], "0.5");
  const auto& ms = j["ome"]["multiscales"][0];
  EXPECT_EQ(ms["name"], "stack");
  EXPECT_EQ(ms["type"], "mean");
  EXPECT_EQ(ms["axes"][1], (nlohmann::json{{"name", "y"}, {"type", "space"}, {"unit", "micrometer"}}));
  ASSERT_EQ(ms["datasets"].size(), 3u);
  // Level 0: the voxel size, no translation.
  EXPECT_EQ(ms["datasets"][0]["path"], "0");
  EXPECT_EQ(ms["datasets"][0]["coordinateTransformations"].size(), 1u);
  // Level 2: 4x the voxel size; centres 1.5 level-0 voxels in.
  const auto& t2 = ms["datasets"][2]["coordinateTransformations"];
  EXPECT_EQ(t2[0]["scale"], (nlohmann::json{0.5, 0.8, 0.8}));
  EXPECT_EQ(t2[1]["type"], "translation");
  EXPECT_DOUBLE_EQ(t2[1]["translation"][1].get<double>(), 0.30000000000000004);
  EXPECT_EQ(t2[1]["translation"][0], 0.0);
}

TEST(OmeTest, CallerAttributesGoBesideOmeAndOmeroInsideIt) {
  OmeImage image;
  image.axes = {{"y", "space", ""}, {"x", "space", ""}};
  image.factors = {1, 1};
  const nlohmann::json omero = {{"channels", nlohmann::json::array({{{"label", "DAPI"}}})}};
  const nlohmann::json caller = {{"omero", omero}, {"stage", {{"x", 1}}}, {"ome", {{"version", "0.4"}, {"extra", 2}}}};
  const nlohmann::json group = ImageGroupAttributes(image, caller);
  EXPECT_EQ(group["ome"]["omero"], omero);
  EXPECT_EQ(group["ome"]["version"], "0.5") << "tessera's version and multiscales are not overridden";
  EXPECT_EQ(group["ome"]["extra"], 2);
  EXPECT_EQ(group["stage"], (nlohmann::json{{"x", 1}}));
  EXPECT_FALSE(group.contains("omero"));
  // And back: the caller's spelling.
  EXPECT_EQ(CallerAttributes(group), (nlohmann::json{{"omero", omero}, {"stage", {{"x", 1}}}}));
}

TEST(OmeTest, VoxelSizeInNanometres) {
  const std::vector<OmeAxis> um = {{"c", "channel", ""}, {"z", "space", "micrometer"}, {"y", "space", "micrometer"},
                                   {"x", "space", "nanometer"}};
  const auto xyz = VoxelSizeNanometresXyz(um, {1, 2, 0.5, 4});
  ASSERT_TRUE(xyz.has_value());
  EXPECT_EQ(*xyz, (std::array<double, 3>{4, 500, 2000}));
  const auto yx = VoxelSizeNanometresXyz({{"y", "space", "micrometer"}, {"x", "space", "micrometer"}}, {0.5, 0.25});
  ASSERT_TRUE(yx.has_value());
  EXPECT_EQ(*yx, (std::array<double, 3>{250, 500, 1})) << "two space axes: z stays 1";
  EXPECT_FALSE(VoxelSizeNanometresXyz({{"y", "space", ""}, {"x", "space", "micrometer"}}, {1, 1}).has_value())
      << "a space axis without a unit: not convertible";
  EXPECT_FALSE(VoxelSizeNanometresXyz({{"y", "space", "foot"}, {"x", "space", "foot"}}, {1, 1}).has_value());
}

}  // namespace
}  // namespace tessera::pyramid
