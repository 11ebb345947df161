// The store conformance suite (fixture: tests/cpp_support/store_conformance.h), values: get, set,
// set from parts, ranges and suffixes, sizes, erase, listing, key rules, and concurrent readers and
// writers never seeing a torn value.
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

class StoreValuesConformanceTest : public StoreConformanceTest {};

TEST_P(StoreValuesConformanceTest, MissingKeyIsNulloptEverywhere) {
  EXPECT_EQ(Get("absent"), std::nullopt);
  EXPECT_EQ(GetRange("absent", 0, 0), std::nullopt);
  EXPECT_EQ(GetRange("absent", 5, 10), std::nullopt);
  EXPECT_EQ(GetSuffix("absent", 3), std::nullopt);
  EXPECT_EQ(Size("absent"), std::nullopt);
  EXPECT_EQ(Get("no/such/nested/key"), std::nullopt);
  EXPECT_TRUE(List("").empty());
}

TEST_P(StoreValuesConformanceTest, SetGetRoundTrip) {
  const Bytes top = Pattern(37, 1), nested = Pattern(1000, 2);
  Set("zarr.json", top);
  Set("group/array/c/0/0", nested);
  EXPECT_EQ(Get("zarr.json"), top);
  EXPECT_EQ(Get("group/array/c/0/0"), nested);
  EXPECT_EQ(Size("zarr.json"), 37u);
  EXPECT_EQ(Size("group/array/c/0/0"), 1000u);
  EXPECT_EQ(Get("group/array/c/0"), std::nullopt);
}

TEST_P(StoreValuesConformanceTest, OverwriteReplacesWholeValue) {
  Set("k", Pattern(5000, 1));
  Set("k", Pattern(10, 2));
  EXPECT_EQ(Get("k"), Pattern(10, 2));
  EXPECT_EQ(Size("k"), 10u);
  Set("k", Pattern(7000, 3));
  EXPECT_EQ(Get("k"), Pattern(7000, 3));
  EXPECT_EQ(List(""), std::vector<std::string>{"k"});
}

TEST_P(StoreValuesConformanceTest, SetPartsStoresTheConcatenation) {
  const Bytes ab = BytesOf("ab"), cde = BytesOf("cde");
  const std::vector<ByteView> parts = {ab, ByteView(), cde};
  ASSERT_TRUE(store_->SetParts("p/joined", parts).ok());
  EXPECT_EQ(Get("p/joined"), BytesOf("abcde"));
  ASSERT_TRUE(store_->SetParts("p/joined", std::vector<ByteView>{cde}).ok());  // overwrite
  EXPECT_EQ(Get("p/joined"), cde);
  ASSERT_TRUE(store_->SetParts("p/none", std::span<const ByteView>()).ok());
  EXPECT_EQ(Get("p/none"), Bytes{});

  // More pieces than one writev call takes (IOV_MAX is 1024 on Linux), of uneven sizes.
  const Bytes pool = Pattern(3000 * 40, 8);
  std::vector<ByteView> many;
  Bytes expected;
  for (size_t i = 0, offset = 0; i < 3000; ++i) {
    const size_t n = (i * 7) % 41;
    many.push_back(ByteView(pool).subspan(offset, n));
    expected.insert(expected.end(), pool.begin() + offset, pool.begin() + offset + n);
    offset += n;
  }
  ASSERT_TRUE(store_->SetParts("p/many", many).ok());
  EXPECT_EQ(Get("p/many"), expected);
  EXPECT_ERROR(store_->SetParts("../p", parts), ErrorKind::kInvalidArgument, "store key \"../p\"", "\"..\"");
}

TEST_P(StoreValuesConformanceTest, EmptyValueIsPresent) {
  Set("empty", Bytes{});
  EXPECT_EQ(Get("empty"), Bytes{});
  EXPECT_EQ(Size("empty"), 0u);
  EXPECT_EQ(GetRange("empty", 0, 0), Bytes{});
  EXPECT_EQ(GetSuffix("empty", 0), Bytes{});
  EXPECT_ERROR(store_->GetRange("empty", 0, 1), ErrorKind::kOutOfRange, store_->Describe("empty"), "bytes [0, 1)",
               "the value is 0 bytes");
  EXPECT_ERROR(store_->GetSuffix("empty", 1), ErrorKind::kOutOfRange, store_->Describe("empty"), "the last 1 bytes",
               "the value is 0 bytes");
  EXPECT_EQ(List(""), std::vector<std::string>{"empty"});
}

