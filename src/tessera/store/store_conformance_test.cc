// One conformance suite for every Store: each case runs against MemoryStore, a FileStore in a
// fresh temporary directory, and an S3Store under a fresh prefix of a real S3 server: the one
// the ctest fixture `s3` starts (scripts/s3_server.sh), named by TESSERA_TEST_S3 ("ENDPOINT/BUCKET",
// the server's test keys); the S3 cases skip when it is not set. "S3Multipart" sends every value above
// 5 MiB as a multipart upload of 5 MiB parts.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cpp_support/status_matchers.h"
#include "tessera/store/file_store.h"
#include "tessera/store/memory_store.h"
#include "tessera/store/s3_store.h"
#include "cpp_support/store_helpers.h"
#include "tessera/store/writable_file.h"
#include "tessera/store/write_behind_store.h"

namespace tessera {
namespace {

using store_test::Pattern;
using store_test::ScopedTempDir;

Bytes BytesOf(const std::string& s) { return Bytes(s.begin(), s.end()); }

// WriteBehind*: a WriteBehindStore over the store named after it (writes return once queued).
enum class StoreKind { kMemory, kFile, kWriteBehindMemory, kS3, kS3Multipart, kS3WriteBehind };

std::string StoreKindName(const ::testing::TestParamInfo<StoreKind>& info) {
  switch (info.param) {
    case StoreKind::kMemory: return "Memory";
    case StoreKind::kFile: return "File";
    case StoreKind::kS3: return "S3";
    case StoreKind::kS3Multipart: return "S3Multipart";
    case StoreKind::kWriteBehindMemory: return "WriteBehindMemory";
    case StoreKind::kS3WriteBehind: return "S3WriteBehind";
  }
  return "?";
}

// A prefix no other test (or earlier run) uses: the test's name, the process and a counter.
std::string FreshS3Prefix() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : name)
    if (c == '/') c = '.';
  return "conformance/" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// A small queue, so that the suite's larger values and concurrent writers also wait for room.
WriteBehindOptions SmallQueue() {
  WriteBehindOptions o;
  o.uploads = 4;
  o.max_queued_bytes = 1 << 20;
  return o;
}

// Points TMPDIR, where a store's default writable file stages its bytes, at a fresh directory while
// it lives, so that a test can see the staging go.
class ScopedStagingDir {
 public:
  ScopedStagingDir() {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    ::setenv("TMPDIR", dir_.path().c_str(), 1);
  }
  ~ScopedStagingDir() {
    if (old_) {
      ::setenv("TMPDIR", old_->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }
  ScopedStagingDir(const ScopedStagingDir&) = delete;
  ScopedStagingDir& operator=(const ScopedStagingDir&) = delete;

  // What is in the directory (a staging directory left behind).
  std::vector<std::string> Entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path())) out.push_back(e.path().string());
    return out;
  }

 private:
  ScopedTempDir dir_;
  std::optional<std::string> old_;
};

class StoreConformanceTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    if (GetParam() == StoreKind::kMemory) {
      store_ = std::make_shared<MemoryStore>();
    } else if (GetParam() == StoreKind::kWriteBehindMemory) {
      store_ = std::make_shared<WriteBehindStore>(std::make_shared<MemoryStore>(), SmallQueue());
    } else if (GetParam() == StoreKind::kFile) {
      temp_dir_ = std::make_unique<ScopedTempDir>();
      store_ = std::make_shared<FileStore>(temp_dir_->path() + "/store");
    } else {
      std::optional<store_test::TestS3Server> server = store_test::FindTestS3Server();
      if (!server) GTEST_SKIP() << "no S3 server: TESSERA_TEST_S3 is not set (the ctest fixture s3 starts one)";
      S3Config config = server->config;
      if (GetParam() == StoreKind::kS3Multipart)
        config.multipart_threshold = config.part_size = config.conditional_multipart_threshold = 5u << 20;
      auto s3 = std::make_shared<S3Store>(server->bucket, FreshS3Prefix(), config);
      s3_ = s3.get();
      if (GetParam() == StoreKind::kS3WriteBehind) {
        store_ = std::make_shared<WriteBehindStore>(std::move(s3), SmallQueue());
      } else {
        store_ = std::move(s3);
      }
    }
  }

  // An S3 test leaves no incomplete multipart upload and no object behind.
  void TearDown() override {
    if (store_) EXPECT_TRUE(store_->Flush().ok());
    if (!s3_) return;
    auto uploads = s3_->ListIncompleteUploads();
    ASSERT_TRUE(uploads.ok()) << uploads.status().ToString();
    EXPECT_TRUE(uploads->empty()) << uploads->size() << " incomplete multipart uploads, the first " << (*uploads)[0];
    auto keys = s3_->List("");
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    for (const std::string& key : *keys) EXPECT_TRUE(s3_->Erase(key).ok()) << key;
  }

  // The value of `key`; fails the test (and returns nullopt) on an error.
  std::optional<Bytes> Get(const std::string& key) {
    auto r = store_->Get(key);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::nullopt;
  }
  std::optional<Bytes> GetRange(const std::string& key, uint64_t offset, uint64_t length) {
    auto r = store_->GetRange(key, offset, length);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::nullopt;
  }
  std::optional<Bytes> GetSuffix(const std::string& key, uint64_t length) {
    auto r = store_->GetSuffix(key, length);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::nullopt;
  }
  std::optional<uint64_t> Size(const std::string& key) {
    auto r = store_->Size(key);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::nullopt;
  }
  std::vector<std::string> List(const std::string& prefix) {
    auto r = store_->List(prefix);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<std::string>{};
  }
  void Set(const std::string& key, const Bytes& value) {
    Status st = store_->Set(key, value);
    EXPECT_TRUE(st.ok()) << key << ": " << st.ToString();
  }
  // A writable file of `key`; fails the test (and returns null) on an error.
  std::unique_ptr<WritableFile> OpenWritableFile(const std::string& key) {
    auto r = store_->OpenWritableFile(key);
    EXPECT_TRUE(r.ok()) << key << ": " << r.status().ToString();
    return r.ok() ? std::move(*r) : nullptr;
  }
  // The regular files below a FileStore's root (temporary ones included), as keys, sorted.
  std::vector<std::string> FilesOnDisk() const {
    std::vector<std::string> out;
    const std::filesystem::path root = temp_dir_->path() + "/store";
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file()) out.push_back(std::filesystem::relative(it->path(), root).string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // The store holds exactly `keys`, and nothing of a writable file is left: no staging directory
  // under TMPDIR, no temporary file beside a file store's values.
  void ExpectOnly(const std::vector<std::string>& keys, const ScopedStagingDir& staging) {
    EXPECT_EQ(List(""), keys);
    EXPECT_EQ(staging.Entries(), std::vector<std::string>{});
    if (GetParam() == StoreKind::kFile) EXPECT_EQ(FilesOnDisk(), keys);
  }

  std::unique_ptr<ScopedTempDir> temp_dir_;  // FileStore only; outlives store_
  std::shared_ptr<Store> store_;
  S3Store* s3_ = nullptr;  // store_, when it is an S3 store
};

