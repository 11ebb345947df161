// A stream with a multiscale pyramid (or a single-level OME-Zarr image): one level stream per
// level, each fed by the one above through a RowDownsampler. Internal to the façade.
//
//   Append(bytes) ──> level 0 (as is)
//                └──> whole rows ──> downsampler 0 ──> every factors[0] rows: one row ──> level 1
//                                                                           └──> downsampler 1 ...
//
// Each level publishes its shards as they complete (a crash leaves every level readable as far as
// it got). Flush flushes every level with the rows each has; a group of rows along dimension 0
// that is not complete yet reaches the next level only at Close (it may still change). Close
// reduces those last groups level by level, then closes each level.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"
#include "tessera/api/stream.h"

namespace tessera::api_internal {

// Opens the stream of one level: `spec` (resolved, no pyramid) at `location`.
using LevelOpener = std::function<Result<std::unique_ptr<Stream>>(const ArraySpec& spec, const Location& location)>;

// Creates the levels of `resolved` (a spec with ome.image or more than one level) at `location`:
// zarr3: the OME-Zarr group (unless `create_group` is false), then the arrays "0", "1", ...;
// precomputed: the scales of one info. The levels are opened in order by `open_level`.
Result<std::unique_ptr<Stream>> CreatePyramidStream(Format format, const ArraySpec& resolved,
                                                    const Location& location, const StreamOptions& options,
                                                    int threads, const LevelOpener& open_level,
                                                    bool create_group = true);

// The memory a stream of `resolved` plans at its peak: its layout's, or (a pyramid) every level's
// and the downsamplers'.
// `input_buffers`: the epoch buffers of each level's writer (StreamOptions::input_buffers).
Result<int64_t> PlannedPeakBytes(Format format, const ArraySpec& resolved, int threads, int input_buffers = 2);

// The plan of those levels: each level's layout and the downsamplers' memory.
Result<std::string> PlanPyramid(Format format, const ArraySpec& resolved, int threads);

}  // namespace tessera::api_internal
