// Dataspace selections as HDF5 serializes them (H5Sencode's selection part), which virtual
// dataset mappings store for the source and virtual side of each entry. All fields little-endian.
//
//   selection type (u32): 0 none | 1 points | 2 hyperslab | 3 all
//   none / all: version (u32) = 1 | reserved (u32) | length (u32) = 0
//   hyperslab version 1: version (u32) | reserved (u32) | length (u32) | rank (u32) |
//                        block count (u32) | per block: start[rank], end[rank] (u32, inclusive)
//   hyperslab version 2: version (u32) | flags (u8; bit 0 regular) | length (u32) | rank (u32) |
//                        per dimension: start, stride, count, block (u64 each)
//   hyperslab version 3: version (u32) | flags (u8) | encoded size (u8: 2, 4 or 8) | rank (u32) |
//                        regular: per dimension start, stride, count, block (encoded size each)
//                        irregular: block count, then per block start[rank], end[rank]
//   A count or block of all ones (of the encoded size) is unlimited (H5S_UNLIMITED).
//
// tessera reads what virtual datasets use: all, and hyperslabs that are regular (one start, stride,
// count and block per dimension; an irregular list of one block is regular too). Point
// selections, none, and irregular block lists are refused as unsupported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera::hdf5 {

// count or block value meaning "unlimited".
inline constexpr uint64_t kSelectionUnlimited = ~uint64_t{0};

struct SelectionDim {
  uint64_t start = 0;
  uint64_t stride = 1;
  uint64_t count = 1;  // kSelectionUnlimited: as many blocks as the extent allows
  uint64_t block = 1;  // kSelectionUnlimited: to the end of the extent (count is then 1)
};

struct DecodedSelection {
  bool all = false;                // every element of the dataspace (dims empty)
  std::vector<SelectionDim> dims;  // a regular hyperslab
  // "all" or a hyperslab over `extent`: start 0, stride = block = extent, count 1 for "all".
  std::vector<SelectionDim> Resolve(const std::vector<uint64_t>& extent) const;
  bool unlimited() const;
  std::string ToString() const;  // "all", "[0:10:2 x1, 4 x3]"
};

// Decodes one selection from `data` starting at *pos (advanced past it). Errors name `what`
// (the file and structure) and the byte offset: kCorruptData for malformed or truncated bytes,
// kUnsupported for points, none and irregular hyperslabs.
Result<DecodedSelection> DecodeSelection(ByteView data, size_t* pos, const std::string& what);

}  // namespace tessera::hdf5
