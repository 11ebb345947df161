#include "tessera/zarr/bfloat16_source.h"

#include <utility>

#include "tessera/zarr/element_view_source.h"

namespace tessera::zarr {

std::unique_ptr<ChunkSource> BFloat16ElementSource(std::shared_ptr<const ChunkSource> bits) {
  return ElementViewSource(std::move(bits), "bfloat16", "bfloat16");
}

}  // namespace tessera::zarr
