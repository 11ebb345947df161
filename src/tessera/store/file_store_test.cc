// FileStore behaviour beyond the Store contract (see store_conformance_test.cc for that): the
// on-disk layout, temporary files, directory housekeeping and failure handling.
#include "tessera/store/file_store.h"
#include "tessera/store/memory_store.h"

#include <gtest/gtest.h>

#include <linux/capability.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cpp_support/status_matchers.h"
#include "cpp_support/store_helpers.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using store_test::Pattern;
using store_test::ScopedTempDir;

// Every non-directory entry below `root`, as sorted relative paths.
std::vector<std::string> AllFiles(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_directory()) out.push_back(fs::relative(e.path(), root).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Root passes permission checks through CAP_DAC_OVERRIDE (and CAP_DAC_READ_SEARCH). For its scope
// this drops both from the calling thread's effective set (Linux keeps capabilities per thread, and
// the file store does its work on the calling thread), so a read-only directory refuses root too;
// the destructor restores them. Does nothing for a user without them.
class WithoutPermissionOverride {
 public:
  WithoutPermissionOverride() {
    header_.version = _LINUX_CAPABILITY_VERSION_3;
    header_.pid = 0;
    if (::syscall(SYS_capget, &header_, saved_) != 0) return;
    __user_cap_data_struct reduced[2] = {saved_[0], saved_[1]};
    reduced[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
    dropped_ = ::syscall(SYS_capset, &header_, reduced) == 0;
  }
  ~WithoutPermissionOverride() {
    if (dropped_) (void)::syscall(SYS_capset, &header_, saved_);
  }
  WithoutPermissionOverride(const WithoutPermissionOverride&) = delete;
  WithoutPermissionOverride& operator=(const WithoutPermissionOverride&) = delete;
  bool dropped() const { return dropped_; }

 private:
  __user_cap_header_struct header_{};
  __user_cap_data_struct saved_[2]{};
  bool dropped_ = false;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class FileStoreTest : public ::testing::Test {
 protected:
  FileStoreTest() : root_(dir_.path() + "/root"), store_(root_) {}

  ScopedTempDir dir_;
  std::string root_;
  FileStore store_;
};

TEST_F(FileStoreTest, KeyMapsToPathUnderRoot) {
  ASSERT_TRUE(store_.Set("a/b/c", AsView("hello")).ok());
  EXPECT_EQ(store_.Describe("a/b/c"), root_ + "/a/b/c");
  EXPECT_EQ(ReadFile(root_ + "/a/b/c"), "hello");
  // A file written by another tool is a key too.
  std::ofstream(root_ + "/a/external", std::ios::binary) << "xyz";
  EXPECT_EQ(*store_.List(""), (std::vector<std::string>{"a/b/c", "a/external"}));
  EXPECT_EQ(AsString(**store_.Get("a/external")), "xyz");
}

TEST_F(FileStoreTest, RootTrailingSlashIsIgnored) {
  FileStore slashed(root_ + "//");
  EXPECT_EQ(slashed.root(), root_);
  EXPECT_EQ(slashed.Describe("k"), root_ + "/k");
}

TEST_F(FileStoreTest, NoTemporaryFilesRemainAfterSet) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(store_.Set("c/" + std::to_string(i % 5), Pattern(1000 + i, i)).ok());
  }
  ASSERT_TRUE(store_.Set("zarr.json", AsView("{}")).ok());
  EXPECT_EQ(AllFiles(root_), (std::vector<std::string>{"c/0", "c/1", "c/2", "c/3", "c/4", "zarr.json"}));
}

TEST_F(FileStoreTest, CreatesNestedDirectoriesAndMissingRoot) {
  FileStore deep(root_ + "/not/yet/there");
  ASSERT_TRUE(deep.Set("x/y/z/w/v", AsView("v")).ok());
  EXPECT_TRUE(fs::is_directory(root_ + "/not/yet/there/x/y/z/w"));
  EXPECT_EQ(ReadFile(root_ + "/not/yet/there/x/y/z/w/v"), "v");
}

TEST_F(FileStoreTest, EraseRemovesEmptyParentsButNotRoot) {
  ASSERT_TRUE(store_.Set("a/b/c/d", AsView("1")).ok());
  ASSERT_TRUE(store_.Set("a/x", AsView("2")).ok());
  ASSERT_TRUE(store_.Erase("a/b/c/d").ok());
  EXPECT_FALSE(fs::exists(root_ + "/a/b"));
  EXPECT_TRUE(fs::is_directory(root_ + "/a"));  // still holds a/x
  ASSERT_TRUE(store_.Erase("a/x").ok());
  EXPECT_FALSE(fs::exists(root_ + "/a"));
  EXPECT_TRUE(fs::is_directory(root_));
  ASSERT_TRUE(store_.Set("top", AsView("3")).ok());
  ASSERT_TRUE(store_.Erase("top").ok());
  EXPECT_TRUE(fs::is_directory(root_));
}

TEST_F(FileStoreTest, SetUnderRegularFileFailsAndKeepsThatFile) {
  ASSERT_TRUE(store_.Set("a", AsView("old")).ok());
  Status st = store_.Set("a/b", AsView("new"));
  EXPECT_ERROR(st, ErrorKind::kIo, root_ + "/a/b", "Not a directory");
  EXPECT_EQ(AsString(**store_.Get("a")), "old");
  EXPECT_EQ(*store_.Get("a/b"), std::nullopt);  // ENOTDIR reads as missing
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{"a"});
}

