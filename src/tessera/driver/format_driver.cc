#include "tessera/driver/format_driver.h"

#include "tessera/core/chunk_shape.h"

namespace tessera::driver {

std::vector<int64_t> FormatDriver::FallbackChunkShape(const ArraySpec& s) const {
  return AutoChunkShape(s.shape, false, ItemSize(s.dtype));
}

}  // namespace tessera::driver
