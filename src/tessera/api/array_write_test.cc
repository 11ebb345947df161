// Array in mode r+: region writes, transactions and resize through the façade, checked against a
// model of the array kept here; and the mode's refusals.
#include "tessera/api/array.h"

#include <atomic>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "tessera/api/stream.h"
#include "cpp_support/api_helpers.h"
#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using api_test::Uint16;

class ArrayWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_array_write_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A 2-d uint16 Zarr array (10 x 12, chunks 4 x 5, sharded 2 x 2 when `sharded`) holding
  // 0, 1, 2, ... in C order; returns its path.
  std::string CreateRamp(bool sharded) {
    const std::string path = (dir_ / "a.zarr").string();
    ArraySpec spec = Uint16({10, 12}, {4, 5}, sharded ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{});
    StreamOptions options;
    options.format = Format::kZarr3;
    auto stream = CreateStream(path, spec, options);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    model_.resize(120);
    for (size_t i = 0; i < model_.size(); ++i) model_[i] = static_cast<uint16_t>(i);
    EXPECT_TRUE((*stream)->Append(ByteView(reinterpret_cast<const uint8_t*>(model_.data()), 240)).ok());
    EXPECT_TRUE((*stream)->Close().ok());
    return path;
  }

  static std::unique_ptr<Array> Open(const std::string& path, Mode mode) {
    OpenOptions options;
    options.mode = mode;
    Result<std::unique_ptr<Array>> a = OpenArray(path, options);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? std::move(a).value() : nullptr;
  }

  static std::vector<uint16_t> ReadAll(const Array& a) {
    std::vector<uint16_t> out(static_cast<size_t>(a.shape()[0] * a.shape()[1]));
    Status st = a.Read(Hyperslab::All(a.shape()), out.data());
    EXPECT_TRUE(st.ok()) << st.ToString();
    return out;
  }

  // Applies `values` (C order over the selection's output shape) to the model (12 columns).
  void ApplyToModel(const Hyperslab& sel, const std::vector<uint16_t>& values) {
    size_t k = 0;
    for (int64_t i = 0; i < sel.dims[0].count; ++i) {
      for (int64_t j = 0; j < sel.dims[1].count; ++j) {
        const int64_t r = sel.dims[0].start + i * sel.dims[0].step, c = sel.dims[1].start + j * sel.dims[1].step;
        model_[static_cast<size_t>(r * 12 + c)] = values[k++];
      }
    }
  }

  fs::path dir_;
  std::vector<uint16_t> model_;
};

TEST(CopyStridedValuesTest, CopiesNegativeStridesAndKeepsBroadcastDimensionsOnce) {
  // A 3 x 4 view of a 4-element row broadcast along dimension 0, read backwards along dimension 1.
  const uint16_t row[4] = {1, 2, 3, 4};
  SourceView view;
  view.base = reinterpret_cast<const uint8_t*>(row + 3);
  view.byte_strides[0] = 0;
  view.byte_strides[1] = -2;
  SourceView copy;
  Bytes bytes = CopyStridedValues(view, {3, 4}, 2, &copy);
  ASSERT_EQ(bytes.size(), 8u);  // the broadcast dimension is stored once
  EXPECT_EQ(copy.byte_strides[0], 0);
  EXPECT_EQ(copy.byte_strides[1], 2);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      uint16_t v;
      std::memcpy(&v, copy.base + i * copy.byte_strides[0] + j * copy.byte_strides[1], 2);
      EXPECT_EQ(v, 4 - j);
    }
  }
}

TEST_F(ArrayWriteTest, CreateModesAreRefusedByOpenArray) {
  const std::string path = CreateRamp(false);
  for (Mode mode : {Mode::kAppend, Mode::kOverwrite, Mode::kCreate}) {
    OpenOptions options;
    options.mode = mode;
    EXPECT_ERROR(OpenArray(path, options), ErrorKind::kInvalidArgument, std::string(ModeName(mode)), "r+");
  }
}

