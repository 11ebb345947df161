// A dataspace selection in the order HDF5 iterates it, which is how a virtual dataset mapping pairs
// its two sides: element k of the virtual selection takes element k of the source selection.
//
// Hyperslabs (regular or a union of blocks) iterate in row-major (C) order of the selected
// positions, whatever order their blocks were stored in; point lists iterate in their stored order.
// A hyperslab is held as a span tree: per dimension, disjoint ascending groups of positions (a
// regular start/stride/count/block pattern, or one interval of a block list), each with the tree
// of the dimensions after it. Every node knows how many elements lie before each group, so the
// k-th element is found in one descent, and the runs inside a box are visited without walking
// the selection outside it. Memory is bounded by the stored form (no per-element map).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/status.h"
#include "tessera/hdf5/h5_selection_encoding.h"

namespace tessera::hdf5 {

// Elements one resolved selection dimension selects (count * block; no unlimited values).
uint64_t SelectedCount(const SelectionDim& d);
// The position of the k-th selected element of `d`.
uint64_t SelectedIndexAt(const SelectionDim& d, uint64_t k);
// The first k whose position is >= x (SelectedCount(d) when none).
uint64_t FirstSelectedAtOrAfter(const SelectionDim& d, uint64_t x);
// Whether every position `d` selects lies below `extent`, computed without overflow (a count or
// block near 2^64 must not wrap into a small product).
bool SelectionFitsExtent(const SelectionDim& d, uint64_t extent);

class OrderedSelection {
 public:
  // `sel` over a dataspace of `extent` (no unlimited values left: resolve them first). kCorruptData
  // naming `what` when the selection leaves the extent or has another rank; kUnsupported when a
  // block list's blocks overlap so much that ordering them would take pathologically long.
  static Result<OrderedSelection> Make(const DecodedSelection& sel, const std::vector<uint64_t>& extent,
                                       const std::string& what);
  // Make for a regular hyperslab already resolved (what the per-dimension path plans with).
  static OrderedSelection FromRegular(const std::vector<SelectionDim>& dims);

  size_t rank() const { return rank_; }
  uint64_t size() const { return size_; }
  // The smallest box holding every selected element: [bounds_lo, bounds_hi).
  const std::vector<uint64_t>& bounds_lo() const { return lo_; }
  const std::vector<uint64_t>& bounds_hi() const { return hi_; }

  // The coordinates of element k (< size()) into `coords` (rank() values), and how many elements
  // from k on follow it one by one along the last dimension (>= 1).
  uint64_t At(uint64_t k, std::span<uint64_t> coords) const;

  // Calls visit(k, coords, n) for every run of n elements k..k+n-1 that lie in the box
  // [lo, hi) at coords, coords + 1, ... along the last dimension; hyperslab runs come in
  // ascending k, points in their stored order.
  using RunVisitor = std::function<void(uint64_t k, std::span<const uint64_t> coords, uint64_t n)>;
  void ForEachRunInBox(std::span<const uint64_t> lo, std::span<const uint64_t> hi, const RunVisitor& visit) const;

 private:
  struct Group {
    SelectionDim dim;         // the positions, as a regular pattern (count 1 for a block list's interval)
    int32_t child = -1;       // the node of the next dimension (-1 at the last)
    uint64_t child_size = 1;  // elements under one position
    uint64_t before = 0;      // elements of the node's earlier groups
  };
  struct Node {
    std::vector<Group> groups;
    uint64_t size = 0;
  };
  Result<int32_t> BuildBlocks(const std::vector<uint64_t>& blocks, std::vector<uint32_t> active, size_t d,
                              const std::string& what);
  int32_t AddNode(Node node);
  void Walk(int32_t node, size_t d, uint64_t k_base, std::span<const uint64_t> lo, std::span<const uint64_t> hi,
            std::vector<uint64_t>& coords, const RunVisitor& visit) const;

  size_t rank_ = 0;
  uint64_t size_ = 0;
  std::vector<Node> nodes_;      // hyperslabs: nodes_[0] is the root
  std::vector<uint64_t> points_;  // points: coordinates[rank] per point
  // Points: their indices ordered by first coordinate (stored order among equals), so a box finds
  // the points of its slab of dimension 0 by binary search instead of scanning them all.
  std::vector<uint64_t> points_by_first_;
  bool is_points_ = false;
  uint64_t span_work_ = 0;  // bounds the building of a block list's span tree
  std::vector<uint64_t> lo_, hi_;
};

}  // namespace tessera::hdf5
