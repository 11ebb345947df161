// Writing one array region by region (as Dask tasks do) gives the same files, byte for byte, as one
// stream of the whole array: every level of a pyramid, Zarr v3 and precomputed, edge regions
// included; regions in any order, written twice; misaligned regions refused.
#include "tessera/api/shared_write.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "tessera/api/array.h"
#include "cpp_support/api_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using api_test::Files;

// The C-order box [origin, origin + shape) of `data` (C order over `full`), 2-byte elements.
std::vector<uint16_t> Box(const std::vector<uint16_t>& data, const std::vector<int64_t>& full,
                          const std::vector<int64_t>& origin, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t v : shape) n *= v;
  std::vector<uint16_t> out(static_cast<size_t>(n));
  const size_t rank = full.size();
  std::vector<int64_t> at(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src = src * full[d] + origin[d] + at[d];
    out[static_cast<size_t>(i)] = data[static_cast<size_t>(src)];
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < shape[d]) break;
      at[d] = 0;
    }
  }
  return out;
}

ByteView Bytes16(const std::vector<uint16_t>& v) { return ByteView(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 2); }

struct Case {
  const char* name;
  Format format;
  std::vector<int64_t> shape, chunk, shard_chunks;
  int levels;
  Codec codec;
  std::vector<int64_t> region_shards;  // level-0 regions: this many shards per dimension
};

class SharedWriteTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_shared_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                                        GetParam().name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void WriteRegionsAndCompare(bool as_job);
  fs::path dir_;
};

// Writes the case's array as regions (CreateSharedArray ... FinishSharedArray, or `as_job`: a job
// published last) and compares every file with a stream's.
void SharedWriteTest::WriteRegionsAndCompare(bool as_job) {
  const Case& c = GetParam();
  ArraySpec spec;
  spec.dtype = DataType::kUInt16;
  spec.shape = c.shape;
  spec.chunk_shape = c.chunk;
  spec.shard_chunks = c.shard_chunks;
  spec.codec = c.codec;
  spec.pyramid.levels = c.levels;
  if (c.format == Format::kZarr3) spec.ome.name = "image";  // else each image is named after its directory
  StreamOptions options;
  options.format = c.format;
  options.threads = 2;
  int64_t n = 1;
  for (int64_t v : c.shape) n *= v;
  std::vector<uint16_t> data(static_cast<size_t>(n));
  std::mt19937 rng(7);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint16_t>((i / 3) % 1000 + rng() % 50);

  const std::string streamed = (dir_ / "streamed").string(), shared = (dir_ / "shared").string();
  {
    auto s = CreateStream(streamed, spec, options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->Append(Bytes16(data)).ok());
    ASSERT_TRUE((*s)->Close().ok());
  }

  const std::string token = as_job ? "job-1" : "";
  Result<ArraySpec> resolved = as_job ? PrepareSharedJob(shared, spec, options, token) : CreateSharedArray(shared, spec, options);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  auto shard = LevelShardShape(*resolved, c.format, 0);
  ASSERT_TRUE(shard.ok());
  // Level-0 regions of region_shards shards, written last to first, the first one twice.
  std::vector<Region> regions;
  std::vector<int64_t> block(c.shape.size()), count(c.shape.size());
  for (size_t d = 0; d < c.shape.size(); ++d) {
    block[d] = (*shard)[d] * c.region_shards[d];
    count[d] = (c.shape[d] + block[d] - 1) / block[d];
  }
  std::vector<int64_t> at(c.shape.size(), 0);
  for (bool more = true; more;) {
    Region r;
    for (size_t d = 0; d < c.shape.size(); ++d) {
      r.origin.push_back(at[d] * block[d]);
      r.shape.push_back(std::min(block[d], c.shape[d] - at[d] * block[d]));
    }
    regions.push_back(r);
    size_t d = c.shape.size();
    while (d > 0 && ++at[d - 1] == count[d - 1]) at[--d] = 0;
    more = d > 0;
  }
  regions.push_back(regions.front());
  std::reverse(regions.begin(), regions.end());
  int complete = resolved->level_count() - 1;
  for (const Region& r : regions) {
    Result<int> last = WriteRegion(shared, spec, options, r, Bytes16(Box(data, c.shape, r.origin, r.shape)),
                                   /*write_own_level=*/true, token);
    ASSERT_TRUE(last.ok()) << last.status().ToString();
    complete = std::min(complete, *last);
  }
  // The levels no level-0 region covered: waves over the last complete level, read back.
  while (complete + 1 < resolved->level_count()) {
    // The OME-Zarr group is written last (FinishSharedArray): a Zarr level is read as its own array.
    // A job's levels have no metadata yet: read back by their spec.
    auto back = LevelReadBack(shared, *resolved, c.format, complete);
    ASSERT_TRUE(back.ok());
    OpenOptions open;
    open.format = c.format;
    open.level = back->open_level;
    auto level = as_job ? OpenUnpublishedLevel(shared, spec, options, complete) : OpenArray(back->location, open);
    ASSERT_TRUE(level.ok()) << level.status().ToString();
    auto wave = RegionsFor(*resolved, c.format, complete);
    ASSERT_TRUE(wave.ok());
    int next = resolved->level_count() - 1;
    for (const Region& r : *wave) {
      Hyperslab sel = Hyperslab::All((*level)->shape());
      for (size_t d = 0; d < r.origin.size(); ++d) sel.dims[d] = {r.origin[d], 1, r.shape[d]};
      std::vector<uint16_t> part(static_cast<size_t>(sel.NumElements()));
      ASSERT_TRUE((*level)->Read(sel, part.data()).ok());
      Result<int> last = WriteRegion(shared, spec, options, r, Bytes16(part), /*write_own_level=*/false, token);
      ASSERT_TRUE(last.ok()) << last.status().ToString();
      next = std::min(next, *last);
    }
    ASSERT_GT(next, complete);
    complete = next;
  }
  if (as_job) {
    // Nothing but shards and the marker until the job is published.
    for (const auto& [name, bytes] : Files(shared))
      ASSERT_TRUE(name.find("zarr.json") == std::string::npos && name != "info") << name << " before publishing";
    ASSERT_TRUE(Files(shared).count(".tessera-job"));
    ASSERT_TRUE(PublishSharedJob(shared, spec, options, token).ok());
  } else {
    ASSERT_TRUE(FinishSharedArray(shared, spec, options).ok());
  }

  const auto a = Files(streamed), b = Files(shared);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, bytes] : a) {
    ASSERT_TRUE(b.count(name)) << name << " missing from the region-written array";
    EXPECT_TRUE(b.at(name) == bytes) << name << " differs";
  }
}

