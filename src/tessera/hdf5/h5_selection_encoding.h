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
//   points version 1: version (u32) = 1 | reserved (u32) | length (u32) | rank (u32) |
//                     point count (u32) | per point: coordinates[rank] (u32)
//   points version 2: version (u32) = 2 | encoded size (u8: 2, 4 or 8) | rank (u32) |
//                     point count (encoded size) | per point: coordinates[rank] (encoded size each)
//
// tessera reads all, regular hyperslabs (one start, stride, count and block per dimension; a block
// list that is such a product is read as one), irregular hyperslabs (a union of blocks, at most
// kMaxSelectionBlocks) and point lists (at most kMaxSelectionPoints, kept in their stored order,
// which is the order HDF5 iterates them in). None selections are refused as unsupported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera::hdf5 {

// count or block value meaning "unlimited".
inline constexpr uint64_t kSelectionUnlimited = ~uint64_t{0};
// A point list is a list by nature: one bigger than this is refused naming its count rather than
// held in memory (a hostile mapping could claim billions). The same for irregular block lists,
// whose union is built into a span tree.
inline constexpr uint64_t kMaxSelectionPoints = uint64_t{1} << 20;
inline constexpr uint64_t kMaxSelectionBlocks = uint64_t{1} << 16;

enum class SelectionKind { kAll, kRegular, kBlocks, kPoints };

struct SelectionDim {
  uint64_t start = 0;
  uint64_t stride = 1;
  uint64_t count = 1;  // kSelectionUnlimited: as many blocks as the extent allows
  uint64_t block = 1;  // kSelectionUnlimited: to the end of the extent (count is then 1)
};

struct DecodedSelection {
  SelectionKind kind = SelectionKind::kRegular;
  bool all = false;                // every element of the dataspace (dims empty)
  std::vector<SelectionDim> dims;  // kRegular: a regular hyperslab
  uint32_t rank = 0;               // kBlocks and kPoints: the dataspace rank
  std::vector<uint64_t> blocks;    // kBlocks: per block start[rank], then end[rank] (inclusive)
  std::vector<uint64_t> points;    // kPoints: per point coordinates[rank], in the stored order
  // All or a regular hyperslab (what the per-dimension mapping path reads).
  bool regular() const { return kind == SelectionKind::kAll || kind == SelectionKind::kRegular; }
  // "all" or a hyperslab over `extent`: start 0, stride = block = extent, count 1 for "all".
  std::vector<SelectionDim> Resolve(const std::vector<uint64_t>& extent) const;
  bool unlimited() const;
  std::string ToString() const;  // "all", "[0:10:2 x1, 4 x3]", "3 blocks", "5 points"
};

// Decodes one selection from `data` starting at *pos (advanced past it). Errors name `what`
// (the file and structure) and the byte offset: kCorruptData for malformed or truncated bytes,
// kUnsupported for none selections and for point or block lists longer than their limits.
Result<DecodedSelection> DecodeSelection(ByteView data, size_t* pos, const std::string& what);

}  // namespace tessera::hdf5
