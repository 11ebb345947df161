// The default chunk shape when the caller gives none (Zarr v3 and HDF5 streams).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera {

// About `target_bytes` of elements, proportional to `shape` (an unlimited dimension 0 counts as
// `shape[0]`, or 1 when that is 0), never larger than a bounded dimension, at least 1.
std::vector<int64_t> AutoChunkShape(const std::vector<int64_t>& shape, bool unlimited0, size_t item_bytes,
                                    int64_t target_bytes = int64_t{1} << 20);

}  // namespace tessera