TEST_F(FileStoreTest, SetOverDirectoryFailsAndKeepsItsKeys) {
  ASSERT_TRUE(store_.Set("a/b", AsView("inner")).ok());
  Status st = store_.Set("a", AsView("new"));
  EXPECT_ERROR(st, ErrorKind::kIo, root_ + "/a", "directory");
  EXPECT_EQ(AsString(**store_.Get("a/b")), "inner");
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{"a/b"});
}

TEST_F(FileStoreTest, SetOnReadOnlyDirectoryFailsAndKeepsOldValue) {
  ASSERT_TRUE(store_.Set("ro/k", AsView("old")).ok());
  ASSERT_EQ(::chmod((root_ + "/ro").c_str(), 0555), 0);
  Status st;
  {
    WithoutPermissionOverride as_a_user;  // as root (CI), the directory's mode binds only without these
    if (::geteuid() == 0) ASSERT_TRUE(as_a_user.dropped()) << "capset: " << std::strerror(errno);
    st = store_.Set("ro/k", AsView("new"));
  }
  ::chmod((root_ + "/ro").c_str(), 0755);
  EXPECT_ERROR(st, ErrorKind::kIo, root_ + "/ro/k", "Permission denied");
  EXPECT_EQ(AsString(**store_.Get("ro/k")), "old");
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{"ro/k"});
}

// A write that fails part-way (here: the file size limit, which binds root too) leaves the
// old value intact and removes the temporary file.
TEST_F(FileStoreTest, FailedWriteKeepsOldValueAndRemovesTemporaryFile) {
  ASSERT_TRUE(store_.Set("k", AsView("old")).ok());
  rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 64 * 1024;
  struct sigaction ignore {}, old_action {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);  // write() fails with EFBIG instead
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Status st = store_.Set("k", Pattern(1 << 20, 1));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::sigaction(SIGXFSZ, &old_action, nullptr);
  EXPECT_ERROR(st, ErrorKind::kIo, root_ + "/k", "write", "File too large");
  EXPECT_EQ(AsString(**store_.Get("k")), "old");
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{"k"});
}

TEST_F(FileStoreTest, TemporaryFilesAreNeverListedAndTheirNamesAreReserved) {
  ASSERT_TRUE(store_.Set("c/0", AsView("v")).ok());
  std::ofstream(root_ + "/c/.0.tmp.12345.7") << "partial";  // as left by a crashed writer
  std::ofstream(root_ + "/.zarr.json.tmp.1.0") << "partial";
  EXPECT_EQ(*store_.List(""), std::vector<std::string>{"c/0"});
  EXPECT_ERROR(store_.Set("c/.0.tmp.1.2", AsView("x")), ErrorKind::kInvalidArgument, "\"c/.0.tmp.1.2\"",
               "reserved for the file store's temporary files");
  EXPECT_ERROR(store_.Get(".zarr.json.tmp.1.0"), ErrorKind::kInvalidArgument, "\".zarr.json.tmp.1.0\"",
               "reserved for the file store's temporary files");

  EXPECT_TRUE(FileStore::IsTemporaryFileName(".a.tmp.1.2"));
  EXPECT_TRUE(FileStore::IsTemporaryFileName("..zattrs.tmp.4242.0"));
  EXPECT_FALSE(FileStore::IsTemporaryFileName("a.tmp.1.2"));   // no leading dot
  EXPECT_FALSE(FileStore::IsTemporaryFileName(".a.tmp.1."));   // no counter
  EXPECT_FALSE(FileStore::IsTemporaryFileName(".a.tmp.x.2"));  // pid not numeric
  EXPECT_FALSE(FileStore::IsTemporaryFileName("..tmp.1.2"));   // no name
  EXPECT_FALSE(FileStore::IsTemporaryFileName(".zattrs"));
}

