// Which chunks a selection touches, computed the plain way (test-only; not part of the library):
// enumerate every selected position of every dimension and take the chunk it falls in. Tests
// compare the requests a read sends with these, so they must not share the read engine's code.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tessera/read/selection_read.h"

namespace tessera::selection_test {

// Per dimension, the ascending chunk indices (extent `chunk[d]`) holding a selected position.
inline std::vector<std::vector<int64_t>> TouchedChunks(const Hyperslab& selection, const std::vector<int64_t>& chunk) {
  std::vector<std::vector<int64_t>> out(selection.dims.size());
  for (size_t d = 0; d < selection.dims.size(); ++d) {
    const index::DimSlice& s = selection.dims[d];
    std::set<int64_t> touched;
    for (int64_t k = 0; k < s.count; ++k) touched.insert((s.start + k * s.step) / chunk[d]);
    out[d].assign(touched.begin(), touched.end());
  }
  return out;
}

// Every combination of one entry per dimension, the last dimension fastest.
inline std::vector<std::vector<int64_t>> CrossProduct(const std::vector<std::vector<int64_t>>& per_dim) {
  std::vector<std::vector<int64_t>> out = {{}};
  for (const std::vector<int64_t>& values : per_dim) {
    std::vector<std::vector<int64_t>> next;
    for (const std::vector<int64_t>& prefix : out)
      for (int64_t v : values) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    out = std::move(next);
  }
  return out;
}

// The chunks (grid coordinates) a selection touches.
inline std::vector<std::vector<int64_t>> ChunksOf(const Hyperslab& selection, const std::vector<int64_t>& chunk) {
  return CrossProduct(TouchedChunks(selection, chunk));
}

// "0/1/2"
inline std::string Join(const std::vector<int64_t>& coords, const char* separator = "/") {
  std::string out;
  for (size_t d = 0; d < coords.size(); ++d) {
    if (d) out += separator;
    out += std::to_string(coords[d]);
  }
  return out;
}

}  // namespace tessera::selection_test
