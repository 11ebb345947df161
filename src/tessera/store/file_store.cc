#include "tessera/store/file_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/fs.h>  // FS_IOC_GETVERSION
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <functional>
#include <system_error>
#include <utility>

#include "tessera/store/key_validation.h"
#include "tessera/store/posix_io.h"

namespace tessera {
namespace {

using posix_io::ErrnoText;
using posix_io::kMaxIoChunkBytes;

// How often Set retries creating its temporary file when a concurrent Erase removed the
// freshly created directory, or a stray file already has the name (and EraseIf locking a directory
// that a concurrent Erase removed). Each retry means another thread made progress, so the bound is
// only reached under pathological contention.
constexpr int kMaxTempFileAttempts = 64;
// The temporary file name keeps at most this many bytes of the target name, so that it stays
// within NAME_MAX (255) for any target name.
constexpr size_t kMaxTempStemBytes = 128;

std::atomic<uint64_t> temp_file_counter{0};

Status OsError(const std::string& path, const char* operation, int err) {
  return IoError(path + ": " + operation + ": " + ErrnoText(err));
}

// Owns a file descriptor; the destructor closes it (ignoring errors) unless Close() did.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ScopedFd& operator=(ScopedFd&&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes and reports the error close() returns (some file systems report write errors late).
  Status Close(const std::string& path) {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0 && errno != EINTR) return OsError(path, "close", errno);
    return Status::Ok();
  }

 private:
  int fd_;
};

bool IsMissing(int err) { return err == ENOENT || err == ENOTDIR; }

// A value file opened for reading, with its size and status at open time.
struct OpenValue {
  ScopedFd fd;
  uint64_t size_bytes;
  struct stat st;
};

// Opens `path` for reading. nullopt when there is no file there (or only a directory).
Result<std::optional<OpenValue>> OpenForRead(const std::string& path) {
  int fd;
  do {
    // O_NONBLOCK only matters for FIFOs, which would otherwise block the open.
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (IsMissing(errno)) return std::optional<OpenValue>();
    return OsError(path, "open", errno);
  }
  ScopedFd owned(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return OsError(path, "fstat", errno);
  if (S_ISDIR(st.st_mode)) return std::optional<OpenValue>();
  if (!S_ISREG(st.st_mode)) return IoError(path + ": not a regular file");
  return std::optional<OpenValue>(OpenValue{std::move(owned), static_cast<uint64_t>(st.st_size), st});
}

// The generation of the open value file: its inode number, size and modification time, and, where
// the file system keeps one (ext4, btrfs, ...), the inode's generation number, which changes when an
// inode number is reused. Every write stores a new file (temporary file + rename), so a rewrite
// gives a new inode even when the size and time (coarse on some file systems) come out the same.
std::string GenerationOf(const OpenValue& file) {
  const struct stat& st = file.st;
  std::string generation = std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
                           std::to_string(int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec);
#if defined(FS_IOC_GETVERSION)
  // Declared long, as the ioctl's number says; file systems store an int in it (the rest stays 0).
  long inode_generation = 0;
  if (::ioctl(file.fd.get(), FS_IOC_GETVERSION, &inode_generation) == 0)
    generation += ":" + std::to_string(inode_generation);
#endif
  return generation;
}

// The generation of the value at `path`, or nullopt when there is none.
Result<std::optional<std::string>> CurrentGeneration(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<OpenValue> file, OpenForRead(path));
  if (!file) return std::optional<std::string>();
  return std::optional<std::string>(GenerationOf(*file));
}

// An exclusive flock of a directory, held while the object lives: the lock conditional writes of
// the keys in that directory take (see file_store.h). Each Acquire opens its own descriptor, so
// threads of one process exclude each other as processes do.
class DirectoryLock {
 public:
  // Locks `dir`, waiting for the holder. nullopt when `dir` does not exist (or is no longer the
  // directory at that path once locked: an Erase removed it meanwhile, so the caller looks again).
  static Result<std::optional<DirectoryLock>> Acquire(const std::string& dir) {
    int fd;
    do {
      fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      if (IsMissing(errno)) return std::optional<DirectoryLock>();
      return OsError(dir, "open directory to lock it", errno);
    }
    ScopedFd owned(fd);
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) return OsError(dir, "flock (lock for a conditional write)", errno);
    }
    struct stat locked, now;
    if (::fstat(fd, &locked) != 0) return OsError(dir, "fstat", errno);
    if (::stat(dir.c_str(), &now) != 0) {
      if (IsMissing(errno)) return std::optional<DirectoryLock>();
      return OsError(dir, "stat", errno);
    }
    if (locked.st_ino != now.st_ino || locked.st_dev != now.st_dev) return std::optional<DirectoryLock>();
    return std::optional<DirectoryLock>(DirectoryLock(std::move(owned)));
  }

 private:
  explicit DirectoryLock(ScopedFd fd) : fd_(std::move(fd)) {}
  ScopedFd fd_;  // closing it releases the lock
};