TEST_P(StoreConformanceTest, MissingKeyIsNulloptEverywhere) {
  EXPECT_EQ(Get("absent"), std::nullopt);
  EXPECT_EQ(GetRange("absent", 0, 0), std::nullopt);
  EXPECT_EQ(GetRange("absent", 5, 10), std::nullopt);
  EXPECT_EQ(GetSuffix("absent", 3), std::nullopt);
  EXPECT_EQ(Size("absent"), std::nullopt);
  EXPECT_EQ(Get("no/such/nested/key"), std::nullopt);
  EXPECT_TRUE(List("").empty());
}

TEST_P(StoreConformanceTest, SetGetRoundTrip) {
  const Bytes top = Pattern(37, 1), nested = Pattern(1000, 2);
  Set("zarr.json", top);
  Set("group/array/c/0/0", nested);
  EXPECT_EQ(Get("zarr.json"), top);
  EXPECT_EQ(Get("group/array/c/0/0"), nested);
  EXPECT_EQ(Size("zarr.json"), 37u);
  EXPECT_EQ(Size("group/array/c/0/0"), 1000u);
  EXPECT_EQ(Get("group/array/c/0"), std::nullopt);
}

TEST_P(StoreConformanceTest, OverwriteReplacesWholeValue) {
  Set("k", Pattern(5000, 1));
  Set("k", Pattern(10, 2));
  EXPECT_EQ(Get("k"), Pattern(10, 2));
  EXPECT_EQ(Size("k"), 10u);
  Set("k", Pattern(7000, 3));
  EXPECT_EQ(Get("k"), Pattern(7000, 3));
  EXPECT_EQ(List(""), std::vector<std::string>{"k"});
}

