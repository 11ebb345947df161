// Helpers shared by the store tests (test-only; not part of the library).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/store/memory_store.h"
#include "tessera/store/s3_store.h"

namespace tessera::store_test {

// A fresh directory under the test temp directory, removed with everything in it on
// destruction.
class ScopedTempDir {
 public:
  ScopedTempDir() {
    std::string templ = (std::filesystem::path(::testing::TempDir()) / "tessera_store_XXXXXX").string();
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << templ;
    path_ = buf.data();
  }
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `n` copies of `byte`.
inline Bytes Uniform(size_t n, uint8_t byte) { return Bytes(n, byte); }

// Bytes whose value at position i depends on i and `seed`, so misplaced ranges are detected.
inline Bytes Pattern(size_t n, uint32_t seed) {
  Bytes out(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = static_cast<uint8_t>(x);
  }
  return out;
}

// The S3 server the ctest fixture `s3` started (scripts/s3_server.sh): TESSERA_TEST_S3 is
// "ENDPOINT/BUCKET", and the server takes its test keys. nullopt when the variable is not set.
struct TestS3Server {
  S3Config config;
  std::string bucket;
};
inline std::optional<TestS3Server> FindTestS3Server() {
  const char* value = std::getenv("TESSERA_TEST_S3");
  if (!value || !*value) return std::nullopt;
  const std::string text = value;
  const size_t slash = text.rfind('/');
  if (slash == std::string::npos) {
    ADD_FAILURE() << "TESSERA_TEST_S3=" << text << ": expected ENDPOINT/BUCKET";
    return std::nullopt;
  }
  TestS3Server server;
  server.config.endpoint = text.substr(0, slash);
  server.config.access_key = "testkey";
  server.config.secret_key = "testsecret";
  server.bucket = text.substr(slash + 1);
  return server;
}

// A MemoryStore that counts the requests a remote store would send (reads and sizes), and says it
// waits on a network when `io_concurrency` > 0 (so readers batch their reads as on S3).
class CountingStore final : public Store {
 public:
  explicit CountingStore(int io_concurrency = 0, std::string scheme = "counted")
      : io_concurrency_(io_concurrency), scheme_(std::move(scheme)) {}
  Result<std::optional<Bytes>> Get(const std::string& key) const override {
    ++requests;
    return memory.Get(key);
  }
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override {
    ++requests;
    return memory.GetRange(key, offset, length);
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override {
    ++requests;
    return memory.GetSuffix(key, length);
  }
  Result<std::optional<SuffixRead>> GetSuffixAndSize(const std::string& key, uint64_t length) const override {
    ++requests;
    return memory.GetSuffixAndSize(key, length);
  }
  Result<std::optional<uint64_t>> Size(const std::string& key) const override {
    ++requests;
    return memory.Size(key);
  }
  int io_concurrency() const override { return io_concurrency_; }
  std::string Describe(const std::string& key) const override { return scheme_ + "://" + key; }
  Status Set(const std::string& key, ByteView value) override { return memory.Set(key, value); }
  Status Erase(const std::string& key) override { return memory.Erase(key); }
  Result<std::vector<std::string>> List(const std::string& prefix) const override { return memory.List(prefix); }

  MemoryStore memory;
  mutable std::atomic<int> requests{0};

 private:
  const int io_concurrency_;
  const std::string scheme_;
};

}  // namespace tessera::store_test
