// The fixture of the store conformance suite (test-only; not part of the library): each case of
// store_conformance_test.cc (values, ranges, listing, keys, concurrency),
// store_writable_file_conformance_test.cc and store_conditional_conformance_test.cc runs against
// MemoryStore, a FileStore in a fresh temporary directory, a WriteBehindStore over each, and an
// S3Store under a fresh prefix of a real S3 server: the one the ctest fixture `s3` starts
// (scripts/s3_server.sh), named by TESSERA_TEST_S3 ("ENDPOINT/BUCKET", the server's test keys);
// the S3 cases skip when it is not set. "S3Multipart" sends every value above 5 MiB as a
// multipart upload of 5 MiB parts.
//
//   class MyConformanceTest : public store_conformance::StoreConformanceTest {};
//   TEST_P(MyConformanceTest, X) { Set("k", ...); EXPECT_EQ(Get("k"), ...); }
//   TESSERA_INSTANTIATE_FOR_ALL_STORES(MyConformanceTest);
#pragma once

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

namespace tessera::store_conformance {

using store_test::Pattern;
using store_test::ScopedTempDir;

inline Bytes BytesOf(const std::string& s) { return Bytes(s.begin(), s.end()); }

// WriteBehind*: a WriteBehindStore over the store named after it (writes return once queued).
enum class StoreKind { kMemory, kFile, kWriteBehindMemory, kS3, kS3Multipart, kS3WriteBehind };

inline std::string StoreKindName(const ::testing::TestParamInfo<StoreKind>& info) {
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
inline std::string FreshS3Prefix() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : name)
    if (c == '/') c = '.';
  return "conformance/" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// A small queue, so that the suite's larger values and concurrent writers also wait for room.
inline WriteBehindOptions SmallQueue() {
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

// Every store kind, named as the ctest filters expect ("*/S3*" runs with the S3 server).
#define TESSERA_INSTANTIATE_FOR_ALL_STORES(suite)                                                         \
  INSTANTIATE_TEST_SUITE_P(                                                                               \
      AllStores, suite,                                                                                   \
      ::testing::Values(::tessera::store_conformance::StoreKind::kMemory,                                 \
                        ::tessera::store_conformance::StoreKind::kFile,                                   \
                        ::tessera::store_conformance::StoreKind::kWriteBehindMemory,                      \
                        ::tessera::store_conformance::StoreKind::kS3,                                     \
                        ::tessera::store_conformance::StoreKind::kS3Multipart,                            \
                        ::tessera::store_conformance::StoreKind::kS3WriteBehind),                         \
      ::tessera::store_conformance::StoreKindName)

}  // namespace tessera::store_conformance
