// Several arrays in one acquisition: each array's files equal those of a stream of its own (the
// shared pool changes nothing stored), the groups carry their OME-Zarr metadata as the arrays are
// created, attributes set while streaming are published at the next flush, the memory budget
// refuses an array past it, and an aborted acquisition keeps what it published.
#include "tessera/api/acquisition.h"

#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "cpp_support/api_helpers.h"
#include "cpp_support/status_matchers.h"
#include "tessera/api/array.h"

namespace tessera {
namespace {

using api_test::Files;
using api_test::Uint16;

class AcquisitionTest : public api_test::TempDirTest {
 protected:
  nlohmann::json Json(const std::string& relative) const {
    std::ifstream f(dir_ / relative);
    EXPECT_TRUE(f.good()) << relative;
    return nlohmann::json::parse(f, nullptr, false);
  }
};

std::vector<uint16_t> Random(int64_t n, uint32_t seed) {
  std::vector<uint16_t> v(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  for (auto& x : v) x = static_cast<uint16_t>(rng() % 5000);
  return v;
}

ByteView View(const std::vector<uint16_t>& v, int64_t first, int64_t count) {
  return ByteView(reinterpret_cast<const uint8_t*>(v.data() + first), static_cast<size_t>(count) * 2);
}

ArraySpec Camera() {
  ArraySpec s = Uint16({0, 40, 36}, {4, 16, 16}, {2, 2, 2});
  s.codec = Codec::kZstd;
  return s;
}

ArraySpec CameraImage() {
  ArraySpec s = Camera();
  s.pyramid.levels = 3;
  s.ome.image = true;
  return s;
}

// Two cameras, frames interleaved, on one pool of 3 threads: every file of each array is the
// file a stream of its own writes.
TEST_F(AcquisitionTest, EachArrayEqualsAStreamOfItsOwn) {
  AcquisitionOptions o;
  o.threads = 3;
  auto acq = Acquisition::Create(Path("acq.zarr"), o);
  ASSERT_TRUE(acq.ok()) << acq.status().ToString();
  Result<Stream*> cam1 = (*acq)->CreateArray("cam1", CameraImage());
  ASSERT_TRUE(cam1.ok()) << cam1.status().ToString();
  Result<Stream*> cam2 = (*acq)->CreateArray("sub/cam2", Camera());
  ASSERT_TRUE(cam2.ok()) << cam2.status().ToString();
  const int64_t frame = 40 * 36, frames = 23;
  const auto a = Random(frames * frame, 1), b = Random(frames * frame, 2);
  for (int64_t t = 0; t < frames; ++t) {
    ASSERT_TRUE((*cam1)->Append(View(a, t * frame, frame)).ok());
    ASSERT_TRUE((*acq)->Append("sub/cam2", View(b, t * frame, frame)).ok());
  }
  ASSERT_TRUE((*acq)->Close().ok());

  for (const auto& [name, spec, data] : {std::tuple{"cam1", CameraImage(), &a}, std::tuple{"cam2", Camera(), &b}}) {
    StreamOptions so;
    so.threads = 2;
    auto s = CreateStream(Path(std::string("own/") + name), spec, so);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->Append(View(*data, 0, frames * frame)).ok());
    ASSERT_TRUE((*s)->Close().ok());
  }
  EXPECT_EQ(Files(dir_ / "acq.zarr/cam1"), Files(dir_ / "own/cam1"));
  EXPECT_EQ(Files(dir_ / "acq.zarr/sub/cam2"), Files(dir_ / "own/cam2"));
  EXPECT_EQ(Json("acq.zarr/zarr.json")["node_type"], "group");
  EXPECT_EQ(Json("acq.zarr/sub/zarr.json")["node_type"], "group");
  auto read = OpenArray(Path("acq.zarr/sub/cam2"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ((*read)->shape()[0], frames);
}

// Two epoch buffers per array store the same bytes as one, and the plan counts them.
TEST_F(AcquisitionTest, InputBuffersChangeMemoryNotBytes) {
  std::string plans[2];
  for (int buffers : {1, 2}) {
    AcquisitionOptions o;
    o.threads = 2;
    o.input_buffers = buffers;
    auto acq = Acquisition::Create(Path("acq" + std::to_string(buffers) + ".zarr"), o).value();
    Stream* a = acq->CreateArray("a", CameraImage()).value();
    Stream* b = acq->CreateArray("b", Camera()).value();
    const auto d = Random(21 * 40 * 36, 9);
    for (int64_t t = 0; t < 21; ++t) {
      ASSERT_TRUE(a->Append(View(d, t * 1440, 1440)).ok());
      ASSERT_TRUE(b->Append(View(d, (20 - t) * 1440, 1440)).ok());
    }
    plans[buffers - 1] = acq->DescribePlan();
    ASSERT_TRUE(acq->Close().ok());
  }
  EXPECT_EQ(Files(dir_ / "acq1.zarr"), Files(dir_ / "acq2.zarr"));
  EXPECT_NE(plans[0].find("input epoch buffers:    1 x"), std::string::npos) << plans[0];
  EXPECT_NE(plans[1].find("input epoch buffers:    2 x"), std::string::npos) << plans[1];
  AcquisitionOptions bad;
  bad.input_buffers = 3;
  EXPECT_ERROR(Acquisition::Create(Path("bad.zarr"), bad).status(), ErrorKind::kInvalidArgument, "input_buffers");
}

TEST_F(AcquisitionTest, LabelsAndPlateGroupsAreWrittenAsTheirArraysAreCreated) {
  auto acq = Acquisition::Create(Path("acq.zarr")).value();
  ASSERT_TRUE(acq->CreateArray("img", CameraImage()).ok());
  pyramid::OmeImageLabel label;
  label.colors = {{1, {255, 0, 0, 255}}, {2, {0, 255, 0, 128}}};
  ArraySpec cells = Camera();
  cells.dtype = DataType::kUInt32;
  Result<Stream*> lab = acq->CreateLabels("img", "cells", cells, label);
  ASSERT_TRUE(lab.ok()) << lab.status().ToString();
  EXPECT_EQ((*lab)->spec().level_count(), 3);
  EXPECT_EQ(*(*lab)->spec().pyramid.method, pyramid::DownsampleMethod::kMode);
  EXPECT_EQ(Json("acq.zarr/img/labels/zarr.json")["attributes"]["ome"]["labels"], nlohmann::json({"cells"}));
  const nlohmann::json image_label = Json("acq.zarr/img/labels/cells/zarr.json")["attributes"]["ome"]["image-label"];
  EXPECT_EQ(image_label["colors"][1]["rgba"], nlohmann::json({0, 255, 0, 128}));
  EXPECT_EQ(image_label["source"]["image"], "../../");

  pyramid::OmePlate plate;
  plate.rows = {"A", "B"};
  plate.columns = {"1", "2", "3"};
  plate.field_count = 2;
  ASSERT_TRUE(acq->CreatePlate("plate", plate).ok());
  ASSERT_TRUE(acq->CreateArray("plate/B/3/0", Camera()).ok());
  ASSERT_TRUE(acq->CreateArray("plate/A/1/0", Camera()).ok());
  ASSERT_TRUE(acq->CreateArray("plate/B/3/1", Camera()).ok());
  const nlohmann::json wells = Json("acq.zarr/plate/zarr.json")["attributes"]["ome"]["plate"]["wells"];
  ASSERT_EQ(wells.size(), 2u);
  EXPECT_EQ(wells[0]["path"], "A/1");
  EXPECT_EQ(wells[1]["path"], "B/3");
  EXPECT_EQ(Json("acq.zarr/plate/B/3/zarr.json")["attributes"]["ome"]["well"]["images"].size(), 2u);
  EXPECT_EQ(Json("acq.zarr/plate/B/zarr.json")["node_type"], "group");
  // A field is an OME image: its group and level 0.
  EXPECT_TRUE(Json("acq.zarr/plate/B/3/1/zarr.json")["attributes"]["ome"].contains("multiscales"));
  EXPECT_ERROR(acq->CreateArray("plate/C/1/0", Camera()).status(), ErrorKind::kInvalidArgument, "C");
  EXPECT_ERROR(acq->CreateArray("plate/A/1/0", Camera()).status(), ErrorKind::kAlreadyExists, "plate/A/1/0");
  EXPECT_ERROR(acq->CreateArray("plate/B/3/2", Camera()).status(), ErrorKind::kInvalidArgument);  // field_count 2
  EXPECT_ERROR(acq->CreateArray("img/x", Camera()).status(), ErrorKind::kInvalidArgument, "img");
  EXPECT_ERROR(acq->CreateArray("../x", Camera()).status(), ErrorKind::kInvalidArgument, "../x");
  acq->Abort();
}

TEST_F(AcquisitionTest, AttributesSetWhileStreamingArePublishedAtTheNextFlush) {
  auto acq = Acquisition::Create(Path("acq.zarr")).value();
  Stream* img = acq->CreateArray("img", CameraImage()).value();
  Stream* raw = acq->CreateArray("raw", Camera()).value();
  const auto a = Random(8 * 40 * 36, 3);
  ASSERT_TRUE(img->Append(View(a, 0, 8 * 40 * 36)).ok());
  ASSERT_TRUE(raw->Append(View(a, 0, 8 * 40 * 36)).ok());
  ASSERT_TRUE(acq->SetAttributes("", {{"instrument", "scope 1"}}).ok());
  ASSERT_TRUE(acq->SetAttributes("img", {{"omero", {{"channels", {{{"label", "GFP"}}}}}}}).ok());
  ASSERT_TRUE(acq->SetAttributes("raw", {{"exposure_ms", 12}}).ok());
  EXPECT_FALSE(Json("acq.zarr/zarr.json")["attributes"].contains("instrument"));  // not yet
  ASSERT_TRUE(acq->Flush().ok());
  EXPECT_EQ(Json("acq.zarr/zarr.json")["attributes"]["instrument"], "scope 1");
  const nlohmann::json img_attrs = Json("acq.zarr/img/zarr.json")["attributes"];
  EXPECT_EQ(img_attrs["ome"]["omero"]["channels"][0]["label"], "GFP");
  EXPECT_TRUE(img_attrs["ome"].contains("multiscales"));
  EXPECT_EQ(Json("acq.zarr/raw/zarr.json")["attributes"]["exposure_ms"], 12);
  EXPECT_EQ(Json("acq.zarr/raw/zarr.json")["shape"][0], 8);
  ASSERT_TRUE(acq->SetAttributes("raw", {{"exposure_ms", 15}}).ok());
  EXPECT_ERROR(acq->SetAttributes("nope", nlohmann::json::object()), ErrorKind::kNotFound, "nope", "raw");
  ASSERT_TRUE(acq->Close().ok());
  EXPECT_EQ(Json("acq.zarr/raw/zarr.json")["attributes"]["exposure_ms"], 15);
}

TEST_F(AcquisitionTest, TheMemoryLimitRefusesAnArrayPastItAndThePlanShowsTheSums) {
  AcquisitionOptions o;
  o.threads = 2;
  auto acq = Acquisition::Create(Path("acq.zarr"), o).value();
  ASSERT_TRUE(acq->CreateArray("a", Camera()).ok());
  const int64_t one = acq->planned_peak_bytes();
  ASSERT_GT(one, 0);
  acq->Abort();

  o.memory_limit = one + one / 2;
  acq = Acquisition::Create(Path("acq2.zarr"), o).value();
  ASSERT_TRUE(acq->CreateArray("a", Camera()).ok());
  EXPECT_ERROR(acq->CreateArray("b", Camera()).status(), ErrorKind::kOutOfResources, "memory_limit", "\"b\"");
  EXPECT_EQ(acq->keys(), std::vector<std::string>{"a"});
  const std::string plan = acq->DescribePlan();
  EXPECT_NE(plan.find("one pool of 2 compression threads"), std::string::npos) << plan;
  EXPECT_NE(plan.find("array \"a\""), std::string::npos) << plan;
  EXPECT_NE(plan.find("of the memory limit"), std::string::npos) << plan;
  ASSERT_TRUE(acq->Close().ok());
}

TEST_F(AcquisitionTest, ModesRefuseOrReplaceAnEarlierAcquisition) {
  {
    auto acq = Acquisition::Create(Path("acq.zarr")).value();
    ASSERT_TRUE(acq->CreateArray("cam", Camera()).ok());
    ASSERT_TRUE(acq->Close().ok());
  }
  EXPECT_ERROR(Acquisition::Create(Path("acq.zarr")).status(), ErrorKind::kAlreadyExists, "acq.zarr");
  AcquisitionOptions o;
  o.mode = Mode::kOverwrite;
  auto acq = Acquisition::Create(Path("acq.zarr"), o);
  ASSERT_TRUE(acq.ok()) << acq.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "acq.zarr/cam"));
  ASSERT_TRUE((*acq)->Close().ok());
  EXPECT_EQ(Json("acq.zarr/zarr.json")["node_type"], "group");
}

// An error or abort ends the acquisition; each array keeps the rows it published.
TEST_F(AcquisitionTest, AnAbortedAcquisitionKeepsWhatItPublished) {
  auto acq = Acquisition::Create(Path("acq.zarr")).value();
  Stream* a = acq->CreateArray("a", Camera()).value();
  Stream* b = acq->CreateArray("b", CameraImage()).value();
  const auto d = Random(16 * 40 * 36, 4);
  ASSERT_TRUE(a->Append(View(d, 0, 16 * 40 * 36)).ok());
  ASSERT_TRUE(b->Append(View(d, 0, 8 * 40 * 36)).ok());
  ASSERT_TRUE(acq->Flush().ok());
  ASSERT_TRUE(a->Append(View(d, 0, 3 * 40 * 36)).ok());
  acq->Abort();
  EXPECT_EQ(a->state(), StreamState::kAborted);
  EXPECT_ERROR(acq->Flush(), ErrorKind::kFailedPrecondition, "aborted");
  // An array whose own stream fails ends the acquisition at its next flush.
  auto acq2 = Acquisition::Create(Path("acq2.zarr")).value();
  Stream* c = acq2->CreateArray("c", Camera()).value();
  Stream* e = acq2->CreateArray("e", Camera()).value();
  c->Abort();
  EXPECT_ERROR(acq2->Flush(), ErrorKind::kFailedPrecondition, "\"c\"");
  EXPECT_EQ(e->state(), StreamState::kAborted);
  auto ra = OpenArray(Path("acq.zarr/a")).value();
  EXPECT_EQ(ra->shape()[0], 16);
  auto rb = OpenArray(Path("acq.zarr/b")).value();
  EXPECT_EQ(rb->shape()[0], 8);
}

// HDF5: the arrays are datasets of one file, written whole at Close.
TEST_F(AcquisitionTest, InHdf5TheArraysAreDatasetsOfOneFile) {
  AcquisitionOptions o;
  o.threads = 2;
  o.attributes = {{"instrument", "scope"}};
  auto acq = Acquisition::Create(Path("acq.h5"), o);
  ASSERT_TRUE(acq.ok()) << acq.status().ToString();
  ArraySpec cam = Uint16({0, 40, 36}, {4, 16, 16});
  Stream* a = (*acq)->CreateArray("cam1", cam).value();
  Stream* b = (*acq)->CreateArray("more/cam2", cam).value();
  const auto d = Random(9 * 40 * 36, 5);
  for (int64_t t = 0; t < 9; ++t) {
    ASSERT_TRUE(a->Append(View(d, t * 40 * 36, 40 * 36)).ok());
    ASSERT_TRUE(b->Append(View(d, (8 - t) * 40 * 36, 40 * 36)).ok());
  }
  ASSERT_TRUE((*acq)->SetAttributes("cam1", {{"exposure_ms", 10}}).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "acq.h5"));  // written whole at Close
  EXPECT_ERROR((*acq)->CreatePlate("plate", pyramid::OmePlate{}), ErrorKind::kUnsupported);
  ASSERT_TRUE((*acq)->Close().ok());
  for (const char* name : {"cam1", "more/cam2"}) {
    OpenOptions oo;
    oo.dataset = name;
    auto r = OpenArray(Path("acq.h5"), oo);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)->shape()[0], 9);
    std::vector<uint16_t> got(9 * 40 * 36);
    ASSERT_TRUE((*r)->Read((*r)->Select(":, :, :").value(), got.data()).ok());
    for (int64_t t = 0; t < 9; ++t) {
      const int64_t src = std::string(name) == "cam1" ? t : 8 - t;
      ASSERT_TRUE(std::equal(got.begin() + t * 1440, got.begin() + (t + 1) * 1440, d.begin() + src * 1440)) << name;
    }
  }
  EXPECT_ERROR(Acquisition::Create(Path("acq.h5")).status(), ErrorKind::kAlreadyExists, "acq.h5");
}

}  // namespace
}  // namespace tessera