// Whether a value with generation `current` (nullopt: none) is what `condition` expects.
bool Matches(const std::optional<std::string>& current, const WriteCondition& condition) {
  return current == condition.generation;
}

// The directory of file `path`.
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Reads exactly out.size() bytes at `offset`, retrying short reads and EINTR.
Status ReadAt(int fd, const std::string& path, uint64_t offset, MutableByteView out) {
  size_t done = 0;
  while (done < out.size()) {
    const size_t want = std::min(out.size() - done, kMaxIoChunkBytes);
    const ssize_t got = ::pread(fd, out.data() + done, want, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return OsError(path, "read", errno);
    }
    if (got == 0) {
      return IoError(path + ": file ended at byte " + std::to_string(offset + done) + " while reading " +
                     ByteRangeText(offset, offset + out.size()) + " (truncated by another program?)");
    }
    done += static_cast<size_t>(got);
  }
  return Status::Ok();
}

Result<std::optional<Bytes>> ReadValueRange(const OpenValue& file, const std::string& path,
                                            uint64_t offset, uint64_t length) {
  Bytes out(static_cast<size_t>(length));
  TESSERA_RETURN_IF_ERROR(ReadAt(file.fd.get(), path, offset, out));
  return std::optional<Bytes>(std::move(out));
}

// Writes the concatenation of `parts`, retrying short writes and EINTR. Uses writev so that a
// value given in many pieces (a shard and its chunks) costs few system calls and no copy.
Status WriteAll(int fd, const std::string& path, std::span<const ByteView> parts) {
  std::vector<iovec> iov;
  iov.reserve(parts.size());
  for (ByteView p : parts) {
    if (!p.empty()) iov.push_back(iovec{const_cast<uint8_t*>(p.data()), p.size()});
  }
  size_t first = 0;  // iov[first..] is still to be written; iov[first] may be partly written
  while (first < iov.size()) {
    const int count = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
    const ssize_t put = ::writev(fd, iov.data() + first, count);
    if (put < 0) {
      if (errno == EINTR) continue;
      return OsError(path, "write", errno);
    }
    for (size_t left = static_cast<size_t>(put); left > 0;) {
      iovec& v = iov[first];
      if (left < v.iov_len) {
        v.iov_base = static_cast<uint8_t*>(v.iov_base) + left;
        v.iov_len -= left;
        break;
      }
      left -= v.iov_len;
      ++first;
    }
  }
  return Status::Ok();
}

Status SyncFd(int fd, const std::string& path) {
  while (::fsync(fd) != 0) {
    if (errno != EINTR) return OsError(path, "fsync", errno);
  }
  return Status::Ok();
}

Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return OsError(dir, "open directory", errno);
  ScopedFd owned(fd);
  TESSERA_RETURN_IF_ERROR(SyncFd(fd, dir));
  return owned.Close(dir);
}

// Creates directory `dir` and its missing parents, deepest first so that the common case (only
// the last level missing) is one mkdir. An existing entry of any type counts as created: if it is
// not a directory, creating a file inside it fails with ENOTDIR. Returns 0 or an errno value.
int MakeDirectories(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0777) == 0 || errno == EEXIST) return 0;
  if (errno != ENOENT) return errno;
  const size_t slash = dir.rfind('/');
  if (slash == std::string::npos || slash == 0) return ENOENT;
  if (const int err = MakeDirectories(dir.substr(0, slash)); err != 0) return err;
  if (::mkdir(dir.c_str(), 0777) == 0 || errno == EEXIST) return 0;
  return errno;
}

std::string TempFileName(std::string_view name) {
  return "." + std::string(name.substr(0, kMaxTempStemBytes)) + ".tmp." + std::to_string(::getpid()) +
         "." + std::to_string(temp_file_counter.fetch_add(1, std::memory_order_relaxed));
}

