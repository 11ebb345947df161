#include "tessera/hdf5/h5_selection_order.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

namespace tessera::hdf5 {
namespace {

// Building a block list's span tree visits each block once per interval of every dimension it
// covers: for disjoint blocks (what HDF5 writes) 2 x rank x blocks, at most 2 x 32 x 65536 = 2^22;
// for overlapping ones up to quadratic. A hostile list is refused once this many are spent.
constexpr uint64_t kMaxSpanWork = uint64_t{1} << 23;

}  // namespace

uint64_t SelectedCount(const SelectionDim& d) { return d.count * d.block; }

uint64_t SelectedIndexAt(const SelectionDim& d, uint64_t k) { return d.start + (k / d.block) * d.stride + k % d.block; }

uint64_t FirstSelectedAtOrAfter(const SelectionDim& d, uint64_t x) {
  if (x <= d.start) return 0;
  const uint64_t off = x - d.start;
  const uint64_t b = off / d.stride, r = off % d.stride;
  return std::min(SelectedCount(d), r < d.block ? b * d.block + r : (b + 1) * d.block);
}

bool SelectionFitsExtent(const SelectionDim& d, uint64_t extent) {
  if (d.count == 0 || d.block == 0) return true;  // selects nothing
  if (d.start >= extent) return false;
  const uint64_t room = extent - d.start;
  if (d.block > room) return false;
  return d.count == 1 || (d.stride >= d.block && d.count - 1 <= (room - d.block) / d.stride);
}

int32_t OrderedSelection::AddNode(Node node) {
  uint64_t before = 0;
  for (Group& g : node.groups) {
    g.before = before;
    before += SelectedCount(g.dim) * g.child_size;
  }
  node.size = before;
  nodes_.push_back(std::move(node));
  return static_cast<int32_t>(nodes_.size() - 1);
}

OrderedSelection OrderedSelection::FromRegular(const std::vector<SelectionDim>& dims) {
  OrderedSelection s;
  s.rank_ = dims.size();
  // Built from the last dimension up, so each group knows its child's size.
  int32_t child = -1;
  uint64_t child_size = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    Node node;
    node.groups.push_back({dims[d], child, child_size, 0});
    child = s.AddNode(std::move(node));
    child_size = s.nodes_.back().size;
  }
  // The root must be nodes_[0]: reverse the order (children then have higher indices).
  std::reverse(s.nodes_.begin(), s.nodes_.end());
  const int32_t last = static_cast<int32_t>(s.nodes_.size()) - 1;
  for (Node& node : s.nodes_)
    for (Group& g : node.groups)
      if (g.child >= 0) g.child = last - g.child;
  s.size_ = s.nodes_.empty() ? 0 : s.nodes_[0].size;
  for (const SelectionDim& d : dims) {
    s.lo_.push_back(d.start);
    s.hi_.push_back(SelectedCount(d) == 0 ? d.start : SelectedIndexAt(d, SelectedCount(d) - 1) + 1);
  }
  return s;
}

