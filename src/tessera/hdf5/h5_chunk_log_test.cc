#include "tessera/hdf5/h5_chunk_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cpp_support/status_matchers.h"
#include "tessera/hdf5/h5_structures.h"

namespace tessera::hdf5 {
namespace {

std::string OwnDir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_h5log_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

struct Chunk {
  std::vector<uint64_t> coords;
  uint64_t address;
  uint32_t bytes;
  bool operator==(const Chunk&) const = default;
};

std::vector<Chunk> ReadAll(const ChunkLog& log, std::vector<int64_t> grid, uint64_t row_limit, uint64_t shift) {
  ChunkLog::Cursor cursor = log.Read(std::move(grid), row_limit, shift);
  std::vector<Chunk> out;
  for (;;) {
    Result<const StoredChunk*> c = cursor.Next();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok() || *c == nullptr) return out;
    out.push_back({(*c)->coords, (*c)->address, (*c)->bytes});
  }
}

// Each row's last lay wins; chunks not stored and rows past the limit drop out; coordinates come
// from the row and the position in the row's grid; addresses are shifted.
TEST(Hdf5ChunkLog, ReplaysEachRowsLastLayInOrder) {
  ChunkLog l(OwnDir("lays"), "chunk log of /cam1");
  // Rows of a 2 x 2 chunk grid (positions 0..3).
  for (uint64_t p = 0; p < 4; ++p) ASSERT_TRUE(l.Append(0, p, 100 + p, 10).ok());
  for (uint64_t p = 0; p < 4; ++p) ASSERT_TRUE(l.Append(1, p, 200 + p, 20).ok());  // flushed, then again:
  for (uint64_t p = 0; p < 4; ++p) ASSERT_TRUE(l.Append(1, p, p == 2 ? kUndefinedAddress : 300 + p, 30).ok());
  for (uint64_t p = 0; p < 4; ++p) ASSERT_TRUE(l.Append(2, p, 400 + p, 40).ok());  // past the final extent
  EXPECT_EQ(l.records(), 16u);
  const std::vector<Chunk> want = {
      {{0, 0, 0}, 1100, 10}, {{0, 0, 1}, 1101, 10}, {{0, 1, 0}, 1102, 10}, {{0, 1, 1}, 1103, 10},
      {{1, 0, 0}, 1300, 30}, {{1, 0, 1}, 1301, 30}, {{1, 1, 1}, 1303, 30},
  };
  EXPECT_EQ(ReadAll(l, {2, 2}, 2, 1000), want);
  EXPECT_EQ(*l.CountLive({2, 2}, 2), 7u);
  EXPECT_EQ(*l.CountLive({2, 2}, 3), 11u);
  EXPECT_EQ(*l.CountLive({2, 2}, 0), 0u);
}

// Thousands of one-chunk rows (rank 1) cross the log's write and read blocks (the last records
// read from its buffer); every seventh row is laid out twice, every fifth is all fill value in
// its last lay.
TEST(Hdf5ChunkLog, ManyRowsAcrossBlocks) {
  ChunkLog log(OwnDir("many"), "chunk log of /t");
  std::vector<Chunk> want;
  for (uint64_t row = 0; row < 5000; ++row) {
    if (row % 7 == 0) ASSERT_TRUE(log.Append(row, 0, 1, 1).ok());
    const bool stored = row % 5 != 0;
    ASSERT_TRUE(log.Append(row, 0, stored ? row * 8 : kUndefinedAddress, 8).ok());
    if (stored) want.push_back({{row}, row * 8, 8});
  }
  EXPECT_GT(log.records(), 2 * ChunkLog::kBufferedRecords);
  EXPECT_EQ(ReadAll(log, {}, 5000, 0), want);
  EXPECT_EQ(*log.CountLive({}, 5000), want.size());
}

// A log whose directory is gone fails when it first needs its file, naming it.
TEST(Hdf5ChunkLog, AFileThatCannotBeMadeIsAnIoError) {
  const std::string dir = OwnDir("gone") + "/missing";
  ChunkLog log(dir, "chunk log of /cam2 for acq.h5");
  Status st;
  for (uint64_t row = 0; row < ChunkLog::kBufferedRecords && st.ok(); ++row) st = log.Append(row, 0, row, 1);
  EXPECT_ERROR(st, ErrorKind::kIo, "chunk log of /cam2 for acq.h5", dir);
}

}  // namespace
}  // namespace tessera::hdf5