// Removes trailing ASCII digits; false if there were none.
bool StripDigits(std::string_view* s) {
  size_t n = s->size();
  while (n > 0 && (*s)[n - 1] >= '0' && (*s)[n - 1] <= '9') --n;
  if (n == s->size()) return false;
  s->remove_suffix(s->size() - n);
  return true;
}

// Creates the temporary file for `path` in its directory, creating the directory when missing. Sets
// `*created_dirs` when it created directories.
Result<std::pair<ScopedFd, std::string>> CreateTempFile(const std::string& path, bool* created_dirs) {
  const std::string dir = DirectoryOf(path);
  const std::string_view name = std::string_view(path).substr(path.rfind('/') + 1);
  int last_err = 0;
  for (int attempt = 0; attempt < kMaxTempFileAttempts; ++attempt) {
    std::string temp = dir + "/" + TempFileName(name);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return std::make_pair(ScopedFd(fd), std::move(temp));
    last_err = errno;
    if (last_err == EINTR || last_err == EEXIST) continue;
    if (last_err != ENOENT) break;
    // The directory is missing (or a concurrent Erase just removed it): create it and retry.
    // ENOENT from MakeDirectories means an Erase removed a parent again; that is retried too.
    const int err = MakeDirectories(dir);
    if (err != 0 && err != ENOENT) return IoError(path + ": create directory " + dir + ": " + ErrnoText(err));
    *created_dirs = true;
  }
  return IoError(path + ": create temporary file in " + dir + ": " + ErrnoText(last_err));
}

// A FileStore's writable file: a temporary file beside the target, renamed over it at Commit.
class FileStoreWritableFile final : public WritableFile {
 public:
  // `sync`: fsync the file before the rename. `after_rename`, when set, runs once the file is in
  // place (the directory fsyncs).
  FileStoreWritableFile(std::string path, std::string temp_path, ScopedFd fd, bool sync,
                        std::function<Status()> after_rename)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(std::move(fd)), sync_(sync),
        after_rename_(std::move(after_rename)) {}
  ~FileStoreWritableFile() override { Abandon(); }

  Status WriteAt(uint64_t offset, ByteView bytes) override {
    if (state_ != State::kOpen) return FailedPrecondition(path_ + ": write after Commit or Abandon");
    const std::string failed = posix_io::PwriteAll(fd_.get(), offset, bytes);
    if (!failed.empty())
      return IoError(path_ + ": " + ByteRangeText(offset, offset + bytes.size()) + ": write failed: " + failed);
    return Status::Ok();
  }

  Status Truncate(uint64_t size) override {
    if (state_ != State::kOpen) return FailedPrecondition(path_ + ": truncate after Commit or Abandon");
    while (::ftruncate(fd_.get(), static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return OsError(path_, "ftruncate", errno);
    }
    return Status::Ok();
  }

  Status Commit() override {
    if (state_ != State::kOpen) return FailedPrecondition(path_ + ": Commit after Commit or Abandon");
    // Durable before visible: after a power loss the target holds the old file or the whole new one.
    Status st = sync_ ? SyncFd(fd_.get(), path_) : Status::Ok();
    if (st.ok()) st = fd_.Close(path_);
    if (st.ok() && ::rename(temp_path_.c_str(), path_.c_str()) != 0) {
      st = IoError(path_ + ": cannot rename " + temp_path_ + " into place: " + ErrnoText(errno));
    }
    if (!st.ok()) {
      Abandon();
      return st;
    }
    state_ = State::kCommitted;
    return after_rename_ ? after_rename_() : Status::Ok();
  }

  void Abandon() override {
    if (state_ != State::kOpen) return;
    state_ = State::kAbandoned;
    if (fd_.get() >= 0) static_cast<void>(fd_.Close(temp_path_));
    ::unlink(temp_path_.c_str());  // best effort: a stray temporary file is harmless
  }

  std::string Describe() const override { return path_; }

 private:
  enum class State { kOpen, kCommitted, kAbandoned };

  const std::string path_;
  const std::string temp_path_;
  ScopedFd fd_;
  const bool sync_;
  const std::function<Status()> after_rename_;
  State state_ = State::kOpen;
};

// Appends to `keys` the key of every regular file below directory `dir` (whose key prefix is
// `dir_key`, "" or ending in '/') that starts with `prefix`. A directory that vanishes while
// being walked (a concurrent Erase) counts as empty.
Status ListDirectory(const std::string& dir, const std::string& dir_key, const std::string& prefix,
                     std::vector<std::string>* keys) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (IsMissing(errno)) return Status::Ok();
    return OsError(dir, "open directory", errno);
  }
  struct DirCloser {
    DIR* d;
    ~DirCloser() { ::closedir(d); }
  } closer{d};
  while (true) {
    errno = 0;
    const dirent* entry = ::readdir(d);
    if (entry == nullptr) {
      if (errno != 0) return OsError(dir, "read directory", errno);
      return Status::Ok();
    }
    const std::string_view name(entry->d_name);
    if (name == "." || name == "..") continue;
    std::string key = dir_key + std::string(name);
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string path = dir + "/" + std::string(name);
    bool is_dir = entry->d_type == DT_DIR;
    bool is_file = entry->d_type == DT_REG;
    if (entry->d_type == DT_UNKNOWN || entry->d_type == DT_LNK) {
      // Follow links to files (Get reads through them) but not links to directories.
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) {
        if (IsMissing(errno)) continue;
        return OsError(path, "lstat", errno);
      }
      is_dir = S_ISDIR(st.st_mode);
      if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &st) != 0) continue;  // dangling link
      is_file = S_ISREG(st.st_mode);
    }
    if (is_dir) {
      TESSERA_RETURN_IF_ERROR(ListDirectory(path, key + "/", prefix, keys));
    } else if (is_file && !FileStore::IsTemporaryFileName(name)) {
      keys->push_back(std::move(key));
    }
  }
}

}  // namespace

