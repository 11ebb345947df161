#include "tessera/store/posix_io.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace tessera::posix_io {

std::string ErrnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

std::string PwriteAll(int fd, uint64_t offset, ByteView bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const size_t want = std::min(bytes.size() - done, kMaxIoChunkBytes);
    const ssize_t n = ::pwrite(fd, bytes.data() + done, want, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoText(errno);
    if (n == 0) return "wrote nothing";
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace tessera::posix_io