Result<int32_t> OrderedSelection::BuildBlocks(const std::vector<uint64_t>& blocks, std::vector<uint32_t> active, size_t d,
                                              const std::string& what) {
  const size_t r = rank_;
  auto start = [&](uint32_t b) { return blocks[b * 2 * r + d]; };
  auto end = [&](uint32_t b) { return blocks[b * 2 * r + r + d]; };  // inclusive
  // Elementary intervals: between consecutive block boundaries along d the covering set is fixed.
  span_work_ += 2 * active.size();
  if (span_work_ > kMaxSpanWork)
    return Unsupported(what + ": an irregular hyperslab of " + std::to_string(blocks.size() / (2 * r)) +
                       " blocks whose union takes more than " + std::to_string(kMaxSpanWork) + " steps to order");
  std::vector<std::pair<uint64_t, uint32_t>> events;  // (position, block): a start or one past an end
  for (uint32_t b : active) {
    events.push_back({start(b), b});
    events.push_back({end(b) + 1, b});
  }
  std::sort(events.begin(), events.end());
  Node node;
  std::set<uint32_t> covering;
  for (size_t i = 0; i < events.size();) {
    const uint64_t p = events[i].first;
    for (; i < events.size() && events[i].first == p; ++i) {
      const uint32_t b = events[i].second;
      if (start(b) == p) covering.insert(b);
      else covering.erase(b);
    }
    if (covering.empty() || i == events.size()) continue;
    const uint64_t q = events[i].first;  // the interval [p, q)
    Group g;
    g.dim = {p, q - p, 1, q - p};
    if (d + 1 < r) {
      TESSERA_ASSIGN_OR_RETURN(g.child, BuildBlocks(blocks, std::vector<uint32_t>(covering.begin(), covering.end()), d + 1, what));
      g.child_size = nodes_[static_cast<size_t>(g.child)].size;
    } else if (!node.groups.empty()) {
      // Along the last dimension adjacent intervals are one longer run.
      SelectionDim& prev = node.groups.back().dim;
      if (prev.start + prev.block == p) {
        prev.block += q - p;
        prev.stride = prev.block;
        continue;
      }
    }
    node.groups.push_back(g);
  }
  return AddNode(std::move(node));
}

Result<OrderedSelection> OrderedSelection::Make(const DecodedSelection& sel, const std::vector<uint64_t>& extent,
                                                const std::string& what) {
  if (sel.regular()) {
    const std::vector<SelectionDim> dims = sel.Resolve(extent);
    if (dims.size() != extent.size())
      return CorruptData(what + ": a selection of rank " + std::to_string(dims.size()) + " in a rank-" +
                         std::to_string(extent.size()) + " dataspace");
    for (size_t d = 0; d < dims.size(); ++d)
      if (!SelectionFitsExtent(dims[d], extent[d]))
        return CorruptData(what + ": selection " + sel.ToString() + " leaves dimension " + std::to_string(d) +
                           " (extent " + std::to_string(extent[d]) + ")");
    return FromRegular(dims);
  }
  const size_t r = sel.rank;
  if (r != extent.size())
    return CorruptData(what + ": a selection of rank " + std::to_string(r) + " in a rank-" +
                       std::to_string(extent.size()) + " dataspace");
  OrderedSelection s;
  s.rank_ = r;
  s.lo_.assign(r, ~uint64_t{0});
  s.hi_.assign(r, 0);
  const std::vector<uint64_t>& coords = sel.kind == SelectionKind::kPoints ? sel.points : sel.blocks;
  const size_t per = sel.kind == SelectionKind::kPoints ? r : 2 * r;
  for (size_t i = 0; i + per <= coords.size(); i += per) {
    for (size_t d = 0; d < r; ++d) {
      const uint64_t first = coords[i + d], last = coords[i + per - r + d];
      if (last >= extent[d])
        return CorruptData(what + ": " + (per == r ? "point " : "block ") + std::to_string(i / per) + " reaches " +
                           std::to_string(last) + " in dimension " + std::to_string(d) + " (extent " +
                           std::to_string(extent[d]) + ")");
      s.lo_[d] = std::min(s.lo_[d], first);
      s.hi_[d] = std::max(s.hi_[d], last + 1);
    }
  }
  if (sel.kind == SelectionKind::kPoints) {
    s.is_points_ = true;
    s.points_ = sel.points;
    s.size_ = sel.points.size() / r;
    s.points_by_first_.resize(s.size_);
    std::iota(s.points_by_first_.begin(), s.points_by_first_.end(), uint64_t{0});
    std::stable_sort(s.points_by_first_.begin(), s.points_by_first_.end(),
                     [&](uint64_t a, uint64_t b) { return s.points_[a * r] < s.points_[b * r]; });
    return s;
  }
  std::vector<uint32_t> all(sel.blocks.size() / (2 * r));
  for (uint32_t b = 0; b < all.size(); ++b) all[b] = b;
  TESSERA_ASSIGN_OR_RETURN(int32_t root, s.BuildBlocks(sel.blocks, std::move(all), 0, what));
  // Children were added before their parents: make the root nodes_[0] by swapping it to the front.
  if (root != 0) {
    std::swap(s.nodes_[0], s.nodes_[static_cast<size_t>(root)]);
    for (Node& node : s.nodes_)
      for (Group& g : node.groups)
        if (g.child == 0) g.child = root;
        else if (g.child == root) g.child = 0;
  }
  s.size_ = s.nodes_[0].size;
  return s;
}