Result<std::unique_ptr<FileStore>> FileStore::Open(const std::string& root, bool create,
                                                   FileStoreOptions options) {
  if (root.empty()) return InvalidArgument("file store root path is empty");
  struct stat st;
  if (::stat(root.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return IoError(root + ": file store root is not a directory");
  } else if (errno != ENOENT) {
    return OsError(root, "stat", errno);
  } else if (!create) {
    return NotFound(root + ": file store root directory does not exist");
  } else {
    if (const int err = MakeDirectories(root); err != 0) return OsError(root, "create directory", err);
  }
  return std::make_unique<FileStore>(root, options);
}

FileStore::FileStore(std::string root, FileStoreOptions options)
    : root_(std::move(root)), options_(options) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

bool FileStore::IsTemporaryFileName(std::string_view file_name) {
  std::string_view s = file_name;
  if (!StripDigits(&s) || s.empty() || s.back() != '.') return false;
  s.remove_suffix(1);
  if (!StripDigits(&s)) return false;
  constexpr std::string_view kTag = ".tmp.";
  if (s.size() < kTag.size() + 2 || s.substr(s.size() - kTag.size()) != kTag) return false;
  return s.front() == '.';
}

std::string FileStore::Describe(const std::string& key) const { return root_ + "/" + key; }

Result<std::string> FileStore::PathFor(const std::string& key) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  const size_t slash = key.rfind('/');
  const std::string_view name = std::string_view(key).substr(slash == std::string::npos ? 0 : slash + 1);
  if (IsTemporaryFileName(name)) {
    return InvalidArgument("store key \"" + key + "\" has a name reserved for the file store's temporary files");
  }
  return Describe(key);
}

Result<std::optional<Bytes>> FileStore::Get(const std::string& key) const {
  TESSERA_ASSIGN_OR_RETURN(const std::string path, PathFor(key));
  TESSERA_ASSIGN_OR_RETURN(std::optional<OpenValue> file, OpenForRead(path));
  if (!file) return std::optional<Bytes>();
  return ReadValueRange(*file, path, 0, file->size_bytes);
}

Result<std::optional<Bytes>> FileStore::GetRange(const std::string& key, uint64_t offset,
                                                 uint64_t length) const {
  TESSERA_ASSIGN_OR_RETURN(const std::string path, PathFor(key));
  TESSERA_ASSIGN_OR_RETURN(std::optional<OpenValue> file, OpenForRead(path));
  if (!file) return std::optional<Bytes>();
  TESSERA_RETURN_IF_ERROR(CheckByteRange(path, offset, length, file->size_bytes));
  return ReadValueRange(*file, path, offset, length);
}

Result<std::optional<Bytes>> FileStore::GetSuffix(const std::string& key, uint64_t length) const {
  TESSERA_ASSIGN_OR_RETURN(const std::string path, PathFor(key));
  TESSERA_ASSIGN_OR_RETURN(std::optional<OpenValue> file, OpenForRead(path));
  if (!file) return std::optional<Bytes>();
  TESSERA_RETURN_IF_ERROR(CheckSuffixLength(path, length, file->size_bytes));
  return ReadValueRange(*file, path, file->size_bytes - length, length);
}

