// The store conformance suite (fixture: tests/cpp_support/store_conformance.h), conditional writes
// (compare-and-swap): GetVersioned, SetPartsIf and EraseIf, and many threads incrementing one value
// losing no update.
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

class StoreConditionalConformanceTest : public StoreConformanceTest {};

// ---- Conditional writes (compare-and-swap): GetVersioned, SetPartsIf, EraseIf ----

// The value and generation of `key`; fails the test (and returns nullopt) on an error.
std::optional<VersionedValue> GetVersioned(const Store& store, const std::string& key) {
  Result<std::optional<VersionedValue>> r = store.GetVersioned(key);
  EXPECT_TRUE(r.ok()) << key << ": " << r.status().ToString();
  return r.ok() ? *r : std::nullopt;
}

// SetPartsIf / EraseIf's answer; an error fails the test and reads as false.
bool SetIf(Store& store, const std::string& key, const Bytes& value, std::optional<std::string> generation) {
  const ByteView parts[] = {value};
  Result<bool> r = store.SetPartsIf(key, parts, WriteCondition{std::move(generation)});
  EXPECT_TRUE(r.ok()) << key << ": " << r.status().ToString();
  return r.ok() && *r;
}
bool EraseIf(Store& store, const std::string& key, std::optional<std::string> generation) {
  Result<bool> r = store.EraseIf(key, WriteCondition{std::move(generation)});
  EXPECT_TRUE(r.ok()) << key << ": " << r.status().ToString();
  return r.ok() && *r;
}

TEST_P(StoreConditionalConformanceTest, ConditionalGetVersionedOfAMissingKeyIsNullopt) {
  Result<std::optional<VersionedValue>> r = store_->GetVersioned("absent");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->has_value());
  Set("present", BytesOf("v"));
  std::optional<VersionedValue> v = GetVersioned(*store_, "present");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->bytes, BytesOf("v"));
  EXPECT_FALSE(v->generation.empty());
}

TEST_P(StoreConditionalConformanceTest, ConditionalSetIfAbsentSucceedsOnceThenFails) {
  // A nested key whose directories do not exist yet (file store: created as by Set).
  EXPECT_TRUE(SetIf(*store_, "new/deep/k", BytesOf("first"), std::nullopt));
  EXPECT_EQ(Get("new/deep/k"), BytesOf("first"));
  EXPECT_FALSE(SetIf(*store_, "new/deep/k", BytesOf("second"), std::nullopt));
  EXPECT_EQ(Get("new/deep/k"), BytesOf("first"));
  EXPECT_EQ(List(""), std::vector<std::string>{"new/deep/k"});
  if (GetParam() == StoreKind::kFile) EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"new/deep/k"});  // no temporary file left
}

TEST_P(StoreConditionalConformanceTest, ConditionalStaleGenerationFailsAndWritesNothing) {
  Set("k", BytesOf("one"));
  std::optional<VersionedValue> first = GetVersioned(*store_, "k");
  ASSERT_TRUE(first.has_value());
  Set("k", BytesOf("two"));  // another writer, after our read
  std::optional<VersionedValue> second = GetVersioned(*store_, "k");
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(second->generation, first->generation);
  EXPECT_FALSE(SetIf(*store_, "k", BytesOf("three"), first->generation));
  EXPECT_EQ(Get("k"), BytesOf("two"));
  // A generation of a key that has since been erased, and one of a key that never existed.
  EXPECT_FALSE(SetIf(*store_, "never", BytesOf("x"), second->generation));
  EXPECT_EQ(Get("never"), std::nullopt);
  EXPECT_FALSE(SetIf(*store_, "new/dir/never", BytesOf("x"), second->generation));
  if (GetParam() == StoreKind::kFile) {
    EXPECT_FALSE(std::filesystem::exists(temp_dir_->path() + "/store/new"));  // made for the write, removed with it
  }
  ASSERT_TRUE(store_->Erase("k").ok());
  EXPECT_FALSE(SetIf(*store_, "k", BytesOf("four"), second->generation));
  EXPECT_EQ(Get("k"), std::nullopt);
  EXPECT_EQ(List(""), std::vector<std::string>{});
  if (GetParam() == StoreKind::kFile) EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{});
}

