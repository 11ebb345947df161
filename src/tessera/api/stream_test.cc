// The façade's one lifecycle, on every format: streams written through CreateStream read back
// exactly through OpenArray; failures and aborts leave nothing that looks like an array.
#include "tessera/api/stream.h"

#include <filesystem>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "tessera/api/array.h"
#include "tessera/api/driver_registry.h"
#include "cpp_support/api_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

using api_test::Uint16;

namespace fs = std::filesystem;

class ApiStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera_api_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::vector<uint16_t> Ramp(int64_t n, uint32_t seed) {
  std::vector<uint16_t> v(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  for (auto& x : v) x = static_cast<uint16_t>(rng() % 4096);
  return v;
}

// Appends `data` in pieces of random byte counts (rows split across calls).
void AppendInPieces(Stream& s, const std::vector<uint16_t>& data, std::mt19937& rng) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const size_t total = data.size() * 2;
  size_t pos = 0;
  while (pos < total) {
    const size_t n = std::min(total - pos, size_t{1} + rng() % (total / 3 + 1));
    ASSERT_TRUE(s.Append(ByteView(bytes + pos, n)).ok());
    pos += n;
  }
}

// Reads `expr` and compares with the same selection computed from `data` (C order over `shape`).
void ExpectSelection(const Array& a, const std::vector<uint16_t>& data, const std::string& expr) {
  Result<Hyperslab> sel = a.Select(expr);
  ASSERT_TRUE(sel.ok()) << sel.status().ToString();
  std::vector<uint16_t> got(static_cast<size_t>(sel->NumElements()));
  ASSERT_TRUE(a.Read(*sel, got.data()).ok());
  const std::vector<int64_t>& shape = a.shape();
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> pos(rank, 0);
  for (int64_t i = 0; i < sel->NumElements(); ++i) {
    int64_t rem = i, flat = 0;
    std::vector<int64_t> idx(rank);
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = sel->dims[d].count;
      idx[d] = rem % c;
      rem /= c;
    }
    for (int d = 0; d < rank; ++d) flat = flat * shape[d] + sel->dims[d].start + idx[d] * sel->dims[d].step;
    ASSERT_EQ(got[i], data[flat]) << expr << " element " << i;
  }
}

struct Case {
  const char* name;
  Format format;
  ArraySpec spec;
  int64_t rows;  // rows streamed (the spec's shape[0] may be 0: unbounded)
};