Result<std::optional<uint64_t>> FileStore::Size(const std::string& key) const {
  TESSERA_ASSIGN_OR_RETURN(const std::string path, PathFor(key));
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (IsMissing(errno)) return std::optional<uint64_t>();
    return OsError(path, "stat", errno);
  }
  if (S_ISDIR(st.st_mode)) return std::optional<uint64_t>();
  if (!S_ISREG(st.st_mode)) return IoError(path + ": not a regular file");
  return std::optional<uint64_t>(static_cast<uint64_t>(st.st_size));
}

Status FileStore::Set(const std::string& key, ByteView value) {
  return SetParts(key, std::span<const ByteView>(&value, 1));
}

Result<FileStore::TempFile> FileStore::WriteTempFile(const std::string& path, std::span<const ByteView> parts) const {
  bool created_dirs = false;
  TESSERA_ASSIGN_OR_RETURN(auto temp, CreateTempFile(path, &created_dirs));
  auto& [fd, temp_path] = temp;
  Status st = WriteAll(fd.get(), temp_path, parts);
  if (st.ok() && options_.fsync) st = SyncFd(fd.get(), temp_path);
  if (st.ok()) st = fd.Close(temp_path);
  if (!st.ok()) {  // name the file being stored, not just its temporary name
    ::unlink(temp_path.c_str());  // best effort; the error that matters is `st`
    uint64_t bytes = 0;
    for (ByteView p : parts) bytes += p.size();
    return st.WithContext(path + ": storing " + std::to_string(bytes) + " bytes");
  }
  return TempFile{std::move(temp_path), created_dirs};
}

Status FileStore::RenameIntoPlace(const std::string& key, const std::string& path, const TempFile& temp) const {
  if (::rename(temp.path.c_str(), path.c_str()) != 0) {
    const Status st = OsError(path, "rename", errno);
    ::unlink(temp.path.c_str());  // best effort; the error that matters is `st`
    return st;
  }
  if (options_.fsync) return SyncDirectories(key, temp.created_dirs);
  return Status::Ok();
}

Status FileStore::SetParts(const std::string& key, std::span<const ByteView> parts) {
  TESSERA_ASSIGN_OR_RETURN(const std::string path, PathFor(key));
  TESSERA_ASSIGN_OR_RETURN(const TempFile temp, WriteTempFile(path, parts));
  return RenameIntoPlace(key, path, temp);
}

Result<std::optional<VersionedValue>> FileStore::GetVersioned(const std::string& key) const {
  TESSERA_ASSIGN_OR_RETURN(const std::string path, PathFor(key));
  TESSERA_ASSIGN_OR_RETURN(std::optional<OpenValue> file, OpenForRead(path));
  if (!file) return std::optional<VersionedValue>();
  // The bytes and the generation of one file (one descriptor), whatever replaces it meanwhile.
  VersionedValue value{Bytes(static_cast<size_t>(file->size_bytes)), GenerationOf(*file)};
  TESSERA_RETURN_IF_ERROR(ReadAt(file->fd.get(), path, 0, value.bytes));
  return std::optional<VersionedValue>(std::move(value));
}

Result<bool> FileStore::SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                                   const WriteCondition& condition) {
  TESSERA_ASSIGN_OR_RETURN(const std::string path, PathFor(key));
  // The slow part, writing the value, happens before the lock. The temporary file also keeps the
  // directory from being removed (by an Erase of its last key) until the rename.
  TESSERA_ASSIGN_OR_RETURN(const TempFile temp, WriteTempFile(path, parts));
  const auto discard_temp = [&] { ::unlink(temp.path.c_str()); };  // best effort
  const auto discard = [&](Status st) {  // the error that matters is `st`
    discard_temp();
    return st;
  };
  const std::string dir = DirectoryOf(path);
  Result<std::optional<DirectoryLock>> lock = DirectoryLock::Acquire(dir);
  if (!lock.ok()) return discard(lock.status());
  if (!*lock) return discard(IoError(path + ": directory " + dir + " vanished while it held the temporary file " + temp.path));
  Result<std::optional<std::string>> current = CurrentGeneration(path);
  if (!current.ok()) return discard(current.status());
  if (!Matches(*current, condition)) {
    discard_temp();
    // Directories made for a value that was not stored go too (under the lock, as in EraseIf).
    if (temp.created_dirs) RemoveEmptyParents(key);
    return false;
  }
  TESSERA_RETURN_IF_ERROR(RenameIntoPlace(key, path, temp));
  return true;
}

