#include "tessera/hdf5/h5_spill_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tessera::hdf5 {
namespace {

std::string Why(int err) { return std::strerror(err); }

// An open, nameless file in `directory`: -1 and errno on failure.
int OpenNameless(const std::string& directory) {
#ifdef O_TMPFILE
  const int nameless = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (nameless >= 0) return nameless;
  // EOPNOTSUPP / EISDIR / EINVAL: the file system has no O_TMPFILE; make a name and drop it.
  if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) return -1;
#endif
  std::string name = directory + "/.tessera-h5-spill-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return -1;
  ::unlink(name.c_str());
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

}  // namespace

Result<std::unique_ptr<SpillFile>> SpillFile::Create(const std::string& directory, std::string purpose) {
  const int fd = OpenNameless(directory);
  if (fd < 0) return IoError(purpose + ": cannot create a temporary file in " + directory + ": " + Why(errno));
  return std::unique_ptr<SpillFile>(new SpillFile(fd, std::move(purpose)));
}

SpillFile::~SpillFile() { ::close(fd_); }

uint64_t SpillFile::Allocate(uint64_t bytes) { return end_.fetch_add(bytes); }

Status SpillFile::WriteAt(uint64_t address, ByteView bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(address + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return IoError(purpose_ + ": writing bytes " + std::to_string(address) + ".." +
                     std::to_string(address + bytes.size()) + ": " + (n < 0 ? Why(errno) : std::string("wrote nothing")));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status SpillFile::ReadAt(uint64_t offset, MutableByteView out) const {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return IoError(purpose_ + ": reading bytes " + std::to_string(offset) + ".." + std::to_string(offset + out.size()) +
                     " back: " + (n < 0 ? Why(errno) : std::string("the spill ends early")));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status SpillFile::CopyInto(H5Writer& file, uint64_t address) const {
  const uint64_t size = end_.load();
  Bytes block(static_cast<size_t>(std::min<uint64_t>(size, kCopyBlockBytes)));
  for (uint64_t offset = 0; offset < size;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(size - offset, block.size()));
    const ssize_t n = ::pread(fd_, block.data(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return IoError(purpose_ + ": reading bytes " + std::to_string(offset) + ".." + std::to_string(offset + want) +
                     " back: " + (n < 0 ? Why(errno) : std::string("the spill ends early")));
    }
    TESSERA_RETURN_IF_ERROR(file.WriteAt(address + offset, ByteView(block.data(), static_cast<size_t>(n))));
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

void SpillFile::Release() {
  // Space the process no longer needs: a failure here only delays its return until the
  // descriptor closes, so it is not an error of the write.
  (void)::ftruncate(fd_, 0);
}

}  // namespace tessera::hdf5