TEST_F(ApiStreamTest, EveryFormatRoundTripsThroughOneLifecycle) {
  ArraySpec h5 = Uint16({0, 20, 30}, {4, 8, 16});
  h5.codec = Codec::kGzip;
  h5.hdf5.shuffle = true;
  h5.attributes = {{"units", "um"}, {"count", 3}, {"scale", {0.5, 1.0}}};
  ArraySpec pre_sharded = Uint16({33, 40, 50}, {8, 16, 16}, {2, 2, 2});
  pre_sharded.codec = Codec::kGzip;
  ArraySpec zarr_start = Uint16({0, 37, 41}, {3, 8, 8}, {2, 2, 3});
  zarr_start.zarr.index_at_start = true;
  zarr_start.dimension_names = {"t", "y", "x"};
  const Case cases[] = {
      {"zarr_sharded.zarr", Format::kZarr3, Uint16({25, 37, 41}, {4, 8, 16}, {2, 3, 1}), 25},
      {"zarr_unbounded", Format::kZarr3, zarr_start, 17},
      {"zarr_plain.zarr", Format::kZarr3, Uint16({7, 5, 3, 4, 2}, {2, 2, 2, 3, 1}), 7},
      {"pre_plain", Format::kPrecomputed, Uint16({33, 40, 50}, {8, 16, 16}), 33},
      {"pre_sharded", Format::kPrecomputed, pre_sharded, 33},
      {"h5file.h5", Format::kHdf5, h5, 13},
  };
  std::mt19937 rng(7);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StreamOptions o;
    o.format = c.format;
    o.threads = 2;
    Result<std::unique_ptr<Stream>> s = CreateStream(Path(c.name), c.spec, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    int64_t row_elements = 1;
    for (size_t d = 1; d < c.spec.shape.size(); ++d) row_elements *= c.spec.shape[d];
    EXPECT_EQ((*s)->row_bytes(), row_elements * 2);
    const std::vector<uint16_t> data = Ramp(c.rows * row_elements, static_cast<uint32_t>(rng()));
    AppendInPieces(**s, data, rng);
    EXPECT_EQ((*s)->state(), StreamState::kOpen);
    ASSERT_TRUE((*s)->Close().ok());
    EXPECT_EQ((*s)->state(), StreamState::kClosed);
    EXPECT_EQ((*s)->stats().bytes_in, static_cast<int64_t>(data.size() * 2));
    EXPECT_EQ((*s)->stats().rows_published, c.rows);
    EXPECT_ERROR((*s)->Append(ByteView()), ErrorKind::kFailedPrecondition, "Append", "the stream is closed");

    Result<std::unique_ptr<Array>> a = OpenArray(Path(c.name));
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ((*a)->format(), c.format);
    EXPECT_EQ((*a)->shape()[0], c.rows);
    EXPECT_EQ((*a)->dtype(), DataType::kUInt16);
    EXPECT_FALSE((*a)->metadata().is_null());
    ExpectSelection(**a, data, "");
    ExpectSelection(**a, data, "::-1, 1::3");
    ExpectSelection(**a, data, "-2:0:-2, ::-4");
  }
}

TEST_F(ApiStreamTest, FlushPublishesAndAppendingContinues) {
  StreamOptions o;
  o.threads = 2;
  auto s = CreateStream(Path("f.zarr"), Uint16({0, 16, 16}, {4, 8, 8}, {2, 1, 2}), o);
  ASSERT_TRUE(s.ok());
  const std::vector<uint16_t> data = Ramp(11 * 256, 3);
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  ASSERT_TRUE((*s)->Append(ByteView(bytes, 5 * 512)).ok());
  ASSERT_TRUE((*s)->Flush().ok());
  {
    auto a = OpenArray(Path("f.zarr"));
    ASSERT_TRUE(a.ok());
    EXPECT_EQ((*a)->shape()[0], 5);
  }
  ASSERT_TRUE((*s)->Append(ByteView(bytes + 5 * 512, 6 * 512)).ok());
  ASSERT_TRUE((*s)->Close().ok());
  auto a = OpenArray(Path("f.zarr"));
  ASSERT_TRUE(a.ok());
  ExpectSelection(**a, data, "");
}

// What a failed or aborted stream of `data` (C order, rows of `row_elements`) must have left at
// `path`: what it published and nothing else. Zarr: exactly the published rows; precomputed (a
// fixed shape): the published rows intact; HDF5 (written at Close): no file.
void ExpectPublishedRows(const std::string& path, Format format, const std::vector<uint16_t>& data,
                         int64_t row_elements, int64_t published_rows) {
  auto a = OpenArray(path);
  if (format == Format::kHdf5) {
    EXPECT_ERROR(a, ErrorKind::kNotFound, path);
    return;
  }
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  if (format == Format::kZarr3) EXPECT_EQ((*a)->shape()[0], published_rows);
  if (published_rows == 0) return;
  Hyperslab rows = Hyperslab::All((*a)->shape());
  rows.dims[0] = {0, 1, published_rows};
  std::vector<uint16_t> got(static_cast<size_t>(rows.NumElements()));
  ASSERT_TRUE((*a)->Read(rows, got.data()).ok());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin())) << path << ": the published rows differ";
  EXPECT_EQ(static_cast<int64_t>(got.size()), published_rows * row_elements);
}

