// Converting an array into a new one region by region (Convert's path into a bounded, one-level
// Zarr v3 or precomputed array; pyramids, HDF5 files, the GPU backend and precomputed murmurhash3
// shards go through a stream). Internal to the façade.
//
//   regions:  whole destination shards (unsharded: chunks), grown along the last dimensions to
//             about kRegionBytes where one is smaller; taken in C order by `threads` workers
//   worker:   reads its region of the source (only the source chunks it needs, decoded on the
//             worker), writes it through the destination's CopyTarget: every object of the region
//             is wholly covered, so none is read; its chunks are encoded and it is stored whole
//             (write/region_write.h), byte-identical to a stream's
//   publish:  the rows of every band of regions along dimension 0 once it and all bands before it
//             are stored (Zarr: zarr.json with those rows; precomputed: the info, whole, first)
//
// Memory: per worker one region of source values and its encoded objects, whatever the array's
// cross-section (a stream holds a chunk row of it: at 256^3 chunks over 2048 x 2048, 2 GiB). A
// failure stops the workers and keeps what was published, as a crash would.
#pragma once

#include <string>
#include <vector>

#include "tessera/api/array.h"
#include "tessera/api/convert.h"
#include "tessera/api/stream_lifecycle.h"

namespace tessera::api_internal {

// Whether Convert copies into `r` (its resolution of the destination) region by region.
bool CopiesByRegions(const Resolved& r, const StreamOptions& options);

// The shape of the regions a copy into `r` takes.
Result<std::vector<int64_t>> CopyRegionShape(const Resolved& r);

// What --plan prints for a copy of `source` into `r` region by region: regions, workers, memory.
Result<std::string> PlanRegionCopy(const Array& source, const Resolved& r);

// Creates the array `r` resolves to (what is there refused or replaced by options.mode, as a
// stream would) and copies `source` into it region by region. `source` must have the array's
// dtype and shape.
Result<StreamStatistics> CopyByRegions(const Array& source, const Resolved& r, const StreamOptions& options,
                                       const CopyOptions& copy);

}  // namespace tessera::api_internal
