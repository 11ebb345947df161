#include "tessera/core/page_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace tessera {

Result<PageBuffer> PageBuffer::Allocate(size_t size_bytes) {
  PageBuffer b;
  if (size_bytes == 0) return b;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t mapped = (size_bytes + page - 1) / page * page;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return OutOfResources("cannot map a " + std::to_string(size_bytes) + "-byte buffer: " + std::strerror(errno));
#ifdef MADV_HUGEPAGE
  (void)::madvise(p, mapped, MADV_HUGEPAGE);  // a hint: without huge pages the buffer still works
#endif
  b.data_ = static_cast<uint8_t*>(p);
  b.size_ = size_bytes;
  b.mapped_bytes_ = mapped;
  return b;
}

void PageBuffer::Prefault(size_t offset, size_t length) const {
#ifdef MADV_POPULATE_WRITE
  if (offset >= size_) return;
  length = std::min(length, size_ - offset);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t begin = offset / page * page;
  (void)::madvise(data_ + begin, offset + length - begin, MADV_POPULATE_WRITE);
#else
  (void)offset;
  (void)length;
#endif
}

PageBuffer::PageBuffer(PageBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)) {}

PageBuffer& PageBuffer::operator=(PageBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(data_, mapped_bytes_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  }
  return *this;
}

PageBuffer::~PageBuffer() {
  if (data_) ::munmap(data_, mapped_bytes_);
}

}  // namespace tessera