TEST_P(SharedWriteTest, RegionsGiveTheStreamsBytes) { WriteRegionsAndCompare(/*as_job=*/false); }

TEST_P(SharedWriteTest, AJobPublishedLastGivesTheStreamsBytes) { WriteRegionsAndCompare(/*as_job=*/true); }

INSTANTIATE_TEST_SUITE_P(
    Formats, SharedWriteTest,
    ::testing::Values(
        Case{"ZarrShardedPyramid", Format::kZarr3, {45, 70, 33}, {4, 8, 8}, {2, 2, 2}, 3, Codec::kZstd, {1, 2, 1}},
        Case{"ZarrUnshardedPyramid", Format::kZarr3, {20, 37, 50}, {3, 5, 7}, {}, 4, Codec::kGzip, {2, 1, 3}},
        Case{"ZarrPlain", Format::kZarr3, {9, 11}, {4, 3}, {1, 2}, 1, Codec::kBloscLz4, {1, 1}},
        Case{"ZarrRank5", Format::kZarr3, {5, 3, 6, 7, 4}, {2, 2, 3, 4, 2}, {2, 1, 1, 1, 2}, 2, Codec::kNone, {1, 2, 1, 1, 1}},
        Case{"PrecomputedSharded", Format::kPrecomputed, {40, 48, 56}, {8, 8, 8}, {2, 2, 2}, 3, Codec::kGzip, {1, 1, 2}},
        Case{"PrecomputedUnsharded", Format::kPrecomputed, {2, 19, 30, 26}, {2, 4, 8, 8}, {}, 2, Codec::kNone, {1, 2, 1, 1}}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(SharedWriteErrors, MisalignedRegionsAndHdf5AreRefused) {
  const fs::path dir = fs::temp_directory_path() / ("tessera_shared_err_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ArraySpec spec;
  spec.dtype = DataType::kUInt8;
  spec.shape = {10, 10};
  spec.chunk_shape = {2, 2};
  spec.shard_chunks = {2, 2};
  const std::string where = (dir / "a.zarr").string();
  ASSERT_TRUE(CreateSharedArray(where, spec, {}).ok());
  std::vector<uint8_t> bytes(4 * 4);
  Region r{0, {2, 0}, {4, 4}};
  Status st = WriteRegion(where, spec, {}, r, ByteView(bytes.data(), bytes.size())).status();
  EXPECT_ERROR(st, ErrorKind::kInvalidArgument, "region: origin 2,0", "not shard-aligned in dimension 0");
  r.origin = {0, 0};
  st = WriteRegion(where, spec, {}, r, ByteView(bytes.data(), 3)).status();
  EXPECT_ERROR(st, ErrorKind::kInvalidArgument, "region: 3 bytes for shape 4,4");
  r.origin = {8, 8};
  st = WriteRegion(where, spec, {}, r, ByteView(bytes.data(), bytes.size())).status();
  EXPECT_ERROR(st, ErrorKind::kOutOfRange, "region: origin 8,8 shape 4,4", "leaves level 0");
  StreamOptions h5;
  h5.format = Format::kHdf5;
  // Refused for being HDF5, not for anything else of the spec (HDF5 takes no shard_chunks either).
  ArraySpec unsharded = spec;
  unsharded.shard_chunks.clear();
  EXPECT_ERROR(CreateSharedArray((dir / "a.h5").string(), unsharded, h5), ErrorKind::kUnsupported,
               "format: an HDF5 dataset", "many processes");
  EXPECT_FALSE(fs::exists(dir / "a.h5"));
  ASSERT_TRUE(AbandonSharedArray(where, spec, {}).ok());
  EXPECT_FALSE(fs::exists(dir / "a.zarr" / "zarr.json"));
  fs::remove_all(dir);
}

TEST(SharedJob, ACancelledJobStopsWritingAndCleanupRemovesItsLeftovers) {
  const fs::path dir = fs::temp_directory_path() / ("tessera_shared_job_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ArraySpec spec;
  spec.dtype = DataType::kUInt8;
  spec.shape = {8, 8};
  spec.chunk_shape = {2, 2};
  spec.shard_chunks = {2, 2};
  const std::string where = (dir / "a.zarr").string();
  ASSERT_TRUE(PrepareSharedJob(where, spec, {}, "mine").ok());
  EXPECT_TRUE(fs::exists(dir / "a.zarr" / ".tessera-job"));
  EXPECT_FALSE(fs::exists(dir / "a.zarr" / "zarr.json"));
  // Another job is refused while the marker is there (w-).
  EXPECT_ERROR(PrepareSharedJob(where, spec, {}, "other").status(), ErrorKind::kAlreadyExists, "a job is writing there");
  std::vector<uint8_t> bytes(4 * 4, 7);
  Region r{0, {0, 0}, {4, 4}};
  ASSERT_TRUE(WriteRegion(where, spec, {}, r, ByteView(bytes.data(), bytes.size()), true, "mine").ok());
  EXPECT_ERROR(WriteRegion(where, spec, {}, r, ByteView(bytes.data(), bytes.size()), true, "other").status(),
               ErrorKind::kFailedPrecondition, "job cancelled", ".tessera-job belongs to another job");
  EXPECT_ERROR(PublishSharedJob(where, spec, {}, "other"), ErrorKind::kFailedPrecondition, "job cancelled");
  EXPECT_FALSE(fs::exists(dir / "a.zarr" / "zarr.json"));
  // Another job's give-up leaves this job's marker; this job's removes it, a task's next shard is
  // refused, nothing opens.
  ASSERT_TRUE(AbandonSharedArray(where, spec, {}, "other").ok());
  EXPECT_TRUE(fs::exists(dir / "a.zarr" / ".tessera-job"));
  ASSERT_TRUE(AbandonSharedArray(where, spec, {}, "mine").ok());
  EXPECT_FALSE(fs::exists(dir / "a.zarr" / ".tessera-job"));
  r.origin = {4, 4};
  EXPECT_ERROR(WriteRegion(where, spec, {}, r, ByteView(bytes.data(), bytes.size()), true, "mine").status(),
               ErrorKind::kFailedPrecondition, "not shared with the client");
  EXPECT_FALSE(fs::exists(dir / "a.zarr" / "c" / "1" / "1"));
  EXPECT_FALSE(OpenArray(where).ok());
  // The leftover shard goes with cleanup; a published array stays.
  EXPECT_TRUE(fs::exists(dir / "a.zarr" / "c" / "0" / "0"));
  ASSERT_TRUE(CleanupSharedLocation(where, {}).ok());
  EXPECT_FALSE(fs::exists(dir / "a.zarr"));
  ASSERT_TRUE(CreateSharedArray(where, spec, {}).ok());
  EXPECT_ERROR(CleanupSharedLocation(where, {}), ErrorKind::kFailedPrecondition, "published array");
  EXPECT_TRUE(fs::exists(dir / "a.zarr" / "zarr.json"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera
