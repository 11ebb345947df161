#include "tessera/core/page_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tessera {
namespace {

// Released mappings kept for reuse (SetReusePoolBytes).
struct ReusePool {
  std::mutex mu;
  size_t max_bytes = 0;
  size_t held_bytes = 0;
  std::vector<std::pair<void*, size_t>> mappings;  // (address, mapped bytes)
};

ReusePool& Pool() {
  static ReusePool* pool = new ReusePool;  // never destroyed: buffers may be released at exit
  return *pool;
}

// A kept mapping of exactly `mapped` bytes, or null.
void* TakeFromPool(size_t mapped) {
  ReusePool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  for (auto it = pool.mappings.begin(); it != pool.mappings.end(); ++it) {
    if (it->second != mapped) continue;
    void* p = it->first;
    pool.held_bytes -= mapped;
    pool.mappings.erase(it);
    return p;
  }
  return nullptr;
}

void Release(void* p, size_t mapped) {
  ReusePool& pool = Pool();
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.held_bytes + mapped <= pool.max_bytes) {
      pool.mappings.emplace_back(p, mapped);
      pool.held_bytes += mapped;
      return;
    }
  }
  ::munmap(p, mapped);
}

}  // namespace

void PageBuffer::SetReusePoolBytes(size_t max_bytes) {
  ReusePool& pool = Pool();
  std::vector<std::pair<void*, size_t>> dropped;
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.max_bytes = max_bytes;
    while (pool.held_bytes > max_bytes) {
      dropped.push_back(pool.mappings.back());
      pool.held_bytes -= pool.mappings.back().second;
      pool.mappings.pop_back();
    }
  }
  for (auto [p, mapped] : dropped) ::munmap(p, mapped);
}

Result<PageBuffer> PageBuffer::Allocate(size_t size_bytes) {
  PageBuffer b;
  if (size_bytes == 0) return b;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t mapped = (size_bytes + page - 1) / page * page;
  if (void* kept = TakeFromPool(mapped)) {
    std::memset(kept, 0, mapped);  // as a fresh mapping is
    b.data_ = static_cast<uint8_t*>(kept);
    b.size_ = size_bytes;
    b.mapped_bytes_ = mapped;
    return b;
  }
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
    if (data_) Release(data_, mapped_bytes_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  }
  return *this;
}

PageBuffer::~PageBuffer() {
  if (data_) Release(data_, mapped_bytes_);
}

}  // namespace tessera