TEST_P(StoreValuesConformanceTest, LargeValue) {
  const size_t n = (6u << 20) + 12345;  // several MiB, not a multiple of any buffer size
  const Bytes value = Pattern(n, 9);
  Set("big/value", value);
  EXPECT_EQ(Size("big/value"), n);
  EXPECT_EQ(Get("big/value"), value);
  const uint64_t offset = (3u << 20) - 7, length = (2u << 20) + 11;
  EXPECT_EQ(GetRange("big/value", offset, length), Bytes(value.begin() + offset, value.begin() + offset + length));
  EXPECT_EQ(GetSuffix("big/value", 1u << 20), Bytes(value.end() - (1u << 20), value.end()));
}

TEST_P(StoreValuesConformanceTest, GetRangeInsideAndAtEdges) {
  const Bytes v = Pattern(100, 4);
  Set("r", v);
  auto slice = [&](size_t b, size_t e) { return Bytes(v.begin() + b, v.begin() + e); };
  EXPECT_EQ(GetRange("r", 0, 100), v);
  EXPECT_EQ(GetRange("r", 0, 1), slice(0, 1));
  EXPECT_EQ(GetRange("r", 99, 1), slice(99, 100));
  EXPECT_EQ(GetRange("r", 10, 20), slice(10, 30));
  EXPECT_EQ(GetRange("r", 0, 0), Bytes{});
  EXPECT_EQ(GetRange("r", 50, 0), Bytes{});
  EXPECT_EQ(GetRange("r", 100, 0), Bytes{});  // empty range at the end
}

TEST_P(StoreValuesConformanceTest, GetRangePastEndIsOutOfRangeNamingKeyRangeAndSize) {
  Set("dir/shard", Pattern(100, 5));
  struct Case {
    uint64_t offset, length;
  };
  for (const Case c : {Case{90, 11}, Case{100, 1}, Case{101, 0}, Case{0, 101}, Case{1000, 5}}) {
    EXPECT_ERROR(store_->GetRange("dir/shard", c.offset, c.length), ErrorKind::kOutOfRange,
                 store_->Describe("dir/shard"), ByteRangeText(c.offset, c.offset + c.length), "100 bytes")
        << c.offset << "+" << c.length;
  }
  // An offset + length that overflows uint64 is still a clean kOutOfRange.
  EXPECT_ERROR(store_->GetRange("dir/shard", UINT64_MAX - 1, 10), ErrorKind::kOutOfRange,
               store_->Describe("dir/shard"), "bytes [18446744073709551614, ", "100 bytes");
}

TEST_P(StoreValuesConformanceTest, GetSuffix) {
  const Bytes v = Pattern(64, 6);
  Set("s", v);
  EXPECT_EQ(GetSuffix("s", 0), Bytes{});
  EXPECT_EQ(GetSuffix("s", 1), Bytes(v.end() - 1, v.end()));
  EXPECT_EQ(GetSuffix("s", 16), Bytes(v.end() - 16, v.end()));
  EXPECT_EQ(GetSuffix("s", 64), v);  // the whole value
  EXPECT_ERROR(store_->GetSuffix("s", 65), ErrorKind::kOutOfRange, store_->Describe("s"), "the last 65 bytes",
               "64 bytes");
}

TEST_P(StoreValuesConformanceTest, SizeTracksValue) {
  EXPECT_EQ(Size("z"), std::nullopt);
  Set("z", Pattern(3, 1));
  EXPECT_EQ(Size("z"), 3u);
  Set("z", Pattern(300000, 1));
  EXPECT_EQ(Size("z"), 300000u);
  ASSERT_TRUE(store_->Erase("z").ok());
  EXPECT_EQ(Size("z"), std::nullopt);
}

TEST_P(StoreValuesConformanceTest, EraseExistingAndMissing) {
  Set("a/b/c", Pattern(10, 1));
  Set("a/b/d", Pattern(10, 2));
  ASSERT_TRUE(store_->Erase("a/b/c").ok());
  EXPECT_EQ(Get("a/b/c"), std::nullopt);
  EXPECT_EQ(Size("a/b/c"), std::nullopt);
  EXPECT_EQ(Get("a/b/d"), Pattern(10, 2));
  EXPECT_EQ(List(""), std::vector<std::string>{"a/b/d"});
  EXPECT_TRUE(store_->Erase("a/b/c").ok());      // already gone
  EXPECT_TRUE(store_->Erase("never/set").ok());  // never existed
  ASSERT_TRUE(store_->Erase("a/b/d").ok());
  EXPECT_TRUE(List("").empty());
  Set("a/b/d", Pattern(4, 3));  // the key can be written again after its directory emptied
  EXPECT_EQ(Get("a/b/d"), Pattern(4, 3));
}

