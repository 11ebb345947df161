#include "tessera/core/bytes.h"

#include <sys/mman.h>

namespace tessera {

void AdviseHugePages(void* p, size_t bytes) noexcept {
#ifdef MADV_HUGEPAGE
  (void)::madvise(p, bytes, MADV_HUGEPAGE);
#endif
}

}  // namespace tessera
