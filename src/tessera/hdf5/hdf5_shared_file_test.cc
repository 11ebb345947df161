#include "tessera/hdf5/hdf5_shared_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>

#include "cpp_support/status_matchers.h"
#include "cpp_support/store_helpers.h"
#include "tessera/core/worker_pool.h"
#include "tessera/hdf5/h5_raw_file.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/hdf5/hdf5_driver.h"
#include "tessera/read/selection_read.h"
#include "tessera/store/file_store.h"

// A call that must succeed, its error shown when it does not.
#define ASSERT_OK(expr)                                  \
  do {                                                   \
    const ::tessera::Status status_ = (expr);            \
    ASSERT_TRUE(status_.ok()) << status_.ToString();     \
  } while (0)

namespace tessera::hdf5 {
namespace {

// A fresh, empty directory of this test's own.
std::string OwnDir(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tessera_h5shared_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Bytes ReadFileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

Location FileLocation(const std::string& path) {
  Location l;
  l.path = path;
  return l;
}

// One dataset of an acquisition: where, its spec (resolved by the HDF5 driver), the rows streamed
// and their bytes.
struct DatasetCase {
  std::string path;
  ArraySpec spec;
  int64_t rows = 0;
  Bytes data;
  int64_t row_bytes() const {
    int64_t n = static_cast<int64_t>(ItemSize(spec.dtype));
    for (size_t d = 1; d < spec.shape.size(); ++d) n *= spec.shape[d];
    return n;
  }
};

// Values that deflate compresses somewhat (a ramp with noise), with the rows in `zero_rows` all
// zero, so their chunks are all fill value and absent from the file.
Bytes Pattern(int64_t bytes, uint32_t seed, int64_t row_bytes, std::vector<int64_t> zero_rows = {}) {
  Bytes out(static_cast<size_t>(bytes));
  uint32_t x = seed;
  for (size_t i = 0; i < out.size(); ++i) {
    x = x * 1664525u + 1013904223u;
    out[i] = static_cast<uint8_t>((i / 7) + ((x >> 24) & 3));
  }
  for (int64_t r : zero_rows) std::memset(out.data() + r * row_bytes, 0, static_cast<size_t>(row_bytes));
  return out;
}

DatasetCase MakeCase(std::string path, DataType dtype, std::vector<int64_t> shape, std::vector<int64_t> chunks,
                     int64_t rows, uint32_t seed, std::vector<int64_t> zero_rows = {}) {
  DatasetCase c;
  c.path = std::move(path);
  c.spec.dtype = dtype;
  c.spec.shape = std::move(shape);
  c.spec.chunk_shape = std::move(chunks);
  c.rows = rows;
  c.data = Pattern(rows * c.row_bytes(), seed, c.row_bytes(), std::move(zero_rows));
  return c;
}

// cam1: uint16, unbounded, gzip 3 after shuffle, edge chunks in every dimension.
// cam2: float32 bits, bounded, fletcher32, no compression.
// field: int8 in a plate's well, unbounded, rank 4, gzip 1, dataset attributes, one row all zero.
// `scale` multiplies the rows of each.
std::vector<DatasetCase> Cases(size_t count, int64_t scale = 1) {
  std::vector<DatasetCase> cases;
  cases.push_back(MakeCase("/cam1", DataType::kUInt16, {0, 24, 40}, {4, 16, 16}, 11 * scale, 1));
  cases.back().spec.codec = Codec::kGzip;
  cases.back().spec.level = 3;
  cases.back().spec.hdf5.shuffle = true;
  cases.back().spec.attributes = {{"old", 1}};
  cases.push_back(MakeCase("/cam2", DataType::kFloat32, {7 * scale, 30}, {2, 8}, 7 * scale, 2));
  cases.back().spec.hdf5.fletcher32 = true;
  cases.push_back(MakeCase("/plate/A/1/0", DataType::kInt8, {0, 5, 6, 7}, {1, 5, 3, 7}, 9 * scale, 3, {3}));
  cases.back().spec.codec = Codec::kGzip;
  cases.back().spec.level = 1;
  cases.back().spec.attributes = {{"exposure_ms", 12.5}, {"channel", "GFP"}, {"binning", {2, 2}}};
  cases.resize(count);
  for (DatasetCase& c : cases) {
    const Status st = Hdf5Driver().ResolveSpec(&c.spec);
    EXPECT_TRUE(st.ok()) << c.path << ": " << st.ToString();
  }
  return cases;
}

struct RunOptions {
  int threads = 2;
  std::shared_ptr<WorkerPool> pool;  // set: every dataset's writer runs on it (an acquisition's pool)
  bool flush_midway = false;
  bool groups_and_attributes = false;
  // Called after every writer closed, before the file's Close.
  std::function<void()> before_close;
};

// Appends each case's data to its writer, the datasets' appends interleaved, in pieces that split
// rows (and elements), as one producer thread delivering several cameras would; every writer
// flushed after step 2 when `flush_midway`; `after_step` called after each step.
Status AppendInterleaved(const std::vector<stream::StreamWriter*>& writers, const std::vector<DatasetCase>& cases,
                         bool flush_midway, const std::function<Status(int step)>& after_step = {}) {
  std::vector<int64_t> done(cases.size(), 0);
  for (int step = 0;; ++step) {
    bool any = false;
    for (size_t i = 0; i < cases.size(); ++i) {
      const DatasetCase& c = cases[i];
      const int64_t left = static_cast<int64_t>(c.data.size()) - done[i];
      if (left == 0) continue;
      any = true;
      // 1.5 rows plus an odd byte count, different per dataset and step.
      const int64_t piece = std::min(left, c.row_bytes() * 3 / 2 + 3 * static_cast<int64_t>(i) + step % 5);
      TESSERA_RETURN_IF_ERROR(writers[i]->Append(ByteView(c.data.data() + done[i], static_cast<size_t>(piece))));
      done[i] += piece;
    }
    if (!any) return Status::Ok();
    if (step == 2 && flush_midway)
      for (stream::StreamWriter* w : writers) TESSERA_RETURN_IF_ERROR(w->Flush());
    if (after_step) TESSERA_RETURN_IF_ERROR(after_step(step));
  }
}

// Streams `cases` into one file at `location` (AppendInterleaved).
Status WriteAcquisition(const Location& location, const std::vector<DatasetCase>& cases, const RunOptions& run) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<SharedHdf5File> file, SharedHdf5File::Create(location, false));
  driver::WriterSettings settings;
  settings.threads = run.threads;
  settings.pool = run.pool;
  std::vector<driver::FormatWriter> writers;
  for (const DatasetCase& c : cases) {
    TESSERA_ASSIGN_OR_RETURN(driver::FormatWriter w, file->OpenDataset(c.spec, c.path, settings));
    writers.push_back(std::move(w));
  }
  if (run.groups_and_attributes) {
    // Groups made on the way to a dataset take attributes; the root and a dataset's replaced.
    TESSERA_RETURN_IF_ERROR(file->SetAttributes("/plate", {{"name", "plate 1"}, {"columns", 3}, {"rows", 2}}));
    TESSERA_RETURN_IF_ERROR(file->SetAttributes("/plate/A", {{"row", "A"}}));
    TESSERA_RETURN_IF_ERROR(file->SetAttributes("", {{"instrument", "scope 2"}, {"version", 1}}));
  }
  std::vector<stream::StreamWriter*> streams;
  for (driver::FormatWriter& w : writers) streams.push_back(w.writer);
  TESSERA_RETURN_IF_ERROR(AppendInterleaved(streams, cases, run.flush_midway, [&](int step) -> Status {
    if (step == 3 && run.groups_and_attributes) return file->SetAttributes("/cam1", {{"frames", 11}});
    return Status::Ok();
  }));
  for (driver::FormatWriter& w : writers) {
    TESSERA_RETURN_IF_ERROR(w.writer->Close());
    TESSERA_RETURN_IF_ERROR(w.finish());
  }
  if (run.before_close) run.before_close();
  return file->Close();
}

Status WriteAcquisition(const std::string& path, const std::vector<DatasetCase>& cases, const RunOptions& run) {
  return WriteAcquisition(FileLocation(path), cases, run);
}

// Every dataset reads back exactly, with its shape (an unbounded one: the rows streamed) and
// filters.
void ExpectReadsBack(Result<std::shared_ptr<Hdf5File>> file, const std::vector<DatasetCase>& cases) {
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  std::vector<std::string> expected_names;
  for (const DatasetCase& c : cases) expected_names.push_back(c.path);
  std::sort(expected_names.begin(), expected_names.end());
  EXPECT_EQ(*(*file)->ListDatasets(), expected_names);
  for (const DatasetCase& c : cases) {
    SCOPED_TRACE(c.path);
    auto ds = (*file)->OpenDataset(c.path);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    std::vector<int64_t> shape = c.spec.shape;
    shape[0] = c.rows;
    EXPECT_EQ((*ds)->shape(), shape);
    EXPECT_EQ((*ds)->read_chunk_shape(), c.spec.chunk_shape);
    EXPECT_EQ((*ds)->dtype(), c.spec.dtype);
    size_t filters = (c.spec.hdf5.shuffle ? 1 : 0) + (*c.spec.codec == Codec::kGzip ? 1 : 0) +
                     (c.spec.hdf5.fletcher32 ? 1 : 0);
    EXPECT_EQ((*ds)->filters().size(), filters);
    Bytes out(c.data.size());
    ASSERT_TRUE(ReadHyperslab(**ds, Hyperslab::All(shape), out.data()).ok());
    EXPECT_TRUE(out == c.data);
  }
}

void ExpectReadsBack(const std::string& path, const std::vector<DatasetCase>& cases) {
  ExpectReadsBack(Hdf5File::Open(path), cases);
}

TEST(SharedHdf5File, TwoDatasetsStreamedInterleavedReadBack) {
  const std::string dir = OwnDir("two");
  const std::string path = dir + "/acq.h5";
  const std::vector<DatasetCase> cases = Cases(2);
  ASSERT_OK(WriteAcquisition(path, cases, {}));
  ExpectReadsBack(path, cases);
  EXPECT_EQ(Entries(dir), std::vector<std::string>{"acq.h5"});  // no temporary or spill left
}

TEST(SharedHdf5File, ThreeDatasetsInGroupsWithAttributes) {
  const std::string dir = OwnDir("three");
  const std::string path = dir + "/acq.h5";
  const std::vector<DatasetCase> cases = Cases(3);
  ASSERT_OK(WriteAcquisition(path, cases, {.threads = 3, .groups_and_attributes = true}));
  ExpectReadsBack(path, cases);
  auto file = Hdf5File::Open(path);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(*(*file)->Attributes("/"), (nlohmann::json{{"instrument", "scope 2"}, {"version", 1}}));
  EXPECT_EQ(*(*file)->Attributes("/plate"), (nlohmann::json{{"name", "plate 1"}, {"columns", 3}, {"rows", 2}}));
  EXPECT_EQ(*(*file)->Attributes("plate/A"), (nlohmann::json{{"row", "A"}}));
  EXPECT_EQ(*(*file)->Attributes("/plate/A/1"), nlohmann::json::object());
  // Replaced mid-stream: the spec's {"old": 1} is gone.
  EXPECT_EQ(*(*file)->Attributes("/cam1"), (nlohmann::json{{"frames", 11}}));
  EXPECT_EQ(*(*file)->Attributes("/plate/A/1/0"),
            (nlohmann::json{{"binning", {2, 2}}, {"channel", "GFP"}, {"exposure_ms", 12.5}}));
  EXPECT_ERROR((*file)->Attributes("/plate/B"), ErrorKind::kNotFound, "no group or dataset \"/plate/B\"");
}

// The same appends give the same file however the writers' threads interleave: run with 1, 3 and
// 8 threads per writer (twice each for 3 and 8) and on one shared pool of 4 and of 1 threads,
// flushing midway, and compare the bytes. Long enough (dozens of chunk rows per dataset) that the
// datasets' chunks would interleave by timing were they laid out in one address space.
TEST(SharedHdf5File, SameBytesWhateverTheThreads) {
  const std::string dir = OwnDir("determinism");
  const std::vector<DatasetCase> cases = Cases(3, 20);
  Bytes first;
  std::vector<RunOptions> runs;
  for (int threads : {1, 3, 8, 3, 8}) runs.push_back({.threads = threads});
  for (int pool_threads : {4, 1}) runs.push_back({.pool = std::make_shared<WorkerPool>(pool_threads)});
  for (RunOptions& run : runs) {
    SCOPED_TRACE(testing::Message() << run.threads << " threads, a pool of " << (run.pool ? run.pool->size() : 0));
    run.flush_midway = true;
    run.groups_and_attributes = true;
    const std::string path = dir + "/acq.h5";
    std::filesystem::remove(path);
    ASSERT_OK(WriteAcquisition(path, cases, run));
    const Bytes bytes = ReadFileBytes(path);
    if (first.empty()) {
      first = bytes;
      ExpectReadsBack(path, cases);
    } else {
      EXPECT_TRUE(bytes == first) << "differs from the first run's file (" << bytes.size() << " vs " << first.size()
                                  << " bytes)";
    }
  }
}

// A file of one dataset is the single-dataset stream's file, byte for byte: its chunks are laid
// out in the file directly, as there, and its index replayed from the chunk log is the one the
// single stream builds in memory (flushed rows laid out twice, all-fill chunks left out).
TEST(SharedHdf5File, OneDatasetIsTheSingleDatasetStreamsFile) {
  const std::string dir = OwnDir("one");
  for (const DatasetCase& c : Cases(3)) {
    for (bool flush : {false, true}) {
      SCOPED_TRACE(testing::Message() << c.path << (flush ? ", flushed midway" : ""));
      ASSERT_OK(WriteAcquisition(dir + "/shared.h5", {c}, {.flush_midway = flush}));
      ArraySpec spec = c.spec;
      spec.hdf5.dataset = c.path;
      auto w = Hdf5Driver().OpenWriter(spec, FileLocation(dir + "/single.h5"), {.threads = 4});
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      ASSERT_OK(AppendInterleaved({w->writer}, {c}, flush));
      ASSERT_OK(w->writer->Close());
      ASSERT_OK(w->finish());
      const Bytes single = ReadFileBytes(dir + "/single.h5");
      ASSERT_GT(single.size(), 0u);
      EXPECT_TRUE(ReadFileBytes(dir + "/shared.h5") == single);
    }
  }
}

// An aborted acquisition leaves no file: neither the target nor a temporary nor a spill.
TEST(SharedHdf5File, AbandonedLeavesNoFile) {
  const std::string dir = OwnDir("abandon");
  const std::string path = dir + "/acq.h5";
  const std::vector<DatasetCase> cases = Cases(3);
  auto stream_some = [&](SharedHdf5File& file, std::vector<driver::FormatWriter>* writers) {
    for (const DatasetCase& c : cases) {
      auto w = file.OpenDataset(c.spec, c.path, driver::WriterSettings{.threads = 2});
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      ASSERT_OK(w->writer->Append(ByteView(c.data).first(static_cast<size_t>(c.row_bytes() * 5))));
      writers->push_back(std::move(*w));
    }
  };
  {  // Abandon after the writers were aborted.
    auto file = SharedHdf5File::Create(FileLocation(path), false);
    ASSERT_TRUE(file.ok());
    std::vector<driver::FormatWriter> writers;
    stream_some(**file, &writers);
    for (driver::FormatWriter& w : writers) {
      w.writer->Abort();
      w.abandon();
    }
    (*file)->Abandon();
    (*file)->Abandon();  // again: harmless
    EXPECT_ERROR((*file)->Close(), ErrorKind::kFailedPrecondition, "after Abandon");
  }
  EXPECT_EQ(Entries(dir), std::vector<std::string>{});
  {  // Destroyed without Close (the writers outlive the file).
    std::vector<driver::FormatWriter> writers;
    {
      auto file = SharedHdf5File::Create(FileLocation(path), false);
      ASSERT_TRUE(file.ok());
      stream_some(**file, &writers);
      for (driver::FormatWriter& w : writers) w.writer->Abort();
    }
    EXPECT_EQ(Entries(dir), std::vector<std::string>{});
  }
  EXPECT_EQ(Entries(dir), std::vector<std::string>{});
  {  // Close refuses a file with an abandoned dataset, and writes nothing.
    auto file = SharedHdf5File::Create(FileLocation(path), false);
    ASSERT_TRUE(file.ok());
    std::vector<driver::FormatWriter> writers;
    stream_some(**file, &writers);
    writers[1].writer->Abort();
    writers[1].abandon();
    for (size_t i : {0, 2}) {  // unbounded: they close after any number of rows
      ASSERT_OK(writers[i].writer->Close());
      ASSERT_OK(writers[i].finish());
    }
    EXPECT_ERROR((*file)->Close(), ErrorKind::kFailedPrecondition, path, "dataset /cam2 was abandoned");
  }
  EXPECT_EQ(Entries(dir), std::vector<std::string>{});
  {  // ... and one whose stream is still open.
    auto file = SharedHdf5File::Create(FileLocation(path), false);
    ASSERT_TRUE(file.ok());
    std::vector<driver::FormatWriter> writers;
    stream_some(**file, &writers);
    ASSERT_OK(writers[0].writer->Close());
    ASSERT_OK(writers[0].finish());
    EXPECT_ERROR((*file)->Close(), ErrorKind::kFailedPrecondition, "dataset /cam2's stream is not closed");
    for (driver::FormatWriter& w : writers) w.writer->Abort();
  }
  EXPECT_EQ(Entries(dir), std::vector<std::string>{});
}

TEST(SharedHdf5File, ErrorsNameThePathAndWhatWasExpected) {
  const std::string dir = OwnDir("errors");
  const std::string path = dir + "/acq.h5";
  const std::vector<DatasetCase> cases = Cases(1);
  auto file = SharedHdf5File::Create(FileLocation(path), false);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->path(), path);
  auto w = (*file)->OpenDataset(cases[0].spec, "cam1", {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_ERROR((*file)->OpenDataset(cases[0].spec, "/cam1", {}), ErrorKind::kInvalidArgument, path,
               "/cam1 already exists");
  EXPECT_ERROR((*file)->OpenDataset(cases[0].spec, "/x", {.backend = stream::Backend::kCuda}),
               ErrorKind::kUnsupported, "CPU backend only");
  ArraySpec pyramid = cases[0].spec;
  pyramid.pyramid.levels = 2;
  EXPECT_ERROR((*file)->OpenDataset(pyramid, "/levels", {}), ErrorKind::kUnsupported, "/levels", "no multiscale levels");
  EXPECT_ERROR((*file)->OpenDataset(cases[0].spec, "/cam1/sub", {}), ErrorKind::kInvalidArgument,
               "/cam1 is a dataset, not a group");
  EXPECT_ERROR((*file)->SetAttributes("/nothing", {{"a", 1}}), ErrorKind::kNotFound, "/nothing");
  EXPECT_ERROR((*file)->SetAttributes("/", {{"omero", {{"channels", 1}}}}), ErrorKind::kUnsupported, "attributes",
               "\"omero\" is {\"channels\":1}");
  EXPECT_ERROR((*file)->SetAttributes("/", nlohmann::json::array({1})), ErrorKind::kInvalidArgument, "attributes",
               "a JSON object");
  ASSERT_OK(w->writer->Append(cases[0].data));
  ASSERT_OK(w->writer->Close());
  ASSERT_OK(w->finish());
  ASSERT_OK((*file)->Close());
  EXPECT_ERROR((*file)->Close(), ErrorKind::kFailedPrecondition, "closed twice");
  EXPECT_ERROR((*file)->OpenDataset(cases[0].spec, "/late", {}), ErrorKind::kFailedPrecondition, "/late",
               "already closed");
  EXPECT_ERROR((*file)->SetAttributes("/", {{"a", 1}}), ErrorKind::kFailedPrecondition, "already closed");
  ExpectReadsBack(path, cases);
}

// A dataset whose frames arrive with their dimensions in another order (the caller applies the
// spec's arrival_order to the writer) is stored in its own order, in a spilled dataset too.
TEST(SharedHdf5File, FramesArrivingInAnotherOrderAreStoredInTheDatasetsOrder) {
  const std::string dir = OwnDir("arrival");
  const std::string path = dir + "/acq.h5";
  std::vector<DatasetCase> cases = Cases(2);
  // cam2 stored (t, c, x) = (6, 3, 5); frames arrive (t, x, c).
  DatasetCase& reordered = cases[1];
  reordered.spec.shape = {6, 3, 5};
  reordered.spec.chunk_shape = {2, 2, 3};
  reordered.spec.arrival_order = {0, 2, 1};
  reordered.rows = 6;
  reordered.data = Pattern(6 * reordered.row_bytes(), 9, reordered.row_bytes());
  Bytes arriving(reordered.data.size());
  for (int t = 0; t < 6; ++t)
    for (int x = 0; x < 5; ++x)
      for (int c = 0; c < 3; ++c)
        std::memcpy(arriving.data() + ((t * 5 + x) * 3 + c) * 4, reordered.data.data() + ((t * 3 + c) * 5 + x) * 4, 4);
  auto file = SharedHdf5File::Create(FileLocation(path), false);
  ASSERT_TRUE(file.ok());
  auto first = (*file)->OpenDataset(cases[0].spec, cases[0].path, {.threads = 2});
  auto second = (*file)->OpenDataset(reordered.spec, reordered.path, {.threads = 2});
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_OK(second->writer->SetArrivalOrder(reordered.spec.arrival_order));
  ASSERT_OK(first->writer->Append(cases[0].data));
  ASSERT_OK(second->writer->Append(arriving));
  for (driver::FormatWriter* w : {&*first, &*second}) {
    ASSERT_OK(w->writer->Close());
    ASSERT_OK(w->finish());
  }
  ASSERT_OK((*file)->Close());
  ExpectReadsBack(path, cases);
}

// Discarding runs every pipeline and stores nothing.
TEST(SharedHdf5File, DiscardStoresNothing) {
  const std::string dir = OwnDir("discard");
  const std::vector<DatasetCase> cases = Cases(3);
  auto file = SharedHdf5File::Create(FileLocation(dir + "/acq.h5"), true);
  ASSERT_TRUE(file.ok());
  std::vector<driver::FormatWriter> writers;
  for (const DatasetCase& c : cases) {
    auto w = (*file)->OpenDataset(c.spec, c.path, {.threads = 2});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_OK(w->writer->Append(c.data));
    ASSERT_OK(w->writer->Close());
    ASSERT_OK(w->finish());
    EXPECT_GT(w->writer->stats().bytes_out, 0);
  }
  ASSERT_OK((*file)->Close());
  EXPECT_EQ(Entries(dir), std::vector<std::string>{});
}

// Sets environment variables for its lifetime, then restores them.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// Where the file goes: a local path, or an object on the test S3 server (the ctest fixture s3;
// skipped without one), staged and uploaded whole at Close.
struct Target {
  std::string name;
  bool s3 = false;
};
void PrintTo(const Target& target, std::ostream* os) { *os << target.name; }

class SharedHdf5FileTargetTest : public ::testing::TestWithParam<Target> {};

TEST_P(SharedHdf5FileTargetTest, ThreeDatasetsAppearWholeAtClose) {
  const std::vector<DatasetCase> cases = Cases(3, 4);
  Location location;
  std::optional<ScopedEnv> env;
  LocationObject object;  // the file's store and key, to look at it
  if (GetParam().s3) {
    const std::optional<store_test::TestS3Server> server = store_test::FindTestS3Server();
    if (!server) GTEST_SKIP() << "no S3 server: TESSERA_TEST_S3 is not set (the ctest fixture s3 starts one)";
    env.emplace(std::map<std::string, std::string>{{"AWS_ENDPOINT_URL", server->config.endpoint},
                                                   {"AWS_ACCESS_KEY_ID", server->config.access_key},
                                                   {"AWS_SECRET_ACCESS_KEY", server->config.secret_key},
                                                   {"AWS_REGION", "us-east-1"}});
    auto parsed = ParseLocation("s3://" + server->bucket + "/h5shared_" + std::to_string(::getpid()) + "/acq.h5");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    location = *parsed;
    auto opened = OpenLocationObject(location, /*create=*/false);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    object = *opened;
  } else {
    const std::string dir = OwnDir("target");
    location = FileLocation(dir + "/acq.h5");
    object = {std::make_shared<FileStore>(dir), "acq.h5"};
  }
  ASSERT_TRUE(object.store->Erase(object.key).ok());
  auto stored = [&]() -> Result<std::optional<Bytes>> { return object.store->Get(object.key); };
  bool absent_before_close = false;
  ASSERT_OK(WriteAcquisition(location, cases, {.threads = 2, .before_close = [&] {
                                                 auto before = stored();
                                                 absent_before_close = before.ok() && !before->has_value();
                                               }}));
  EXPECT_TRUE(absent_before_close) << "the file was visible before Close";
  auto raw = RawFile::Open(object.store, object.key);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ExpectReadsBack(Hdf5File::Open(*raw), cases);
  if (!location.is_file()) {
    auto same = stored();
    ASSERT_TRUE(same.ok() && same->has_value());
    const std::string local = OwnDir("target_compare") + "/acq.h5";
    ASSERT_OK(WriteAcquisition(local, cases, {.threads = 3}));
    EXPECT_TRUE(**same == ReadFileBytes(local)) << "the uploaded file differs from the local one";
  }
  ASSERT_TRUE(object.store->Erase(object.key).ok());
}

INSTANTIATE_TEST_SUITE_P(Targets, SharedHdf5FileTargetTest, ::testing::Values(Target{"Local"}, Target{"S3", true}),
                         [](const ::testing::TestParamInfo<Target>& info) { return info.param.name; });

// Writes a three-dataset acquisition for checking by hand with h5py / h5dump (a tool, not a test:
// run with --gtest_also_run_disabled_tests and TESSERA_HDF5_FIXTURE_DIR set). TESSERA_HDF5_FIXTURE_REPEAT (default 1) streams each dataset's
// rows that many times over (a long stream from little input memory, to watch the writer's memory
// stay flat and time Close).
TEST(SharedHdf5FileFixtures, DISABLED_ThreeDatasetAcquisition) {
  const char* out = std::getenv("TESSERA_HDF5_FIXTURE_DIR");
  if (out == nullptr) GTEST_SKIP() << "TESSERA_HDF5_FIXTURE_DIR not set";
  const char* repeat_text = std::getenv("TESSERA_HDF5_FIXTURE_REPEAT");
  const int64_t repeat = repeat_text ? std::max<int64_t>(1, std::atoll(repeat_text)) : 1;
  const std::string path = std::string(out) + "/acquisition.h5";
  std::filesystem::remove(path);
  if (repeat == 1) {
    ASSERT_OK(WriteAcquisition(path, Cases(3), {.threads = 4, .groups_and_attributes = true}));
    return;
  }
  std::vector<DatasetCase> cases = Cases(3);
  auto file = SharedHdf5File::Create(FileLocation(path), false);
  ASSERT_TRUE(file.ok());
  std::vector<driver::FormatWriter> writers;
  for (DatasetCase& c : cases) {
    if (c.spec.shape[0] != 0) c.spec.shape[0] *= repeat;
    auto w = (*file)->OpenDataset(c.spec, c.path, {.threads = 2});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    writers.push_back(std::move(*w));
  }
  const auto start = std::chrono::steady_clock::now();
  for (int64_t r = 0; r < repeat; ++r)
    for (size_t i = 0; i < cases.size(); ++i) ASSERT_OK(writers[i].writer->Append(cases[i].data));
  for (driver::FormatWriter& w : writers) {
    ASSERT_OK(w.writer->Close());
    ASSERT_OK(w.finish());
  }
  const auto closing = std::chrono::steady_clock::now();
  ASSERT_OK((*file)->Close());
  const auto end = std::chrono::steady_clock::now();
  std::printf("%s: %lld bytes; streaming %.3f s, Close %.3f s\n", path.c_str(),
              static_cast<long long>(std::filesystem::file_size(path)),
              std::chrono::duration<double>(closing - start).count(), std::chrono::duration<double>(end - closing).count());
}

}  // namespace
}  // namespace tessera::hdf5
