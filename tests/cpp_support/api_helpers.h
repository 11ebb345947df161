// Helpers shared by the façade's tests (test-only; not part of the library).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
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