TEST_F(FileStoreTest, LongKeyNamesStillGetATemporaryFile) {
  const std::string name(250, 'n');  // the temporary name must stay within NAME_MAX
  ASSERT_TRUE(store_.Set("d/" + name, AsView("v")).ok());
  EXPECT_EQ(*store_.List("d/"), std::vector<std::string>{"d/" + name});
}

TEST_F(FileStoreTest, NonRegularFileIsAnIoErrorNamingThePath) {
  ASSERT_TRUE(store_.Set("x", AsView("v")).ok());
  ASSERT_EQ(::mkfifo((root_ + "/fifo").c_str(), 0644), 0);
  EXPECT_ERROR(store_.Get("fifo"), ErrorKind::kIo, root_ + "/fifo", "not a regular file");
  EXPECT_ERROR(store_.Size("fifo"), ErrorKind::kIo, root_ + "/fifo", "not a regular file");
}

TEST_F(FileStoreTest, OpenCreatesOrRejectsTheRoot) {
  auto missing = FileStore::Open(dir_.path() + "/missing", false);
  EXPECT_ERROR(missing, ErrorKind::kNotFound, dir_.path() + "/missing", "does not exist");
  EXPECT_FALSE(fs::exists(dir_.path() + "/missing"));

  auto created = FileStore::Open(dir_.path() + "/made/here", true);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_TRUE(fs::is_directory(dir_.path() + "/made/here"));
  EXPECT_TRUE((*created)->Set("k", AsView("v")).ok());

  auto existing = FileStore::Open(dir_.path() + "/made/here", false);
  ASSERT_TRUE(existing.ok());
  EXPECT_EQ(AsString(**(*existing)->Get("k")), "v");

  std::ofstream(dir_.path() + "/plain") << "x";
  EXPECT_ERROR(FileStore::Open(dir_.path() + "/plain", true), ErrorKind::kIo, dir_.path() + "/plain",
               "not a directory");
  EXPECT_ERROR(FileStore::Open("", true), ErrorKind::kInvalidArgument, "root path is empty");
}

TEST_F(FileStoreTest, FsyncOptionWritesTheSameValues) {
  FileStoreOptions options;
  options.fsync = true;
  FileStore durable(root_ + "/durable", options);
  EXPECT_TRUE(durable.options().fsync);
  ASSERT_TRUE(durable.Set("a/b/c", Pattern(4096, 3)).ok());
  ASSERT_TRUE(durable.Set("a/b/c", Pattern(100, 4)).ok());
  ASSERT_TRUE(durable.Set("top", AsView("t")).ok());
  EXPECT_EQ(**durable.Get("a/b/c"), Pattern(100, 4));
  EXPECT_EQ(AllFiles(root_ + "/durable"), (std::vector<std::string>{"a/b/c", "top"}));
}

// A writable file is a hidden temporary file beside its target (so the rename at Commit is atomic,
// and a crash leaves only a stray temporary file), created with the target's missing directories.
TEST_F(FileStoreTest, WritableFileIsATemporaryFileBesideTheTarget) {
  ASSERT_TRUE(store_.Set("out/volume.h5", AsView("previous")).ok());
  auto file = store_.OpenWritableFile("out/volume.h5");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->Describe(), root_ + "/out/volume.h5");
  ASSERT_TRUE((*file)->WriteAt(3, AsView("def")).ok());
  ASSERT_TRUE((*file)->WriteAt(0, AsView("abc")).ok());
  const std::vector<std::string> during = AllFiles(root_);
  ASSERT_EQ(during.size(), 2u);
  const std::string temp = during[0] == "out/volume.h5" ? during[1] : during[0];
  EXPECT_EQ(temp.rfind("out/.volume.h5.tmp.", 0), 0u) << temp;
  EXPECT_TRUE(FileStore::IsTemporaryFileName(fs::path(temp).filename().string())) << temp;
  EXPECT_EQ(ReadFile(root_ + "/" + temp), "abcdef");
  EXPECT_EQ(ReadFile(root_ + "/out/volume.h5"), "previous");
  EXPECT_EQ(*store_.List(""), std::vector<std::string>{"out/volume.h5"});
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(ReadFile(root_ + "/out/volume.h5"), "abcdef");
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{"out/volume.h5"});

  auto nested = store_.OpenWritableFile("new/dirs/f");
  ASSERT_TRUE(nested.ok()) << nested.status().ToString();
  ASSERT_TRUE((*nested)->Commit().ok());
  EXPECT_EQ(AllFiles(root_), (std::vector<std::string>{"new/dirs/f", "out/volume.h5"}));
  EXPECT_ERROR(store_.OpenWritableFile("out/.volume.h5.tmp.1.2"), ErrorKind::kInvalidArgument,
               "reserved for the file store's temporary files");
}