TEST_F(ArrayWriteTest, ReadOnlyArrayRefusesWritesResizeAndTransactions) {
  const std::string path = CreateRamp(false);
  std::unique_ptr<Array> a = Open(path, Mode::kRead);
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->writable());
  const uint16_t v = 7;
  EXPECT_ERROR(a->Write(a->Select("0, 0").value(), &v), ErrorKind::kFailedPrecondition, path, "mode r", "mode r+");
  EXPECT_ERROR(a->Resize({5, 5}), ErrorKind::kFailedPrecondition, "mode r+");
  EXPECT_ERROR(a->BeginTransaction(), ErrorKind::kFailedPrecondition, "mode r+");
  EXPECT_EQ(ReadAll(*a), model_);
}

TEST_F(ArrayWriteTest, WritesAreSeenByLaterReadsOfTheSameArray) {
  for (bool sharded : {false, true}) {
    SCOPED_TRACE(sharded ? "sharded" : "unsharded");
    fs::remove_all(dir_ / "a.zarr");
    std::unique_ptr<Array> a = Open(CreateRamp(sharded), Mode::kReadWrite);
    ASSERT_TRUE(a);
    ASSERT_TRUE(a->writable());
    EXPECT_EQ(ReadAll(*a), model_);  // a read first: a sharded source caches the shard indexes now
    std::mt19937 rng(sharded ? 2 : 1);
    for (const char* expr : {"1:9:3, ::-2", "0:10, 4", "::-1, 11", "3:7, 2:11"}) {
      Hyperslab sel = a->Select(expr).value();
      std::vector<uint16_t> values(static_cast<size_t>(sel.NumElements()));
      for (auto& x : values) x = static_cast<uint16_t>(rng() % 60000);
      ASSERT_TRUE(a->Write(sel, values.data()).ok()) << expr;
      ApplyToModel(sel, values);
      ASSERT_EQ(ReadAll(*a), model_) << "after writing " << expr;
    }
    // Another Array opened afterwards reads the same.
    EXPECT_EQ(ReadAll(*Open((dir_ / "a.zarr").string(), Mode::kRead)), model_);
  }
}

TEST_F(ArrayWriteTest, OutOfRangeSelectionWritesNothing) {
  std::unique_ptr<Array> a = Open(CreateRamp(true), Mode::kReadWrite);
  ASSERT_TRUE(a);
  Hyperslab sel = Hyperslab::All(a->shape());
  sel.dims[1] = index::DimSlice{8, 1, 5};  // columns 8..12 of 12
  std::vector<uint16_t> values(50, 9);
  EXPECT_ERROR(a->Write(sel, values.data()), ErrorKind::kOutOfRange, "dimension 1", "[0, 12)");
  EXPECT_EQ(ReadAll(*a), model_);
}

TEST_F(ArrayWriteTest, TransactionStoresNothingUntilCommitAndCopiesTheValues) {
  std::unique_ptr<Array> a = Open(CreateRamp(true), Mode::kReadWrite);
  ASSERT_TRUE(a);
  Transaction t = a->BeginTransaction().value();
  Hyperslab first = a->Select("0:6, 0:6").value(), second = a->Select("4:10:2, ::-1").value();
  std::vector<uint16_t> v1(36, 11), v2(60);
  for (size_t i = 0; i < v2.size(); ++i) v2[i] = static_cast<uint16_t>(1000 + i);
  ASSERT_TRUE(t.Write(first, v1.data()).ok());
  ASSERT_TRUE(t.Write(second, v2.data()).ok());
  const std::vector<uint16_t> before = model_;
  ApplyToModel(first, v1);
  ApplyToModel(second, v2);  // the later write wins where they overlap
  std::fill(v1.begin(), v1.end(), 0);  // the transaction holds its own copies
  std::fill(v2.begin(), v2.end(), 0);
  EXPECT_EQ(ReadAll(*a), before);  // nothing stored before Commit
  Hyperslab outside = a->Select("0, 0").value();
  outside.dims[0] = index::DimSlice{10, 1, 1};
  EXPECT_ERROR(t.Write(outside, v1.data()), ErrorKind::kOutOfRange, "[0, 10)");
  ASSERT_TRUE(t.Commit().ok());
  EXPECT_EQ(ReadAll(*a), model_);
  EXPECT_ERROR(t.Write(first, v1.data()), ErrorKind::kFailedPrecondition, "committed");
  EXPECT_ERROR(t.Commit(), ErrorKind::kFailedPrecondition, "committed");

  Transaction aborted = a->BeginTransaction().value();
  ASSERT_TRUE(aborted.Write(first, v1.data()).ok());
  aborted.Abort();
  EXPECT_ERROR(aborted.Commit(), ErrorKind::kFailedPrecondition, "aborted");
  { Transaction dropped = a->BeginTransaction().value(); ASSERT_TRUE(dropped.Write(first, v1.data()).ok()); }
  EXPECT_EQ(ReadAll(*a), model_);
}

