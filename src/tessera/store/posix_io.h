// Local-file I/O the stores share (internal to the store layer): positional writes that retry
// short writes and EINTR, and errno as text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/bytes.h"

namespace tessera::posix_io {

// Largest single read or write request; Linux transfers at most ~2 GiB per call anyway.
inline constexpr size_t kMaxIoChunkBytes = size_t{1} << 30;

std::string ErrnoText(int err);

// Writes all of `bytes` at `offset` of `fd`. Empty on success, else why not ("No space left on
// device", "wrote nothing"); the caller names the file and the byte range.
std::string PwriteAll(int fd, uint64_t offset, ByteView bytes);

}  // namespace tessera::posix_io