// An in-place file (a stream's shard, written chunk by chunk) is the same hidden temporary file,
// published whole at Commit; abandoning it leaves the old value and no file. A memory store would
// only stage the bytes: it does not write in place.
TEST_F(FileStoreTest, InPlaceFileIsPublishedWholeAtCommit) {
  ASSERT_TRUE(store_.Set("c/0/0", AsView("old")).ok());
  auto file = store_.OpenInPlaceFile("c/0/0");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_NE(*file, nullptr);
  ASSERT_TRUE((*file)->WriteAt(0, AsView("chunk")).ok());
  ASSERT_TRUE((*file)->WriteAt(5, AsView("index")).ok());
  EXPECT_EQ(ReadFile(root_ + "/c/0/0"), "old");
  EXPECT_EQ(*store_.List(""), std::vector<std::string>{"c/0/0"});
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(ReadFile(root_ + "/c/0/0"), "chunkindex");
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{"c/0/0"});

  auto abandoned = store_.OpenInPlaceFile("c/0/1");
  ASSERT_TRUE(abandoned.ok()) << abandoned.status().ToString();
  ASSERT_TRUE((*abandoned)->WriteAt(0, AsView("never")).ok());
  abandoned->reset();
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{"c/0/0"});

  EXPECT_TRUE(store_.writes_in_place());
  EXPECT_FALSE(MemoryStore().writes_in_place());
}

// A Commit that cannot rename (a directory holds the target's name) fails naming the path, leaves
// the directory's keys and removes the temporary file.
TEST_F(FileStoreTest, WritableFileFailedCommitLeavesTheKeyAndNoTemporaryFile) {
  ASSERT_TRUE(store_.Set("a/b", AsView("inner")).ok());
  auto file = store_.OpenWritableFile("a");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->WriteAt(0, AsView("new")).ok());
  EXPECT_ERROR((*file)->Commit(), ErrorKind::kIo, root_ + "/a", "cannot rename");
  EXPECT_EQ(AsString(**store_.Get("a/b")), "inner");
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{"a/b"});
  EXPECT_ERROR((*file)->Commit(), ErrorKind::kFailedPrecondition, root_ + "/a");
}

// A write that fails (the file size limit, which binds root too) is kIo naming the target's path
// and the byte range; abandoning then leaves the old value and no temporary file.
TEST_F(FileStoreTest, WritableFileFailedWriteNamesThePathAndRange) {
  ASSERT_TRUE(store_.Set("k", AsView("old")).ok());
  auto file = store_.OpenWritableFile("k");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 64 * 1024;
  struct sigaction ignore {}, old_action {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);  // write() fails with EFBIG instead
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Status st = (*file)->WriteAt(100 * 1024, Pattern(1000, 1));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::sigaction(SIGXFSZ, &old_action, nullptr);
  EXPECT_ERROR(st, ErrorKind::kIo, root_ + "/k", "bytes [102400, 103400)", "write failed", "File too large");
  (*file)->Abandon();
  EXPECT_EQ(AsString(**store_.Get("k")), "old");
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{"k"});
}

TEST_F(FileStoreTest, WritableFileWithFsyncOption) {
  FileStoreOptions options;
  options.fsync = true;
  FileStore durable(root_ + "/durable", options);
  auto file = durable.OpenWritableFile("a/b/c");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->WriteAt(0, Pattern(4096, 3)).ok());
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(**durable.Get("a/b/c"), Pattern(4096, 3));
  EXPECT_EQ(AllFiles(root_ + "/durable"), std::vector<std::string>{"a/b/c"});
}

