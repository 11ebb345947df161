#include "tessera/store/writable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include "tessera/store/file_store.h"
#include "tessera/store/key_validation.h"
#include "tessera/store/posix_io.h"
#include "tessera/store/store.h"

namespace tessera {
namespace {

using posix_io::ErrnoText;

// The staged value's name inside its staging directory (the key CopyFrom reads it under).
constexpr const char* kStagedKey = "value";

// Stages in `dir` (a private directory under TMPDIR), stores with `store->CopyFrom` at Commit.
class StagedWritableFile final : public WritableFile {
 public:
  StagedWritableFile(WritableStore* store, std::string key, std::string description, std::string dir, int fd)
      : store_(store), key_(std::move(key)), description_(std::move(description)), dir_(std::move(dir)),
        file_(dir_ + "/" + kStagedKey), fd_(fd) {}
  ~StagedWritableFile() override { Abandon(); }

  Status WriteAt(uint64_t offset, ByteView bytes) override {
    if (state_ != State::kOpen) return FailedPrecondition(description_ + ": write after Commit or Abandon");
    const std::string failed = posix_io::PwriteAll(fd_, offset, bytes);
    if (!failed.empty())
      return IoError(description_ + ": " + ByteRangeText(offset, offset + bytes.size()) + ": write failed: " + "staging in " + file_ + ": " + failed);
    return Status::Ok();
  }

  Status Truncate(uint64_t size) override {
    if (state_ != State::kOpen) return FailedPrecondition(description_ + ": truncate after Commit or Abandon");
    while (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return IoError(description_ + ": staging in " + file_ + ": ftruncate: " + ErrnoText(errno));
    }
    return Status::Ok();
  }

  Status Commit() override {
    if (state_ != State::kOpen) return FailedPrecondition(description_ + ": Commit after Commit or Abandon");
    // No fsync: the staged copy only has to last until the store has the value.
    Status st = Status::Ok();
    if (::close(std::exchange(fd_, -1)) != 0 && errno != EINTR) {
      st = IoError(description_ + ": staging in " + file_ + ": close: " + ErrnoText(errno));
    }
    if (st.ok()) {
      const FileStore staged(dir_);
      st = store_->CopyFrom(key_, staged, kStagedKey);
    }
    RemoveStaging();
    state_ = st.ok() ? State::kCommitted : State::kAbandoned;
    return st;
  }

  void Abandon() override {
    if (state_ != State::kOpen) return;
    RemoveStaging();
    state_ = State::kAbandoned;
  }

  std::string Describe() const override { return description_; }

 private:
  enum class State { kOpen, kCommitted, kAbandoned };

  void RemoveStaging() {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);  // best effort: a stray staging directory is harmless
  }

  WritableStore* const store_;
  const std::string key_;
  const std::string description_;
  const std::string dir_;   // the staging directory
  const std::string file_;  // the staged file in it
  int fd_;
  State state_ = State::kOpen;
};

}  // namespace

Result<std::unique_ptr<WritableFile>> OpenStagedWritableFile(WritableStore* store, std::string key,
                                                             std::string description) {
  TESSERA_RETURN_IF_ERROR(ValidateStoreKey(key));
  std::error_code ec;
  const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec) return IoError(description + ": no directory to stage the value in (TMPDIR): " + ec.message());
  std::string dir = (tmp / "tessera-staging-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) {
    return IoError(description + ": cannot make a staging directory " + dir + ": " + ErrnoText(errno));
  }
  const std::string file = dir + "/" + kStagedKey;
  int fd;
  do {
    fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    std::filesystem::remove_all(dir, ec);
    return IoError(description + ": cannot create the staging file " + file + ": " + ErrnoText(err));
  }
  return std::unique_ptr<WritableFile>(
      new StagedWritableFile(store, std::move(key), std::move(description), std::move(dir), fd));
}

}  // namespace tessera