TEST_P(StoreValuesConformanceTest, DirectoriesAreNotKeys) {
  Set("a/b", Pattern(8, 1));
  EXPECT_EQ(Get("a"), std::nullopt);
  EXPECT_EQ(Size("a"), std::nullopt);
  EXPECT_EQ(GetRange("a", 0, 0), std::nullopt);
  EXPECT_TRUE(store_->Erase("a").ok());
  EXPECT_EQ(Get("a/b"), Pattern(8, 1));
}

TEST_P(StoreValuesConformanceTest, ListIsSortedAndFiltersByStringPrefix) {
  // A file store cannot hold both "c/1/0" and "c/1/0/x.y", so only the latter is used.
  for (const std::string key : {"zarr.json", "c/0/1", "c/0/0", "c/10/0", "c/1/0/x.y", "c/1/1", "ca",
                                "b/zarr.json", "b/c/0"}) {
    Set(key, BytesOf(key));
  }
  EXPECT_EQ(List(""), (std::vector<std::string>{"b/c/0", "b/zarr.json", "c/0/0", "c/0/1", "c/1/0/x.y",
                                                "c/1/1", "c/10/0", "ca", "zarr.json"}));
  EXPECT_EQ(List("c"), (std::vector<std::string>{"c/0/0", "c/0/1", "c/1/0/x.y", "c/1/1", "c/10/0", "ca"}));
  EXPECT_EQ(List("c/"), (std::vector<std::string>{"c/0/0", "c/0/1", "c/1/0/x.y", "c/1/1", "c/10/0"}));
  EXPECT_EQ(List("c/1"), (std::vector<std::string>{"c/1/0/x.y", "c/1/1", "c/10/0"}));
  EXPECT_EQ(List("c/1/"), (std::vector<std::string>{"c/1/0/x.y", "c/1/1"}));
  EXPECT_EQ(List("b/"), (std::vector<std::string>{"b/c/0", "b/zarr.json"}));
  EXPECT_EQ(List("zarr.json"), std::vector<std::string>{"zarr.json"});
  EXPECT_EQ(List("zarr.json/"), std::vector<std::string>{});  // a value is not a directory
  EXPECT_EQ(List("nothing"), std::vector<std::string>{});
  EXPECT_EQ(List("no/such/dir/"), std::vector<std::string>{});
}

TEST_P(StoreValuesConformanceTest, InvalidKeysAreRejected) {
  for (const std::string& key : {std::string(""), std::string("/abs"), std::string("a/"), std::string("a//b"),
                                std::string(".."), std::string("."), std::string("../escape"),
                                std::string("a/../b"), std::string("a/./b"), std::string("a/.."),
                                std::string("nul\0byte", 8)}) {
    SCOPED_TRACE("key \"" + key + "\"");
    // Every call names the key it refuses.
    const std::string named = key.empty() ? "store key is empty" : "store key \"" + key + "\"";
    EXPECT_ERROR(store_->Get(key), ErrorKind::kInvalidArgument, named);
    EXPECT_ERROR(store_->GetRange(key, 0, 0), ErrorKind::kInvalidArgument, named);
    EXPECT_ERROR(store_->GetSuffix(key, 0), ErrorKind::kInvalidArgument, named);
    EXPECT_ERROR(store_->Size(key), ErrorKind::kInvalidArgument, named);
    EXPECT_ERROR(store_->Set(key, AsView("x")), ErrorKind::kInvalidArgument, named);
    EXPECT_ERROR(store_->Erase(key), ErrorKind::kInvalidArgument, named);
    EXPECT_ERROR(store_->OpenWritableFile(key), ErrorKind::kInvalidArgument, named);
  }
  for (const std::string prefix : {"/abs", "a//", "../", "a/../", "./"}) {
    EXPECT_ERROR(store_->List(prefix), ErrorKind::kInvalidArgument, "store key prefix \"" + prefix + "\"") << prefix;
  }
  EXPECT_TRUE(List("").empty());  // nothing was written, in particular not outside the root
}

TEST_P(StoreValuesConformanceTest, UnusualButValidKeys) {
  for (const std::string key : {".zattrs", "a..b", "a/.hidden", "c/0.1", "with space", "dots.../x"}) {
    Set(key, BytesOf(key));
  }
  EXPECT_EQ(List(""), (std::vector<std::string>{".zattrs", "a..b", "a/.hidden", "c/0.1", "dots.../x", "with space"}));
  EXPECT_EQ(Get("a..b"), BytesOf("a..b"));
  EXPECT_EQ(Get("dots.../x"), BytesOf("dots.../x"));
  EXPECT_EQ(List("."), std::vector<std::string>{".zattrs"});
}

