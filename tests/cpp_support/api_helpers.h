// Helpers shared by the façade's tests (test-only; not part of the library).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/spec/array_spec.h"

namespace tessera::api_test {

// A uint16 array spec: shape (shape[0] = 0: unbounded), chunk shape, chunks per shard (empty: unsharded).
inline ArraySpec Uint16(std::vector<int64_t> shape, std::vector<int64_t> chunks, std::vector<int64_t> shards = {}) {
  ArraySpec s;
  s.dtype = DataType::kUInt16;
  s.shape = std::move(shape);
  s.chunk_shape = std::move(chunks);
  s.shard_chunks = std::move(shards);
  return s;
}

// Every file under `dir` (relative path) and its bytes.
inline std::map<std::string, std::string> Files(const std::filesystem::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream f(e.path(), std::ios::binary);
    out[std::filesystem::relative(e.path(), dir).string()] = std::string(std::istreambuf_iterator<char>(f), {});
  }
  return out;
}

// The keys whose bytes differ between two Files maps, or that only one has.
inline std::vector<std::string> Differing(const std::map<std::string, std::string>& a,
                                          const std::map<std::string, std::string>& b) {
  std::vector<std::string> out;
  for (const auto& [k, v] : a)
    if (!b.count(k) || b.at(k) != v) out.push_back(k);
  for (const auto& [k, v] : b)
    if (!a.count(k)) out.push_back(k + " (only in the second)");
  return out;
}

// A test whose files go in a fresh directory of its own (named after the test and the process),
// removed after it: Path("a.zarr").
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

}  // namespace tessera::api_test
