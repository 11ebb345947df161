#include "tessera/core/chunk_shape.h"

#include <algorithm>
#include <cmath>

namespace tessera {

std::vector<int64_t> AutoChunkShape(const std::vector<int64_t>& shape, bool unlimited0, size_t item_bytes,
                                    int64_t target_bytes) {
  const size_t rank = shape.size();
  std::vector<int64_t> chunk(rank, 1);
  if (rank == 0) return chunk;
  const double target = std::max<double>(1.0, static_cast<double>(target_bytes) / static_cast<double>(item_bytes));
  std::vector<double> reference(rank);
  std::vector<bool> bounded(rank), fixed(rank, false);
  for (size_t d = 0; d < rank; ++d) {
    bounded[d] = !(d == 0 && unlimited0);
    reference[d] = static_cast<double>(std::max<int64_t>(shape[d], 1));
  }
  // Scale the free dimensions by one factor; a dimension that reaches its bound (or 1) is fixed
  // there and the remaining budget goes to the others.
  for (size_t round = 0; round <= rank; ++round) {
    double budget = target, base = 1.0;
    size_t free = 0;
    for (size_t d = 0; d < rank; ++d) {
      if (fixed[d]) {
        budget /= static_cast<double>(chunk[d]);
      } else {
        base *= reference[d];
        ++free;
      }
    }
    if (free == 0) break;
    const double factor = std::pow(std::max(budget, 1.0) / base, 1.0 / static_cast<double>(free));
    bool newly_fixed = false;
    for (size_t d = 0; d < rank; ++d) {
      if (fixed[d]) continue;
      const double want = reference[d] * factor;
      if (bounded[d] && want >= static_cast<double>(shape[d])) {
        chunk[d] = std::max<int64_t>(shape[d], 1);
        fixed[d] = newly_fixed = true;
      } else if (want <= 1.0) {
        chunk[d] = 1;
        fixed[d] = newly_fixed = true;
      } else {
        chunk[d] = static_cast<int64_t>(std::llround(want));
      }
    }
    if (!newly_fixed) break;
  }
  return chunk;
}

}  // namespace tessera
