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

}  // namespace
}  // namespace tessera::pyramid