TEST_F(ApiStreamTest, FailedOrAbortedStreamsKeepWhatWasPublished) {
  // A bounded stream that ends short fails at Close and keeps what it had published.
  for (Format f : {Format::kZarr3, Format::kPrecomputed, Format::kHdf5}) {
    SCOPED_TRACE(FormatName(f));
    const std::string path = Path(std::string("short_") + std::string(FormatName(f)));
    StreamOptions o;
    o.format = f;
    auto s = CreateStream(path, Uint16({12, 16, 16}, {4, 8, 8}), o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    const std::vector<uint16_t> data = Ramp(7 * 256, 1);
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
    // 5 rows, flushed (one complete chunk row and one partial), then 2 more; 12 declared.
    ASSERT_TRUE((*s)->Append(ByteView(bytes, 5 * 512)).ok());
    ASSERT_TRUE((*s)->Flush().ok());
    if (f != Format::kHdf5) EXPECT_EQ((*s)->stats().rows_published, 5);
    ASSERT_TRUE((*s)->Append(ByteView(bytes + 5 * 512, 2 * 512)).ok());
    // Close stores the whole rows it has, then finds the stream short.
    EXPECT_ERROR((*s)->Close(), ErrorKind::kInvalidArgument, "stream ended after 3584 bytes",
                 "the declared shape needs 6144");
    EXPECT_EQ((*s)->state(), StreamState::kAborted);
    const int64_t published = (*s)->stats().rows_published;
    if (f != Format::kHdf5) EXPECT_EQ(published, 7);
    ExpectPublishedRows(path, f, data, 256, published);
    EXPECT_ERROR((*s)->Flush(), ErrorKind::kFailedPrecondition, "Flush", "the stream was aborted");
  }
  // Abort, and destruction without Close, keep what was published: a valid (here empty) array.
  {
    auto s = CreateStream(Path("aborted.zarr"), Uint16({0, 16, 16}, {4, 8, 8}));
    ASSERT_TRUE(s.ok());
    std::vector<uint16_t> data = Ramp(10 * 256, 2);
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
    ASSERT_TRUE((*s)->Append(ByteView(bytes, 6 * 512)).ok());
    ASSERT_TRUE((*s)->Flush().ok());
    // Not flushed: rows 6 and 7 complete a chunk row (published when stored), rows 8 and 9 do not.
    ASSERT_TRUE((*s)->Append(ByteView(bytes + 6 * 512, 4 * 512)).ok());
    (*s)->Abort();
    const int64_t published = (*s)->stats().rows_published;
    EXPECT_TRUE(published == 6 || published == 8) << published;
    ExpectPublishedRows(Path("aborted.zarr"), Format::kZarr3, data, 256, published);
  }
  {
    auto s = CreateStream(Path("dropped.zarr"), Uint16({0, 16, 16}, {4, 8, 8}));
    ASSERT_TRUE(s.ok());
  }
  ExpectPublishedRows(Path("dropped.zarr"), Format::kZarr3, {}, 256, 0);
  {
    auto s = CreateStream(Path("dropped.h5"), Uint16({0, 16, 16}, {4, 8, 8}));
    ASSERT_TRUE(s.ok());
  }
  EXPECT_FALSE(fs::exists(Path("dropped.h5")));
}

TEST_F(ApiStreamTest, OptionsAFormatCannotHonourAreRefusedBeforeAnythingIsWritten) {
  ArraySpec s = Uint16({16, 16, 16}, {8, 8, 8});
  s.level = 3;
  s.codec = Codec::kGzip;
  s.shard_chunks = {2, 2, 2};
  StreamOptions o;
  o.format = Format::kPrecomputed;
  auto r = CreateStream(Path("p"), s, o);
  EXPECT_ERROR(r, ErrorKind::kUnsupported, "level: precomputed");
  EXPECT_EQ(SpecFieldOfError(r.status()), "level");
  EXPECT_FALSE(fs::exists(Path("p")));
  o.format = Format::kHdf5;
  o.discard = true;
  r = CreateStream(Path("x.h5"), Uint16({0, 16, 16}, {4, 8, 8}), o);
  EXPECT_ERROR(r, ErrorKind::kUnsupported, "discard: hdf5");
  EXPECT_FALSE(fs::exists(Path("x.h5")));
  // Refused after the directory was made (here: the CUDA backend, absent or without a device).
  StreamOptions cuda;
  cuda.backend = stream::Backend::kCuda;
  r = CreateStream(Path("gpu.zarr"), Uint16({0, 16, 16}, {4, 8, 8}), cuda);
  if (!r.ok()) {
    EXPECT_ERROR(r, ErrorKind::kUnsupported, "backend: cuda");
    EXPECT_FALSE(fs::exists(Path("gpu.zarr")));
  }
}

TEST_F(ApiStreamTest, PlanTouchesNoStorage) {
  Result<std::string> plan = PlanStream(Path("planned.zarr"), Uint16({64, 64, 64}, {16, 16, 16}, {2, 2, 2}));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_NE(plan->find("planned peak"), std::string::npos) << *plan;
  EXPECT_FALSE(fs::exists(Path("planned.zarr")));
}

TEST_F(ApiStreamTest, ReadsCheckTheSelectionAndManyThreadsShareOneArray) {
  ASSERT_TRUE(fs::exists(dir_));
  auto s = CreateStream(Path("shared.zarr"), Uint16({40, 40, 40}, {8, 8, 8}, {2, 2, 2}));
  ASSERT_TRUE(s.ok());
  const std::vector<uint16_t> data = Ramp(40 * 40 * 40, 5);
  ASSERT_TRUE((*s)->Append(ByteView(reinterpret_cast<const uint8_t*>(data.data()), data.size() * 2)).ok());
  ASSERT_TRUE((*s)->Close().ok());
  auto a = OpenArray(Path("shared.zarr"));
  ASSERT_TRUE(a.ok());
  Hyperslab bad = Hyperslab::All((*a)->shape());
  bad.dims[1].start = 39;
  bad.dims[1].count = 2;
  uint16_t out[2 * 40 * 40];
  EXPECT_ERROR((*a)->Read(bad, out), ErrorKind::kOutOfRange, "dimension 1", "(start 39, step 1, count 2)",
               "leaves [0, 40)");
  Hyperslab wraps = Hyperslab::All((*a)->shape());  // start + (count - 1) * step overflows to 0
  wraps.dims[0] = {0, int64_t{1} << 62, 5};
  EXPECT_ERROR((*a)->Read(wraps, out), ErrorKind::kOutOfRange, "dimension 0", "count 5", "leaves [0, 40)");
  wraps.dims[0] = {5, INT64_MIN, 1};
  EXPECT_ERROR((*a)->Read(wraps, out), ErrorKind::kInvalidArgument, "dimension 0 is malformed");
  wraps.dims[0] = {39, -(int64_t{1} << 62), 3};
  EXPECT_ERROR((*a)->Read(wraps, out), ErrorKind::kOutOfRange, "dimension 0", "count 3", "leaves [0, 40)");
  bad.dims.pop_back();
  EXPECT_ERROR((*a)->Read(bad, out), ErrorKind::kInvalidArgument, "selection has 2 dimensions for a rank-3 array");
  EXPECT_ERROR(OpenArray(Path("shared.zarr"), {.dataset = "/x"}), ErrorKind::kInvalidArgument,
               "dataset: applies to HDF5 files only", Path("shared.zarr"));

  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&, t] {
      for (int k = 0; k < 5; ++k) ExpectSelection(**a, data, std::to_string(t) + "::3, ::-" + std::to_string(k + 1));
    });
  for (auto& r : readers) r.join();
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// A pyramid fed in byte pieces (rows split across calls): each level equals the downsampling of
// the level above, computed here with a RowDownsampler of its own on whole rows.
TEST_F(ApiStreamTest, PyramidLevelsFromRowsSplitAcrossAppends) {
  const std::vector<int64_t> shape = {9, 13, 10};
  const std::vector<uint16_t> data = Ramp(9 * 13 * 10, 5);
  ArraySpec spec;
  spec.dtype = DataType::kUInt16;
  spec.shape = {0, 13, 10};
  spec.chunk_shape = {2, 4, 4};
  spec.pyramid.levels = 3;
  spec.pyramid.method = pyramid::DownsampleMethod::kMean;
  auto s = CreateStream(Path("p.zarr"), spec);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::mt19937 rng(3);
  AppendInPieces(**s, data, rng);
  ASSERT_TRUE((*s)->Close().ok());
  std::vector<uint16_t> level = data;
  std::vector<int64_t> level_shape = shape;
  for (int k = 0; k < 3; ++k) {
    OpenOptions o;
    o.level = k;
    auto a = OpenArray(Path("p.zarr"), o);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ((*a)->shape(), level_shape);
    EXPECT_EQ((*a)->level_count(), 3);
    ExpectSelection(**a, level, "");
    ExpectSelection(**a, level, "::-1, 1::2");
    // The next level: whole rows through a downsampler.
    const std::vector<int64_t> factors = {2, 2, 2};
    auto d = pyramid::RowDownsampler::Create(DataType::kUInt16, pyramid::DownsampleMethod::kMean, level_shape, factors);
    ASSERT_TRUE(d.ok());
    std::vector<uint16_t> next, row(static_cast<size_t>((*d)->output_row_bytes() / 2));
    auto* out = reinterpret_cast<uint8_t*>(row.data());
    for (int64_t r = 0; r < level_shape[0]; ++r)
      if ((*d)->AddRow(reinterpret_cast<const uint8_t*>(level.data()) + r * (*d)->input_row_bytes(), out))
        next.insert(next.end(), row.begin(), row.end());
    if ((*d)->ReducePending(out)) next.insert(next.end(), row.begin(), row.end());
    level = next;
    level_shape = pyramid::DownsampledShape(level_shape, factors);
  }
  // The OME-Zarr group names the levels.
  EXPECT_TRUE(fs::exists(dir_ / "p.zarr" / "zarr.json"));
  EXPECT_TRUE(fs::exists(dir_ / "p.zarr" / "2" / "zarr.json"));
}