TEST_P(StoreConditionalConformanceTest, ConditionalCurrentGenerationSucceedsAndChangesTheGeneration) {
  Set("a/k", BytesOf("one"));
  std::optional<VersionedValue> v = GetVersioned(*store_, "a/k");
  ASSERT_TRUE(v.has_value());
  const Bytes head = BytesOf("tw"), tail = BytesOf("o!");
  const ByteView parts[] = {head, tail};
  Result<bool> stored = store_->SetPartsIf("a/k", parts, WriteCondition{v->generation});
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_TRUE(*stored);
  std::optional<VersionedValue> after = GetVersioned(*store_, "a/k");
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->bytes, BytesOf("two!"));
  EXPECT_NE(after->generation, v->generation);
  EXPECT_FALSE(SetIf(*store_, "a/k", BytesOf("three"), v->generation));  // used up
  EXPECT_TRUE(SetIf(*store_, "a/k", BytesOf("three"), after->generation));
  EXPECT_EQ(Get("a/k"), BytesOf("three"));
  // A value the same length as the one it replaces, written at once, still has a new generation.
  std::optional<VersionedValue> third = GetVersioned(*store_, "a/k");
  ASSERT_TRUE(third.has_value());
  EXPECT_TRUE(SetIf(*store_, "a/k", BytesOf("THREE"), third->generation));
  std::optional<VersionedValue> fourth = GetVersioned(*store_, "a/k");
  ASSERT_TRUE(fourth.has_value());
  EXPECT_NE(fourth->generation, third->generation);
}

TEST_P(StoreConditionalConformanceTest, ConditionalLargeValue) {
  // Above the multipart threshold of S3Multipart (its conditional writes are multipart there).
  const Bytes big = Pattern((11u << 20) + 5, 7), other = Pattern((11u << 20) + 5, 8);
  EXPECT_TRUE(SetIf(*store_, "big", big, std::nullopt));
  EXPECT_FALSE(SetIf(*store_, "big", other, std::nullopt));
  std::optional<VersionedValue> v = GetVersioned(*store_, "big");
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->bytes == big);
  EXPECT_TRUE(SetIf(*store_, "big", other, v->generation));  // S3: a multipart upload's ETag matches
  std::optional<Bytes> got = Get("big");
  EXPECT_TRUE(got == other);
  std::optional<VersionedValue> second = GetVersioned(*store_, "big");
  ASSERT_TRUE(second.has_value());
  Set("big", Pattern(10, 1));
  EXPECT_FALSE(SetIf(*store_, "big", big, second->generation));
  EXPECT_EQ(Get("big"), Pattern(10, 1));
  std::optional<VersionedValue> now = GetVersioned(*store_, "big");
  ASSERT_TRUE(now.has_value());
  EXPECT_TRUE(SetIf(*store_, "big", big, now->generation));
  got = Get("big");
  EXPECT_TRUE(got == big);
}

TEST_P(StoreConditionalConformanceTest, ConditionalEraseIf) {
  EXPECT_TRUE(EraseIf(*store_, "absent", std::nullopt));  // expected missing, and missing
  Set("d/k", BytesOf("one"));
  std::optional<VersionedValue> first = GetVersioned(*store_, "d/k");
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(EraseIf(*store_, "d/k", std::nullopt));  // expected missing, but there
  EXPECT_FALSE(EraseIf(*store_, "absent", first->generation));
  Set("d/k", BytesOf("two"));
  EXPECT_FALSE(EraseIf(*store_, "d/k", first->generation));  // stale
  EXPECT_EQ(Get("d/k"), BytesOf("two"));
  std::optional<VersionedValue> second = GetVersioned(*store_, "d/k");
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(EraseIf(*store_, "d/k", second->generation));
  EXPECT_EQ(Get("d/k"), std::nullopt);
  EXPECT_EQ(List(""), std::vector<std::string>{});
  if (GetParam() == StoreKind::kFile) {
    EXPECT_FALSE(std::filesystem::exists(temp_dir_->path() + "/store/d"));  // the emptied directory goes, as after Erase
  }
  EXPECT_FALSE(EraseIf(*store_, "d/k", second->generation));  // already gone
}

