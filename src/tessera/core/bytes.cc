#include "tessera/core/bytes.h"

#include <sys/mman.h>

namespace tessera {

void ReserveHugePages(Bytes* b, size_t bytes) {
  using Alloc = DefaultInitAllocator<uint8_t>;
  if (b->capacity() >= bytes) return;
  b->reserve(bytes);
#ifdef MADV_HUGEPAGE
  // Large blocks are 2 MiB-aligned and sized in whole 2 MiB (see DefaultInitAllocator).
  if (b->capacity() >= Alloc::kLargeBytes) {
    const size_t span = (b->capacity() + Alloc::kHugePageBytes - 1) / Alloc::kHugePageBytes * Alloc::kHugePageBytes;
    (void)::madvise(b->data(), span, MADV_HUGEPAGE);
  }
#endif
}

}  // namespace tessera