TEST_F(ApiStreamTest, AbortedPyramidKeepsItsImageAndPublishedRows) {
  ArraySpec spec;
  spec.dtype = DataType::kUInt8;
  spec.shape = {0, 8, 8};
  spec.chunk_shape = {1, 4, 4};
  spec.pyramid.levels = 2;
  auto s = CreateStream(Path("a.zarr"), spec);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<uint8_t> frames(64 * 3);
  for (size_t i = 0; i < frames.size(); ++i) frames[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE((*s)->Append(ByteView(frames.data(), 64 * 2)).ok());
  ASSERT_TRUE((*s)->Flush().ok());
  ASSERT_TRUE((*s)->Append(ByteView(frames.data() + 128, 64)).ok());
  (*s)->Abort();
  // The image stays valid: its group and both levels, with the rows published (2 at the flush;
  // the third row is a whole chunk row, published once stored, which may be before the Abort).
  const int64_t published = (*s)->stats().rows_published;
  ASSERT_TRUE(published == 2 || published == 3) << published;
  auto a = OpenArray(Path("a.zarr"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->level_count(), 2);
  EXPECT_EQ((*a)->shape(), (std::vector<int64_t>{published, 8, 8}));
  std::vector<uint8_t> got(static_cast<size_t>(published * 64));
  ASSERT_TRUE((*a)->Read(Hyperslab::All((*a)->shape()), got.data()).ok());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), frames.begin()));
  OpenOptions level1;
  level1.level = 1;
  auto b = OpenArray(Path("a.zarr"), level1);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->shape(), (std::vector<int64_t>{1, 4, 4}));
}

}  // namespace
}  // namespace tessera
