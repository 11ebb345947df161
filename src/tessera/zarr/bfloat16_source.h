// A Zarr bfloat16 array as the reading engine sees it: an element type (core/element_type.h)
// numpy calls "bfloat16", two bytes per element, whose bytes come from the array read as uint16
// (the same size and the same `bytes`-codec endian handling, so the decoded bits are already
// numpy's native little-endian layout).
#pragma once

#include <memory>

#include "tessera/read/selection_read.h"

namespace tessera::zarr {

// `bits`: the array read as uint16 (dtype kUInt16, fill_value the bfloat16 fill's bits).
std::unique_ptr<ChunkSource> BFloat16ElementSource(std::shared_ptr<const ChunkSource> bits);

}  // namespace tessera::zarr