uint64_t OrderedSelection::At(uint64_t k, std::span<uint64_t> coords) const {
  if (is_points_) {
    std::copy_n(points_.begin() + static_cast<std::ptrdiff_t>(k * rank_), rank_, coords.begin());
    return 1;
  }
  int32_t n = 0;
  uint64_t run = 1;
  for (size_t d = 0; d < rank_; ++d) {
    const std::vector<Group>& groups = nodes_[static_cast<size_t>(n)].groups;
    // The last group starting at or before k.
    auto it = std::upper_bound(groups.begin(), groups.end(), k, [](uint64_t v, const Group& g) { return v < g.before; });
    const Group& g = *std::prev(it);
    k -= g.before;
    const uint64_t j = k / g.child_size;
    k %= g.child_size;
    coords[d] = SelectedIndexAt(g.dim, j);
    if (d + 1 == rank_) {
      // A run ends with its block, unless blocks touch (stride == block).
      run = g.dim.stride == g.dim.block ? SelectedCount(g.dim) - j : g.dim.block - j % g.dim.block;
    }
    n = g.child;
  }
  return run;
}

void OrderedSelection::Walk(int32_t n, size_t d, uint64_t k_base, std::span<const uint64_t> lo, std::span<const uint64_t> hi,
                            std::vector<uint64_t>& coords, const RunVisitor& visit) const {
  for (const Group& g : nodes_[static_cast<size_t>(n)].groups) {
    const uint64_t j0 = FirstSelectedAtOrAfter(g.dim, lo[d]), j1 = FirstSelectedAtOrAfter(g.dim, hi[d]);
    if (d + 1 == rank_) {
      for (uint64_t j = j0; j < j1;) {
        const uint64_t end = g.dim.stride == g.dim.block ? j1 : std::min(j1, (j / g.dim.block + 1) * g.dim.block);
        coords[d] = SelectedIndexAt(g.dim, j);
        visit(k_base + g.before + j, coords, end - j);
        j = end;
      }
      continue;
    }
    for (uint64_t j = j0; j < j1; ++j) {
      coords[d] = SelectedIndexAt(g.dim, j);
      Walk(g.child, d + 1, k_base + g.before + j * g.child_size, lo, hi, coords, visit);
    }
  }
}

void OrderedSelection::ForEachRunInBox(std::span<const uint64_t> lo, std::span<const uint64_t> hi,
                                       const RunVisitor& visit) const {
  std::vector<uint64_t> coords(rank_);
  if (is_points_) {
    // A VDS read asks once per source block: only the points in the box's slab along dimension 0
    // are looked at, then visited in stored order.
    auto first_before = [&](uint64_t k, uint64_t v) { return points_[k * rank_] < v; };
    const auto slab_begin = std::lower_bound(points_by_first_.begin(), points_by_first_.end(), lo[0], first_before);
    const auto slab_end = std::lower_bound(slab_begin, points_by_first_.end(), hi[0], first_before);
    std::vector<uint64_t> inside;
    for (auto it = slab_begin; it < slab_end; ++it) {
      const uint64_t* p = points_.data() + *it * rank_;
      bool in = true;
      for (size_t d = 1; d < rank_ && in; ++d) in = p[d] >= lo[d] && p[d] < hi[d];
      if (in) inside.push_back(*it);
    }
    std::sort(inside.begin(), inside.end());
    for (uint64_t k : inside) visit(k, std::span<const uint64_t>(points_.data() + k * rank_, rank_), 1);
    return;
  }
  if (rank_ == 0 || nodes_.empty()) return;
  for (size_t d = 0; d < rank_; ++d)
    if (lo[d] >= hi[d]) return;
  Walk(0, 0, 0, lo, hi, coords, visit);
}

}  // namespace tessera::hdf5