Result<bool> FileStore::EraseIf(const std::string& key, const WriteCondition& condition) {
  TESSERA_ASSIGN_OR_RETURN(const std::string path, PathFor(key));
  const std::string dir = DirectoryOf(path);
  for (int attempt = 1;; ++attempt) {
    TESSERA_ASSIGN_OR_RETURN(std::optional<DirectoryLock> lock, DirectoryLock::Acquire(dir));
    if (!lock) {
      // No directory: no value. Unless a concurrent Erase removed the directory just after we
      // opened it and a Set made it again: then look again (each time, another writer made progress).
      struct stat st;
      if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        if (attempt < kMaxTempFileAttempts) continue;
        return IoError(path + ": directory " + dir + " kept being removed and created again while locking it");
      }
      return !condition.generation.has_value();
    }
    TESSERA_ASSIGN_OR_RETURN(const std::optional<std::string> current, CurrentGeneration(path));
    if (!Matches(current, condition)) return false;
    if (!current) return true;  // expected missing, and missing
    if (::unlink(path.c_str()) != 0) return OsError(path, "unlink", errno);
    // Under the lock: a conditional writer waiting for it finds the directory gone and looks
    // again; one whose temporary file is in the directory keeps it from being removed.
    RemoveEmptyParents(key);
    return true;
  }
}

Result<std::unique_ptr<WritableFile>> FileStore::OpenWritableFile(const std::string& key) {
  return OpenTemporaryFile(key, /*sync=*/true);
}

Result<std::unique_ptr<WritableFile>> FileStore::OpenInPlaceFile(const std::string& key) {
  return OpenTemporaryFile(key, /*sync=*/options_.fsync);
}

Result<std::unique_ptr<WritableFile>> FileStore::OpenTemporaryFile(const std::string& key, bool sync) {
  TESSERA_ASSIGN_OR_RETURN(const std::string path, PathFor(key));
  bool created_dirs = false;
  TESSERA_ASSIGN_OR_RETURN(auto temp, CreateTempFile(path, &created_dirs));
  std::function<Status()> sync_directories;
  if (options_.fsync) {
    sync_directories = [this, key, created_dirs] { return SyncDirectories(key, created_dirs); };
  }
  return std::unique_ptr<WritableFile>(new FileStoreWritableFile(path, std::move(temp.second), std::move(temp.first),
                                                                 sync, std::move(sync_directories)));
}

Status FileStore::SyncDirectories(const std::string& key, bool up_to_root) const {
  for (size_t slash = key.rfind('/'); slash != std::string::npos; slash = key.rfind('/', slash - 1)) {
    TESSERA_RETURN_IF_ERROR(SyncDirectory(root_ + "/" + key.substr(0, slash)));
    if (!up_to_root) return Status::Ok();
  }
  return SyncDirectory(root());
}

Status FileStore::Erase(const std::string& key) {
  TESSERA_ASSIGN_OR_RETURN(const std::string path, PathFor(key));
  if (::unlink(path.c_str()) != 0) {
    const int err = errno;
    if (IsMissing(err)) return Status::Ok();
    struct stat st;
    if ((err == EISDIR || err == EPERM) && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return Status::Ok();  // a directory is not a value
    }
    return OsError(path, "unlink", err);
  }
  RemoveEmptyParents(key);
  return Status::Ok();
}

void FileStore::RemoveEmptyParents(const std::string& key) const {
  // rmdir fails on a non-empty directory, which ends the walk; a concurrent Set that loses its
  // freshly created directory this way recreates it (see CreateTempFile).
  for (size_t slash = key.rfind('/'); slash != std::string::npos; slash = key.rfind('/', slash - 1)) {
    if (::rmdir((root_ + "/" + key.substr(0, slash)).c_str()) != 0) return;
  }
}

Result<std::vector<std::string>> FileStore::List(const std::string& prefix) const {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKeyPrefix(prefix));
  const size_t slash = prefix.rfind('/');
  const std::string dir_key = slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
  const std::string dir = dir_key.empty() ? root() : root_ + "/" + dir_key.substr(0, dir_key.size() - 1);
  std::vector<std::string> keys;
  TESSERA_RETURN_IF_ERROR(ListDirectory(dir, dir_key, prefix, &keys));
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace tessera
