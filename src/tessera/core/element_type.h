// An element type that is no tessera DataType (an HDF5 compound, fixed-length string, opaque
// value, ...): how numpy sees one element. A source of such elements presents each to the
// hyperslab engine as `item_bytes` uint8 values along one extra, trailing dimension (its chunks
// likewise), already in numpy's layout; tessera::Array hides that dimension again.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/bytes.h"

namespace tessera {

struct ElementType {
  // numpy's dtype of one element, little-endian throughout:
  //   a type string: "<i4", "|b1", "<c8", "|S5" (bytes), "|V4" (void);
  //   a structure: {"names": [...], "formats": [<dtype>...], "offsets": [...], "itemsize": n};
  //   a subarray (inside a structure): {"base": <dtype>, "shape": [...]}.
  nlohmann::json numpy;
  size_t item_bytes = 0;    // numpy's itemsize
  std::string description;  // "compound {x: int32 (little-endian), name: ASCII string[8]}"
  Bytes fill;               // one element (item_bytes), numpy's layout: what unwritten elements read as
};

}  // namespace tessera
