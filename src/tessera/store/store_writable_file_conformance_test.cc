// The store conformance suite (fixture: tests/cpp_support/store_conformance.h), writable files
// (writable_file.h): written at offsets in any order, invisible until Commit, then the whole value.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cpp_support/store_conformance.h"

namespace tessera::store_conformance {
namespace {

class StoreWritableFileConformanceTest : public StoreConformanceTest {};

// Writable files (writable_file.h): written at offsets in any order, invisible until Commit, then
// the whole value at once.

TEST_P(StoreWritableFileConformanceTest, WritableFileWrittenOutOfOrderReadsBackEqual) {
  ScopedStagingDir staging;
  const std::string key = "h5/volume.h5";
  // Above S3Multipart's 5 MiB threshold: a multipart upload there.
  const Bytes value = Pattern((6u << 20) + 4321, 12);
  std::unique_ptr<WritableFile> file = OpenWritableFile(key);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->Describe(), store_->Describe(key));
  // Pieces of uneven sizes, the last first, from several threads at once.
  std::vector<std::pair<size_t, size_t>> pieces;  // offset, length
  for (size_t at = 0, i = 0; at < value.size(); ++i) {
    const size_t n = std::min(value.size() - at, 1000 + (i * 7919) % 300000);
    pieces.emplace_back(at, n);
    at += n;
  }
  std::reverse(pieces.begin(), pieces.end());
  constexpr int kThreads = 4;
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (size_t j = t; j < pieces.size(); j += kThreads) {
        const auto [at, n] = pieces[j];
        if (!file->WriteAt(at, ByteView(value).subspan(at, n)).ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(failures.load(), 0);
  // Nothing under the key before Commit.
  EXPECT_EQ(Get(key), std::nullopt);
  EXPECT_EQ(Size(key), std::nullopt);
  EXPECT_EQ(List(""), std::vector<std::string>{});

  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(Size(key), value.size());
  EXPECT_EQ(Get(key), value);
  ExpectOnly({key}, staging);
  // Committed once: later calls are refused, Abandon does nothing.
  EXPECT_ERROR(file->Commit(), ErrorKind::kFailedPrecondition, store_->Describe(key));
  EXPECT_ERROR(file->WriteAt(0, ByteView(value).first(1)), ErrorKind::kFailedPrecondition, store_->Describe(key));
  file->Abandon();
  file.reset();
  EXPECT_EQ(Get(key), value);
}

TEST_P(StoreWritableFileConformanceTest, WritableFileAbandonedLeavesNothing) {
  ScopedStagingDir staging;
  {
    std::unique_ptr<WritableFile> file = OpenWritableFile("a/abandoned");
    ASSERT_NE(file, nullptr);
    ASSERT_TRUE(file->WriteAt(0, Pattern(1000, 1)).ok());
    file->Abandon();
    file->Abandon();  // twice is fine
    EXPECT_ERROR(file->WriteAt(0, Pattern(10, 1)), ErrorKind::kFailedPrecondition, store_->Describe("a/abandoned"));
    EXPECT_ERROR(file->Commit(), ErrorKind::kFailedPrecondition, store_->Describe("a/abandoned"));
  }
  {
    std::unique_ptr<WritableFile> file = OpenWritableFile("a/dropped");
    ASSERT_NE(file, nullptr);
    ASSERT_TRUE(file->WriteAt(500, Pattern(1000, 2)).ok());
  }  // destroyed uncommitted
  EXPECT_EQ(Get("a/abandoned"), std::nullopt);
  EXPECT_EQ(Get("a/dropped"), std::nullopt);
  ExpectOnly({}, staging);
}

TEST_P(StoreWritableFileConformanceTest, WritableFileReplacesAnExistingValueOnlyAtCommit) {
  ScopedStagingDir staging;
  const Bytes old_value = Pattern(5000, 1), new_value = Pattern(12345, 3);
  Set("v", old_value);
  {
    std::unique_ptr<WritableFile> file = OpenWritableFile("v");
    ASSERT_NE(file, nullptr);
    ASSERT_TRUE(file->WriteAt(0, Pattern(300, 2)).ok());
    file->Abandon();
  }
  EXPECT_EQ(Get("v"), old_value);
  std::unique_ptr<WritableFile> file = OpenWritableFile("v");
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->WriteAt(6000, ByteView(new_value).subspan(6000)).ok());
  EXPECT_EQ(Get("v"), old_value);
  ASSERT_TRUE(file->WriteAt(0, ByteView(new_value).first(6000)).ok());
  EXPECT_EQ(Get("v"), old_value);
  EXPECT_EQ(Size("v"), old_value.size());
  EXPECT_EQ(List(""), std::vector<std::string>{"v"});
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(Get("v"), new_value);
  ExpectOnly({"v"}, staging);
}

TEST_P(StoreWritableFileConformanceTest, WritableFileGapsReadAsZerosAndTruncateSetsTheSize) {
  ScopedStagingDir staging;
  std::unique_ptr<WritableFile> gaps = OpenWritableFile("gaps");
  ASSERT_NE(gaps, nullptr);
  ASSERT_TRUE(gaps->WriteAt(10, BytesOf("abc")).ok());
  ASSERT_TRUE(gaps->Truncate(20).ok());  // grows with zeros
  ASSERT_TRUE(gaps->Commit().ok());
  Bytes expected(20, 0);
  expected[10] = 'a', expected[11] = 'b', expected[12] = 'c';
  EXPECT_EQ(Get("gaps"), expected);

  std::unique_ptr<WritableFile> cut = OpenWritableFile("cut");
  ASSERT_NE(cut, nullptr);
  ASSERT_TRUE(cut->WriteAt(0, Pattern(100, 4)).ok());
  ASSERT_TRUE(cut->Truncate(40).ok());  // drops the rest
  ASSERT_TRUE(cut->Commit().ok());
  const Bytes full = Pattern(100, 4);
  EXPECT_EQ(Get("cut"), Bytes(full.begin(), full.begin() + 40));

  std::unique_ptr<WritableFile> empty = OpenWritableFile("empty");
  ASSERT_NE(empty, nullptr);
  ASSERT_TRUE(empty->Commit().ok());
  EXPECT_EQ(Get("empty"), Bytes{});
  ExpectOnly({"cut", "empty", "gaps"}, staging);
}

// A commit lands after the key's earlier writes (a write-behind store's queued Set included), and a
// later Set after it.
TEST_P(StoreWritableFileConformanceTest, WritableFileCommitIsOrderedWithSetsOfItsKey) {
  ScopedStagingDir staging;
  Set("k", Pattern(300000, 1));
  std::unique_ptr<WritableFile> file = OpenWritableFile("k");
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->WriteAt(0, Pattern(20, 2)).ok());
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(Get("k"), Pattern(20, 2));
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(Get("k"), Pattern(20, 2));
  Set("k", Pattern(30, 3));
  EXPECT_EQ(Get("k"), Pattern(30, 3));
  ExpectOnly({"k"}, staging);
}

TESSERA_INSTANTIATE_FOR_ALL_STORES(StoreWritableFileConformanceTest);

}  // namespace
}  // namespace tessera::store_conformance