// Writers replace one key with values that each have a distinct length and a uniform byte
// derived from that length; readers check every value they see is whole and self-consistent.
TEST_P(StoreValuesConformanceTest, ConcurrentWritersAndReadersNeverSeeTornValues) {
  constexpr int kWriters = 4, kReaders = 4, kValuesPerWriter = 40;
  constexpr size_t kMinBytes = 64 * 1024, kStepBytes = 997;
  auto length_of = [&](int id) { return kMinBytes + static_cast<size_t>(id) * kStepBytes; };
  auto byte_of = [](size_t length) { return static_cast<uint8_t>((length / kStepBytes) * 37 + 11); };
  auto value_of = [&](int id) { return Bytes(length_of(id), byte_of(length_of(id))); };
  Set("shared/key", value_of(0));

  std::atomic<bool> done{false};
  std::atomic<int> failures{0}, reads{0};
  std::mutex first_failure_mu;
  std::string first_failure;
  auto fail = [&](const std::string& what) {
    if (failures.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> lock(first_failure_mu);
      first_failure = what;
    }
  };
  auto check_value = [&](const Result<std::optional<Bytes>>& r, bool whole, const char* op) {
    if (!r.ok()) return fail(std::string(op) + ": " + r.status().ToString());
    if (!r.value()) return fail(std::string(op) + ": key vanished");
    const Bytes& v = **r;
    if (v.empty() || (whole && ((v.size() - kMinBytes) % kStepBytes != 0 || v[0] != byte_of(v.size()))))
      return fail(std::string(op) + ": inconsistent length " + std::to_string(v.size()));
    for (uint8_t b : v) {
      if (b != v[0]) return fail(std::string(op) + ": non-uniform value of length " + std::to_string(v.size()));
    }
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&] {
      while (!done.load()) {
        check_value(store_->Get("shared/key"), true, "Get");
        check_value(store_->GetRange("shared/key", 1000, kMinBytes - 1000), false, "GetRange");
        check_value(store_->GetSuffix("shared/key", kMinBytes), false, "GetSuffix");
        reads.fetch_add(3);
      }
    });
  }
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kValuesPerWriter; ++i) {
        const Bytes value = value_of(1 + w * kValuesPerWriter + i);
        // Odd writers hand the value over in pieces.
        const std::vector<ByteView> parts = {ByteView(value).first(100), ByteView(value).subspan(100, 5000),
                                             ByteView(value).subspan(5100)};
        Status st = w % 2 ? store_->SetParts("shared/key", parts) : store_->Set("shared/key", value);
        if (!st.ok()) fail("Set: " + st.ToString());
      }
    });
  }
  for (auto& t : writers) t.join();
  done.store(true);
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0) << first_failure;
  EXPECT_GT(reads.load(), 0);
  auto final_size = Size("shared/key");
  ASSERT_TRUE(final_size.has_value());
  EXPECT_EQ((*final_size - kMinBytes) % kStepBytes, 0u);
}

TEST_P(StoreValuesConformanceTest, ConcurrentWritesToDifferentKeys) {
  constexpr int kThreads = 8, kKeysPerThread = 25;
  auto key_of = [](int t, int k) {
    // Half the keys share one directory, half get their own nested directories.
    return k % 2 ? "shared/" + std::to_string(t) + "_" + std::to_string(k)
                 : "own/" + std::to_string(t) + "/" + std::to_string(k) + "/v";
  };
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kKeysPerThread; ++k) {
        if (!store_->Set(key_of(t, k), Pattern(100 + k, t * 1000 + k)).ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    for (int k = 0; k < kKeysPerThread; ++k) EXPECT_EQ(Get(key_of(t, k)), Pattern(100 + k, t * 1000 + k));
  }
  EXPECT_EQ(List("").size(), static_cast<size_t>(kThreads * kKeysPerThread));
}

// Set and Erase racing in one directory: Erase may remove a directory that a concurrent Set
// just created; Set must still succeed.
TEST_P(StoreValuesConformanceTest, ConcurrentSetAndEraseInOneDirectory) {
  constexpr int kThreads = 4, kRounds = 100;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string key = "d/e/" + std::to_string(t);
      for (int i = 0; i < kRounds; ++i) {
        if (!store_->Set(key, Pattern(50, t + i)).ok()) failures.fetch_add(1);
        auto got = store_->Get(key);
        if (!got.ok() || !got.value() || **got != Pattern(50, t + i)) failures.fetch_add(1);
        if (!store_->Erase(key).ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(List("").empty());
}

TESSERA_INSTANTIATE_FOR_ALL_STORES(StoreValuesConformanceTest);

}  // namespace
}  // namespace tessera::store_conformance
