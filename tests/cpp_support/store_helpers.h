// Helpers shared by the store tests (test-only; not part of the library).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <tuple>
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

// One read request a store received: which call, which key, and which bytes of the value it asked
// for, resolved against the value's size: [0, size) for Get, [size - n, size) for the suffix calls,
// [offset, offset + length) for GetRange, nothing for Size. `found`: the key existed.
struct StoreRequest {
  enum class Op { kGet, kGetRange, kGetSuffix, kGetSuffixAndSize, kSize };
  Op op = Op::kGet;
  std::string key;
  uint64_t begin = 0, end = 0;
  bool found = false;

  auto Tie() const { return std::tie(key, begin, end, op, found); }
  bool operator==(const StoreRequest& o) const { return Tie() == o.Tie(); }
  bool operator<(const StoreRequest& o) const { return Tie() < o.Tie(); }
};

inline const char* OpName(StoreRequest::Op op) {
  switch (op) {
    case StoreRequest::Op::kGet: return "Get";
    case StoreRequest::Op::kGetRange: return "GetRange";
    case StoreRequest::Op::kGetSuffix: return "GetSuffix";
    case StoreRequest::Op::kGetSuffixAndSize: return "GetSuffixAndSize";
    case StoreRequest::Op::kSize: return "Size";
  }
  return "?";
}

// "GetRange c/0/1 [100, 200)" (gtest prints requests with this).
inline std::ostream& operator<<(std::ostream& os, const StoreRequest& r) {
  os << OpName(r.op) << " " << r.key;
  if (r.op != StoreRequest::Op::kSize) os << " [" << r.begin << ", " << r.end << ")";
  if (!r.found) os << " (missing)";
  return os;
}

// A MemoryStore that counts and records the requests a remote store would send (reads and sizes),
// and says it waits on a network when `io_concurrency` > 0 (so readers batch their reads as on S3).
// Writes, erases and listings are neither counted nor recorded.
class CountingStore final : public Store {
 public:
  explicit CountingStore(int io_concurrency = 0, std::string scheme = "counted")
      : io_concurrency_(io_concurrency), scheme_(std::move(scheme)) {}
  Result<std::optional<Bytes>> Get(const std::string& key) const override {
    Result<std::optional<Bytes>> r = memory.Get(key);
    const bool found = r.ok() && r->has_value();
    Record(StoreRequest::Op::kGet, key, 0, found ? (*r)->size() : 0, found);
    return r;
  }
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override {
    Result<std::optional<Bytes>> r = memory.GetRange(key, offset, length);
    Record(StoreRequest::Op::kGetRange, key, offset, offset + length, r.ok() && r->has_value());
    return r;
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override {
    const uint64_t size = SizeOf(key);
    Result<std::optional<Bytes>> r = memory.GetSuffix(key, length);
    Record(StoreRequest::Op::kGetSuffix, key, size - std::min(size, length), size, r.ok() && r->has_value());
    return r;
  }
  Result<std::optional<SuffixRead>> GetSuffixAndSize(const std::string& key, uint64_t length) const override {
    const uint64_t size = SizeOf(key);
    Result<std::optional<SuffixRead>> r = memory.GetSuffixAndSize(key, length);
    Record(StoreRequest::Op::kGetSuffixAndSize, key, size - std::min(size, length), size, r.ok() && r->has_value());
    return r;
  }
  Result<std::optional<uint64_t>> Size(const std::string& key) const override {
    Result<std::optional<uint64_t>> r = memory.Size(key);
    Record(StoreRequest::Op::kSize, key, 0, 0, r.ok() && r->has_value());
    return r;
  }
  int io_concurrency() const override { return io_concurrency_; }
  std::string Describe(const std::string& key) const override { return scheme_ + "://" + key; }
  Status Set(const std::string& key, ByteView value) override { return memory.Set(key, value); }
  Status Erase(const std::string& key) override { return memory.Erase(key); }
  Result<std::vector<std::string>> List(const std::string& prefix) const override { return memory.List(prefix); }

  // The requests recorded since construction or the last ClearRequests, sorted (concurrent
  // readers send them in no particular order).
  std::vector<StoreRequest> SortedRequests() const {
    std::lock_guard<std::mutex> lock(log_mu_);
    std::vector<StoreRequest> out = log_;
    std::sort(out.begin(), out.end());
    return out;
  }
  // Forgets the recorded requests and resets the count.
  void ClearRequests() {
    std::lock_guard<std::mutex> lock(log_mu_);
    log_.clear();
    requests = 0;
  }

  MemoryStore memory;
  mutable std::atomic<int> requests{0};

 private:
  uint64_t SizeOf(const std::string& key) const {
    Result<std::optional<uint64_t>> size = memory.Size(key);
    return size.ok() && size->has_value() ? **size : 0;
  }
  void Record(StoreRequest::Op op, const std::string& key, uint64_t begin, uint64_t end, bool found) const {
    ++requests;
    std::lock_guard<std::mutex> lock(log_mu_);
    log_.push_back(StoreRequest{op, key, begin, end, found});
  }

  const int io_concurrency_;
  const std::string scheme_;
  mutable std::mutex log_mu_;
  mutable std::vector<StoreRequest> log_;
};

}  // namespace tessera::store_test
