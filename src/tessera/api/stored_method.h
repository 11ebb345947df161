// The downsampling method of a stored pyramid whose format does not record it (a precomputed
// volume's info lists scales, not how they were computed), found from the stored values: the
// method whose reduction of a box at the origin of each level reproduces the stored box of the
// level above it exactly. Internal to the façade (mode a continues such a pyramid with it).
#pragma once

#include <optional>
#include <span>

#include "tessera/api/array.h"
#include "tessera/pyramid/downsample.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"

namespace tessera::api_internal {

// `levels`: the pyramid's levels as stored, level 0 first; `stored`: its spec (dtype, factors).
// `given`: the caller's method, the only one tried when set (an error names the field when it
// does not reproduce the stored levels). Otherwise `default_method` (the format's) is tried first,
// then the others; values that several methods reproduce (a constant box) take the first.
// kUnsupported, naming `location`, when no method reproduces them.
Result<pyramid::DownsampleMethod> StoredDownsampleMethod(const Location& location,
                                                         std::span<const Array* const> levels,
                                                         const ArraySpec& stored,
                                                         std::optional<pyramid::DownsampleMethod> given,
                                                         pyramid::DownsampleMethod default_method);

}  // namespace tessera::api_internal