// A conditional write is ordered after the earlier unconditional writes of its caller, even when
// they are still queued (a write-behind store): it compares against what they stored.
TEST_P(StoreConditionalConformanceTest, ConditionalWritesAreOrderedAfterEarlierWrites) {
  Set("k", Pattern(200000, 1));
  std::optional<VersionedValue> v = GetVersioned(*store_, "k");
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->bytes == Pattern(200000, 1));
  Set("k", Pattern(200000, 2));
  EXPECT_FALSE(SetIf(*store_, "k", BytesOf("late"), v->generation));
  EXPECT_EQ(Get("k"), Pattern(200000, 2));
  Set("j", BytesOf("queued"));
  EXPECT_FALSE(SetIf(*store_, "j", BytesOf("late"), std::nullopt));
  EXPECT_EQ(Get("j"), BytesOf("queued"));
  Set("e", BytesOf("queued"));
  EXPECT_FALSE(EraseIf(*store_, "e", std::nullopt));
  EXPECT_EQ(Get("e"), BytesOf("queued"));
}

// Read-modify-write of one counter by many threads, each retrying on conflict: every increment
// counts (no lost update) and every conflict was a real one (the count is exact).
TEST_P(StoreConditionalConformanceTest, ConditionalIncrementsFromManyThreadsLoseNone) {
  const bool s3 = s3_ != nullptr;
  const int threads = s3 ? 4 : 8;
  const int increments = s3 ? 8 : GetParam() == StoreKind::kFile ? 40 : 200;
  std::atomic<int> conflicts{0};
  std::mutex errors_mu;
  std::vector<std::string> errors;
  auto increment_loop = [&] {
    for (int i = 0; i < increments; ++i) {
      for (int attempt = 0;; ++attempt) {
        if (attempt > 10000) {
          std::lock_guard lock(errors_mu);
          errors.push_back("no progress after 10000 conflicts");
          return;
        }
        Result<std::optional<VersionedValue>> read = store_->GetVersioned("counter");
        if (!read.ok()) {
          std::lock_guard lock(errors_mu);
          errors.push_back(read.status().ToString());
          return;
        }
        const int64_t count = *read ? std::stoll(std::string((*read)->bytes.begin(), (*read)->bytes.end())) : 0;
        const std::string next = std::to_string(count + 1);
        const Bytes value(next.begin(), next.end());
        const ByteView parts[] = {value};
        Result<bool> stored = store_->SetPartsIf(
            "counter", parts, WriteCondition{*read ? std::optional<std::string>((*read)->generation) : std::nullopt});
        if (!stored.ok()) {
          std::lock_guard lock(errors_mu);
          errors.push_back(stored.status().ToString());
          return;
        }
        if (*stored) break;
        conflicts.fetch_add(1);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(increment_loop);
  for (std::thread& t : pool) t.join();
  EXPECT_EQ(errors, std::vector<std::string>{});
  EXPECT_EQ(Get("counter"), BytesOf(std::to_string(threads * increments)))
      << conflicts.load() << " conflicts were retried";
  if (GetParam() == StoreKind::kFile) EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"counter"});
}

TESSERA_INSTANTIATE_FOR_ALL_STORES(StoreConditionalConformanceTest);

}  // namespace
}  // namespace tessera::store_conformance
