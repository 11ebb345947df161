#include "tessera/hdf5/h5_spill_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "cpp_support/status_matchers.h"
#include "tessera/store/memory_store.h"

namespace tessera::hdf5 {
namespace {

std::string OwnDir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_h5spill_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Chunks written from several threads at the addresses they allocated land, at CopyInto, at the
// same offsets after the file's own address; the spill has no name in its directory.
TEST(Hdf5SpillFile, CopiesWhatThreadsWroteIntoTheFile) {
  const std::string dir = OwnDir("copy");
  auto spill = SpillFile::Create(dir, "spill of /cam2");
  ASSERT_TRUE(spill.ok()) << spill.status().ToString();
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  // More than one copy block, in pieces of odd sizes.
  constexpr int kThreads = 4, kPiecesPerThread = 40;
  constexpr size_t kPieceBytes = 70001;
  std::vector<std::thread> threads;
  std::vector<std::vector<std::pair<uint64_t, uint8_t>>> placed(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPiecesPerThread; ++i) {
        const uint8_t value = static_cast<uint8_t>(t * kPiecesPerThread + i);
        const uint64_t address = (*spill)->Allocate(kPieceBytes);
        EXPECT_TRUE((*spill)->WriteAt(address, Bytes(kPieceBytes, value)).ok());
        placed[t].push_back({address, value});
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const uint64_t size = (*spill)->size();
  ASSERT_EQ(size, kThreads * kPiecesPerThread * kPieceBytes);
  ASSERT_GT(size, SpillFile::kCopyBlockBytes);

  MemoryStore memory;
  auto target = memory.OpenWritableFile("acq.h5");
  ASSERT_TRUE(target.ok());
  auto file = H5Writer::Create(std::move(*target));
  ASSERT_TRUE(file.ok());
  const uint64_t base = (*file)->Allocate(size);
  ASSERT_TRUE((*spill)->CopyInto(**file, base).ok());
  ASSERT_TRUE((*file)->Close().ok());
  const Bytes written = **memory.Get("acq.h5");
  ASSERT_GE(written.size(), base + size);
  for (const auto& pieces : placed)
    for (const auto& [address, value] : pieces) {
      const uint8_t* p = written.data() + base + address;
      ASSERT_EQ(p[0], value);
      ASSERT_EQ(p[kPieceBytes - 1], value);
    }

  // Released, the spill reads back as nothing.
  (*spill)->Release();
  MemoryStore after;
  auto again_target = after.OpenWritableFile("again.h5");
  ASSERT_TRUE(again_target.ok());
  auto again = H5Writer::Create(std::move(*again_target));
  ASSERT_TRUE(again.ok());
  EXPECT_ERROR((*spill)->CopyInto(**again, (*again)->Allocate(size)), ErrorKind::kIo, "spill of /cam2",
               "the spill ends early");
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(Hdf5SpillFile, MissingDirectoryIsAnIoErrorNamingIt) {
  const std::string dir = OwnDir("missing") + "/no/such";
  EXPECT_ERROR(SpillFile::Create(dir, "spill of /cam2 for acq.h5"), ErrorKind::kIo, "spill of /cam2 for acq.h5", dir,
               "No such file or directory");
}

}  // namespace
}  // namespace tessera::hdf5
