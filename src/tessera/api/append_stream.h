// Continuing an existing array along dimension 0 (CreateStream's mode a): the stream takes the
// array's stored spec, restarts at the last shard-row boundary at or below its stored rows (a
// pyramid: a boundary of every level), feeds the stored rows from there again (read back from
// level 0; the levels above are downsampled from them again) and then the caller's, so every
// shard of every level ends as one stream of all the rows would have written it. A pyramid level
// whose chunks were cut to its few rows is written anew from its own stored rows; a pyramid whose
// format records no downsampling method (precomputed) is continued with the method that
// reproduces its stored levels (stored_method.h). The array's shape only grows
// while it runs: a crash keeps the rows it had. Internal to the façade.
#pragma once

#include <memory>
#include <optional>

#include "tessera/api/stream.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"

namespace tessera::api_internal {

// The format of the array a mode-a stream of `given` continues at `location`; nullopt when there
// is none to continue (nothing there, or a precomputed volume without the spec's scale, which the
// stream adds). kAlreadyExists when something else is there (another format, a file, ...).
Result<std::optional<Format>> ArrayToContinue(const Location& location, const ArraySpec& given,
                                              const StreamOptions& options);

// The stream continuing the array of `format` at `location`. `given`: the caller's spec, whose
// fields must agree with the stored spec where given (an empty shape gives none of shape and
// dtype); an error names the first that does not.
Result<std::unique_ptr<Stream>> ContinueStream(const Location& location, Format format, const ArraySpec& given,
                                               const StreamOptions& options);

}  // namespace tessera::api_internal