TEST_F(ArrayWriteTest, ResizeShowsTheNewShapeAndClearsWhatWasCut) {
  const std::string path = CreateRamp(true);
  std::unique_ptr<Array> a = Open(path, Mode::kReadWrite);
  ASSERT_TRUE(a);
  EXPECT_ERROR(a->Resize({5}), ErrorKind::kInvalidArgument, "rank");
  ASSERT_TRUE(a->Resize({6, 7}).ok());
  EXPECT_EQ(a->shape(), (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(a->metadata()["shape"], nlohmann::json({6, 7}));
  ASSERT_TRUE(a->Resize({10, 12}).ok());
  std::vector<uint16_t> expected(120, 0);  // the fill value outside the 6 x 7 that stayed
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 7; ++c) expected[r * 12 + c] = model_[r * 12 + c];
  }
  EXPECT_EQ(ReadAll(*a), expected);
  EXPECT_EQ(ReadAll(*Open(path, Mode::kRead)), expected);
}

TEST_F(ArrayWriteTest, ConcurrentWritersToOneShardKeepEveryUpdate) {
  std::unique_ptr<Array> a = Open(CreateRamp(true), Mode::kReadWrite);
  ASSERT_TRUE(a);
  // Thread k writes column k (every row): all threads touch every shard of the columns' shard row.
  std::vector<std::thread> threads;
  for (int k = 0; k < 8; ++k) {
    threads.emplace_back([&, k] {
      for (int r = 0; r < 10; ++r) {
        Hyperslab sel = a->Select(std::to_string(r) + ", " + std::to_string(k)).value();
        const uint16_t v = static_cast<uint16_t>(50000 + k * 100 + r);
        Status st = a->Write(sel, &v);
        EXPECT_TRUE(st.ok()) << st.ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int k = 0; k < 8; ++k) {
    for (int r = 0; r < 10; ++r) model_[r * 12 + k] = static_cast<uint16_t>(50000 + k * 100 + r);
  }
  EXPECT_EQ(ReadAll(*a), model_);
}

TEST_F(ArrayWriteTest, ReadsDuringWritesSeeWholeShards) {
  std::unique_ptr<Array> a = Open(CreateRamp(true), Mode::kReadWrite);
  ASSERT_TRUE(a);
  // Writers rewrite rows of the shards over and over while a reader reads the whole array: no
  // read may decode a shard replaced between its index and its chunks.
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      std::vector<uint16_t> out(120);
      Status st = a->Read(Hyperslab::All(a->shape()), out.data());
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
  });
  std::vector<std::thread> writers;
  for (int k = 0; k < 3; ++k) {
    writers.emplace_back([&, k] {
      for (int round = 0; round < 30; ++round) {
        std::vector<uint16_t> row(12, static_cast<uint16_t>(round * 10 + k));
        Status st = a->Write(a->Select(std::to_string(k * 3)).value(), row.data());
        EXPECT_TRUE(st.ok()) << st.ToString();
      }
    });
  }
  for (auto& t : writers) t.join();
  done = true;
  reader.join();
  for (int k = 0; k < 3; ++k) {
    for (int c = 0; c < 12; ++c) model_[k * 3 * 12 + c] = static_cast<uint16_t>(290 + k);
  }
  EXPECT_EQ(ReadAll(*a), model_);
}

}  // namespace
}  // namespace tessera