TEST_P(StoreConformanceTest, SetPartsStoresTheConcatenation) {
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

TEST_P(StoreConformanceTest, EmptyValueIsPresent) {
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

TEST_P(StoreConformanceTest, LargeValue) {
  const size_t n = (6u << 20) + 12345;  // several MiB, not a multiple of any buffer size
  const Bytes value = Pattern(n, 9);
  Set("big/value", value);
  EXPECT_EQ(Size("big/value"), n);
  EXPECT_EQ(Get("big/value"), value);
  const uint64_t offset = (3u << 20) - 7, length = (2u << 20) + 11;
  EXPECT_EQ(GetRange("big/value", offset, length), Bytes(value.begin() + offset, value.begin() + offset + length));
  EXPECT_EQ(GetSuffix("big/value", 1u << 20), Bytes(value.end() - (1u << 20), value.end()));
}

TEST_P(StoreConformanceTest, GetRangeInsideAndAtEdges) {
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

TEST_P(StoreConformanceTest, GetRangePastEndIsOutOfRangeNamingKeyRangeAndSize) {
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

TEST_P(StoreConformanceTest, GetSuffix) {
  const Bytes v = Pattern(64, 6);
  Set("s", v);
  EXPECT_EQ(GetSuffix("s", 0), Bytes{});
  EXPECT_EQ(GetSuffix("s", 1), Bytes(v.end() - 1, v.end()));
  EXPECT_EQ(GetSuffix("s", 16), Bytes(v.end() - 16, v.end()));
  EXPECT_EQ(GetSuffix("s", 64), v);  // the whole value
  EXPECT_ERROR(store_->GetSuffix("s", 65), ErrorKind::kOutOfRange, store_->Describe("s"), "the last 65 bytes",
               "64 bytes");
}

TEST_P(StoreConformanceTest, SizeTracksValue) {
  EXPECT_EQ(Size("z"), std::nullopt);
  Set("z", Pattern(3, 1));
  EXPECT_EQ(Size("z"), 3u);
  Set("z", Pattern(300000, 1));
  EXPECT_EQ(Size("z"), 300000u);
  ASSERT_TRUE(store_->Erase("z").ok());
  EXPECT_EQ(Size("z"), std::nullopt);
}

TEST_P(StoreConformanceTest, EraseExistingAndMissing) {
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

TEST_P(StoreConformanceTest, DirectoriesAreNotKeys) {
  Set("a/b", Pattern(8, 1));
  EXPECT_EQ(Get("a"), std::nullopt);
  EXPECT_EQ(Size("a"), std::nullopt);
  EXPECT_EQ(GetRange("a", 0, 0), std::nullopt);
  EXPECT_TRUE(store_->Erase("a").ok());
  EXPECT_EQ(Get("a/b"), Pattern(8, 1));
}

TEST_P(StoreConformanceTest, ListIsSortedAndFiltersByStringPrefix) {
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

TEST_P(StoreConformanceTest, InvalidKeysAreRejected) {
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

TEST_P(StoreConformanceTest, UnusualButValidKeys) {
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
TEST_P(StoreConformanceTest, ConcurrentWritersAndReadersNeverSeeTornValues) {
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

TEST_P(StoreConformanceTest, ConcurrentWritesToDifferentKeys) {
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
TEST_P(StoreConformanceTest, ConcurrentSetAndEraseInOneDirectory) {
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

// Writable files (writable_file.h): written at offsets in any order, invisible until Commit, then
// the whole value at once.

TEST_P(StoreConformanceTest, WritableFileWrittenOutOfOrderReadsBackEqual) {
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

TEST_P(StoreConformanceTest, WritableFileAbandonedLeavesNothing) {
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

TEST_P(StoreConformanceTest, WritableFileReplacesAnExistingValueOnlyAtCommit) {
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

TEST_P(StoreConformanceTest, WritableFileGapsReadAsZerosAndTruncateSetsTheSize) {
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
TEST_P(StoreConformanceTest, WritableFileCommitIsOrderedWithSetsOfItsKey) {
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

TEST_P(StoreConformanceTest, ConditionalGetVersionedOfAMissingKeyIsNullopt) {
  Result<std::optional<VersionedValue>> r = store_->GetVersioned("absent");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->has_value());
  Set("present", BytesOf("v"));
  std::optional<VersionedValue> v = GetVersioned(*store_, "present");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->bytes, BytesOf("v"));
  EXPECT_FALSE(v->generation.empty());
}

TEST_P(StoreConformanceTest, ConditionalSetIfAbsentSucceedsOnceThenFails) {
  // A nested key whose directories do not exist yet (file store: created as by Set).
  EXPECT_TRUE(SetIf(*store_, "new/deep/k", BytesOf("first"), std::nullopt));
  EXPECT_EQ(Get("new/deep/k"), BytesOf("first"));
  EXPECT_FALSE(SetIf(*store_, "new/deep/k", BytesOf("second"), std::nullopt));
  EXPECT_EQ(Get("new/deep/k"), BytesOf("first"));
  EXPECT_EQ(List(""), std::vector<std::string>{"new/deep/k"});
  if (GetParam() == StoreKind::kFile) EXPECT_EQ(FilesOnDisk(), std::vector<std::string>{"new/deep/k"});  // no temporary file left
}

TEST_P(StoreConformanceTest, ConditionalStaleGenerationFailsAndWritesNothing) {
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

TEST_P(StoreConformanceTest, ConditionalCurrentGenerationSucceedsAndChangesTheGeneration) {
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

TEST_P(StoreConformanceTest, ConditionalLargeValue) {
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

TEST_P(StoreConformanceTest, ConditionalEraseIf) {
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
TEST_P(StoreConformanceTest, ConditionalWritesAreOrderedAfterEarlierWrites) {
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
TEST_P(StoreConformanceTest, ConditionalIncrementsFromManyThreadsLoseNone) {
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

INSTANTIATE_TEST_SUITE_P(AllStores, StoreConformanceTest,
                         ::testing::Values(StoreKind::kMemory, StoreKind::kFile, StoreKind::kWriteBehindMemory,
                                           StoreKind::kS3, StoreKind::kS3Multipart, StoreKind::kS3WriteBehind),
                         StoreKindName);

}  // namespace
}  // namespace tessera