// One read-modify-write increment of the decimal counter `key`, retried until its conditional
// write wins. False on an error (reported on stderr: the caller may be a forked child).
bool IncrementCounter(FileStore& store, const std::string& key) {
  for (;;) {
    Result<std::optional<VersionedValue>> read = store.GetVersioned(key);
    if (!read.ok()) {
      std::fprintf(stderr, "%s\n", read.status().ToString().c_str());
      return false;
    }
    const int64_t count = *read ? std::stoll(std::string((*read)->bytes.begin(), (*read)->bytes.end())) : 0;
    const std::string next = std::to_string(count + 1);
    const ByteView parts[] = {AsView(next)};
    const WriteCondition condition{*read ? std::optional<std::string>((*read)->generation) : std::nullopt};
    Result<bool> stored = store.SetPartsIf(key, parts, condition);
    if (!stored.ok()) {
      std::fprintf(stderr, "%s\n", stored.status().ToString().c_str());
      return false;
    }
    if (*stored) return true;
  }
}

// The directory lock works across processes: forked writers, each with its own FileStore on the
// same root, increment one counter with retries, and no increment is lost.
TEST_F(FileStoreTest, ConditionalIncrementsFromManyProcessesLoseNone) {
  constexpr int kProcesses = 4, kIncrements = 60;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << std::strerror(errno);
    if (pid == 0) {  // the child: no gtest assertions, only an exit status
      FileStore own(root_);
      for (int i = 0; i < kIncrements; ++i) {
        if (!IncrementCounter(own, "shared/counter")) ::_exit(2);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid << " status " << status;
  }
  EXPECT_EQ(AsString(**store_.Get("shared/counter")), std::to_string(kProcesses * kIncrements));
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{"shared/counter"});  // no temporary file left
}

// EraseIf of a directory's last key removes the directory, under its lock, while conditional
// writers of other keys in it wait for that lock or hold a temporary file in it: none of them
// fails or loses its write.
TEST_F(FileStoreTest, ConditionalWritesWhileEraseIfEmptiesTheDirectory) {
  constexpr int kThreads = 4, kRounds = 150;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string key = "d/e/k" + std::to_string(t);
      for (int round = 0; round < kRounds && errors[t].empty(); ++round) {
        const std::string value = std::to_string(round);
        const ByteView parts[] = {AsView(value)};
        Result<bool> created = store_.SetPartsIf(key, parts, WriteCondition{std::nullopt});
        if (!created.ok() || !*created) {
          errors[t] = "create " + key + ": " + (created.ok() ? "refused" : created.status().ToString());
          break;
        }
        Result<std::optional<VersionedValue>> read = store_.GetVersioned(key);
        if (!read.ok() || !*read || AsString((*read)->bytes) != value) {
          errors[t] = "read " + key + ": " + (read.ok() ? "wrong value" : read.status().ToString());
          break;
        }
        Result<bool> erased = store_.EraseIf(key, WriteCondition{(*read)->generation});
        if (!erased.ok() || !*erased) errors[t] = "erase " + key + ": " + (erased.ok() ? "refused" : erased.status().ToString());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors, std::vector<std::string>(kThreads));
  EXPECT_EQ(AllFiles(root_), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(root_ + "/d"));  // the last EraseIf removed the emptied directories
}

// Readers are never blocked by the lock, and a value read with GetVersioned is one file's bytes
// and generation.
TEST_F(FileStoreTest, GenerationIsTheFilesIdentity) {
  ASSERT_TRUE(store_.Set("k", AsView("same")).ok());
  Result<std::optional<VersionedValue>> first = store_.GetVersioned("k");
  ASSERT_TRUE(first.ok() && *first);
  Result<std::optional<VersionedValue>> again = store_.GetVersioned("k");
  ASSERT_TRUE(again.ok() && *again);
  EXPECT_EQ((*again)->generation, (*first)->generation);  // unchanged file: same generation
  ASSERT_TRUE(store_.Set("k", AsView("same")).ok());        // the same bytes, rewritten
  Result<std::optional<VersionedValue>> rewritten = store_.GetVersioned("k");
  ASSERT_TRUE(rewritten.ok() && *rewritten);
  EXPECT_NE((*rewritten)->generation, (*first)->generation);
  const std::string text = "new";  // the view below must not outlive it
  const ByteView parts[] = {AsView(text)};
  Result<bool> stale = store_.SetPartsIf("k", parts, WriteCondition{(*first)->generation});
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(*stale);
  EXPECT_EQ(AsString(**store_.Get("k")), "same");
}

}  // namespace
}  // namespace tessera
