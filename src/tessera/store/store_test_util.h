// Helpers shared by the store tests (test-only; not part of the library).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "tessera/core/bytes.h"
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

}  // namespace tessera::store_test
