// Deterministic synthetic sources for demos and benchmarks (`tessera stream --synthetic`).
#pragma once

#include <cstdint>
#include <string>

#include "tessera/core/dtype.h"
#include "tessera/core/status.h"

namespace tessera::stream {

enum class SyntheticKind { kCamera, kZeros, kRandom };

Result<SyntheticKind> ParseSyntheticKind(const std::string& name);

// Fills `n` elements of `dtype` at `dst` with the values of elements [first, first + n) of the
// flattened synthetic array whose rows (dimension 0) are `row_elements` long. The same element
// index always gets the same value, so any split of the stream yields identical data.
//   camera: a smooth moving gradient plus a little noise (compresses like real frames)
//   zeros:  all zero
//   random: uniformly random bits (incompressible)
void FillSynthetic(SyntheticKind kind, DataType dtype, int64_t row_elements, int64_t first, int64_t n, uint8_t* dst);

// FillSynthetic split over up to `threads` threads (0 = hardware threads): the same bytes.
void FillSyntheticParallel(SyntheticKind kind, DataType dtype, int64_t row_elements, int64_t first, int64_t n,
                           uint8_t* dst, int threads);

}  // namespace tessera::stream
