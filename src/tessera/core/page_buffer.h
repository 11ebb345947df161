// A large, fixed-size, page-aligned byte buffer straight from mmap, for the streaming writer's
// epoch buffers (hundreds of MiB). Asks for transparent huge pages, so first touch costs one fault
// per 2 MiB instead of per 4 KiB, and is never zero-filled by us (the kernel hands out zero pages).
// Move-only; not thread-safe (callers share it under their own hand-off protocol).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/core/status.h"

namespace tessera {

class PageBuffer {
 public:
  PageBuffer() = default;
  // Maps `size_bytes` (rounded up to whole pages); kOutOfResources when the kernel refuses.
  static Result<PageBuffer> Allocate(size_t size_bytes);
  PageBuffer(PageBuffer&& other) noexcept;
  PageBuffer& operator=(PageBuffer&& other) noexcept;
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  ~PageBuffer();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

  // A process that runs many streams one after another (a scale-out worker writing region after
  // region) can keep released buffers for the next stream instead of unmapping them: memory the
  // process has touched once is much cheaper to reuse than fresh pages (on virtual machines
  // especially, where a first touch costs a fault in the host too). Up to `max_bytes` of released
  // buffers are kept (0, the default: none); one of the exact size asked for is handed out again,
  // zero-filled like a fresh mapping.
  static void SetReusePoolBytes(size_t max_bytes);

  // Backs bytes [offset, offset + length) of the buffer with memory now (page tables populated
  // writable, contents untouched), so that later writes take no page faults. Safe while another
  // thread writes the same range. A hint: does nothing where the kernel cannot (before Linux
  // 5.14) or when memory is short (the first write then faults as usual).
  void Prefault(size_t offset, size_t length) const;

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;         // what the caller asked for
  size_t mapped_bytes_ = 0;  // what is mapped
};

}  // namespace tessera
