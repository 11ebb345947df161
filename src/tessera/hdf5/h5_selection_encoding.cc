#include "tessera/hdf5/h5_selection_encoding.h"

#include <algorithm>
#include <set>
#include <utility>

namespace tessera::hdf5 {
namespace {

constexpr uint32_t kSelPoints = 1, kSelHyperslab = 2, kSelAll = 3, kSelNone = 0;
constexpr uint8_t kHyperslabRegular = 0x01;
// More dimensions than HDF5 allows (32) is corrupt.
constexpr uint32_t kMaxRank = 32;

// Bounded little-endian reads over the selection bytes; the first failure sticks.
class Cursor {
 public:
  Cursor(ByteView data, size_t pos, const std::string& what) : data_(data), pos_(pos), what_(what) {}
  uint64_t U(size_t width) {
    if (!status_.ok()) return 0;
    if (width > data_.size() || pos_ > data_.size() - width) {
      Fail("truncated: " + std::to_string(width) + " bytes needed at byte " + std::to_string(pos_) + " of " +
           std::to_string(data_.size()));
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = width; i-- > 0;) v = (v << 8) | data_[pos_ + i];
    pos_ += width;
    return v;
  }
  // A value of `width` bytes, all ones meaning unlimited.
  uint64_t Count(size_t width) {
    const uint64_t v = U(width);
    return width < 8 && v == (uint64_t{1} << (8 * width)) - 1 ? kSelectionUnlimited : v;
  }
  void Fail(const std::string& message) {
    if (status_.ok()) status_ = CorruptData(what_ + ": selection at byte " + std::to_string(pos_) + ": " + message);
  }
  size_t pos() const { return pos_; }
  const Status& status() const { return status_; }

 private:
  ByteView data_;
  size_t pos_;
  const std::string& what_;
  Status status_;
};

std::string Num(uint64_t v) { return v == kSelectionUnlimited ? "unlimited" : std::to_string(v); }

}  // namespace

std::vector<SelectionDim> DecodedSelection::Resolve(const std::vector<uint64_t>& extent) const {
  if (!all) return dims;
  std::vector<SelectionDim> out;
  for (uint64_t n : extent) out.push_back({0, std::max<uint64_t>(n, 1), 1, n});
  return out;
}

bool DecodedSelection::unlimited() const {
  for (const SelectionDim& d : dims)
    if (d.count == kSelectionUnlimited || d.block == kSelectionUnlimited) return true;
  return false;
}

std::string DecodedSelection::ToString() const {
  if (all) return "all";
  if (kind == SelectionKind::kBlocks) return std::to_string(blocks.size() / (2 * rank)) + " blocks";
  if (kind == SelectionKind::kPoints) return std::to_string(points.size() / rank) + " points";
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    const SelectionDim& d = dims[i];
    s += (i ? ", " : "") + std::to_string(d.start) + ":" + std::to_string(d.stride) + " x" + Num(d.count) + " block " +
         Num(d.block);
  }
  return s + "]";
}

Result<DecodedSelection> DecodeSelection(ByteView data, size_t* pos, const std::string& what) {
  Cursor c(data, *pos, what);
  const uint32_t type = static_cast<uint32_t>(c.U(4));
  const uint32_t version = static_cast<uint32_t>(c.U(4));
  TESSERA_RETURN_IF_ERROR(c.status());
  DecodedSelection sel;
  auto unsupported = [&](const std::string& kind) {
    return Unsupported(what + ": " + kind + " selections (selection at byte " + std::to_string(*pos) +
                       "); tessera reads virtual mappings of \"all\", hyperslab and point selections");
  };
  if (type == kSelAll || type == kSelNone) {
    if (version != 1) return CorruptData(what + ": selection at byte " + std::to_string(*pos) + ": version " +
                                         std::to_string(version) + " of an all/none selection (expected 1)");
    c.U(4);
    c.U(4);
    TESSERA_RETURN_IF_ERROR(c.status());
    if (type == kSelNone) return unsupported("empty (none)");
    sel.all = true;
    sel.kind = SelectionKind::kAll;
    *pos = c.pos();
    return sel;
  }
  if (type == kSelPoints) {
    size_t width = 4;
    if (version == 1) {
      c.U(4);  // reserved
      c.U(4);  // length
    } else if (version == 2) {
      width = static_cast<size_t>(c.U(1));
      if (c.status().ok() && width != 2 && width != 4 && width != 8)
        c.Fail("encoded size " + std::to_string(width) + " (expected 2, 4 or 8)");
    } else {
      c.Fail("point selection version " + std::to_string(version) + " (expected 1 or 2)");
    }
    const uint32_t rank = static_cast<uint32_t>(c.U(4));
    TESSERA_RETURN_IF_ERROR(c.status());
    if (rank == 0 || rank > kMaxRank) {
      c.Fail("rank " + std::to_string(rank) + " (expected 1-" + std::to_string(kMaxRank) + ")");
      return c.status();
    }
    const uint64_t count = c.U(width);
    TESSERA_RETURN_IF_ERROR(c.status());
    if (count == 0) return unsupported("empty point");
    if (count > kMaxSelectionPoints)
      return Unsupported(what + ": a point selection of " + std::to_string(count) + " points (selection at byte " +
                         std::to_string(*pos) + "); tessera reads point lists of at most " +
                         std::to_string(kMaxSelectionPoints) + " points");
    const size_t point_bytes = rank * width;
    if (count > (data.size() - std::min(data.size(), c.pos())) / point_bytes) {
      c.Fail(std::to_string(count) + " points of " + std::to_string(point_bytes) + " bytes do not fit");
      return c.status();
    }
    sel.kind = SelectionKind::kPoints;
    sel.rank = rank;
    sel.points.resize(count * rank);
    for (uint64_t& v : sel.points) v = c.U(width);
    TESSERA_RETURN_IF_ERROR(c.status());
    *pos = c.pos();
    return sel;
  }
  if (type != kSelHyperslab)
    return CorruptData(what + ": selection at byte " + std::to_string(*pos) + ": selection type " +
                       std::to_string(type) + " (expected 0-3)");

  size_t width = 4;
  bool regular = false;
  if (version == 1) {
    c.U(4);  // reserved
    c.U(4);  // length
  } else if (version == 2) {
    regular = (c.U(1) & kHyperslabRegular) != 0;
    c.U(4);  // length
    width = 8;
    if (c.status().ok() && !regular) c.Fail("version 2 hyperslab without the regular flag");
  } else if (version == 3) {
    regular = (c.U(1) & kHyperslabRegular) != 0;
    width = static_cast<size_t>(c.U(1));
    if (c.status().ok() && width != 2 && width != 4 && width != 8)
      c.Fail("encoded size " + std::to_string(width) + " (expected 2, 4 or 8)");
  } else {
    c.Fail("hyperslab selection version " + std::to_string(version) + " (expected 1-3)");
  }
  const uint32_t rank = static_cast<uint32_t>(c.U(4));
  TESSERA_RETURN_IF_ERROR(c.status());
  if (rank == 0 || rank > kMaxRank) {
    c.Fail("rank " + std::to_string(rank) + " (expected 1-" + std::to_string(kMaxRank) + ")");
    return c.status();
  }
  if (regular) {
    for (uint32_t d = 0; d < rank; ++d) {
      SelectionDim dim;
      dim.start = c.U(width);
      dim.stride = c.U(width);
      dim.count = c.Count(width);
      dim.block = c.Count(width);
      TESSERA_RETURN_IF_ERROR(c.status());
      if (dim.stride == 0 || dim.block == 0 || dim.count == 0 ||
          (dim.count != 1 && dim.block != kSelectionUnlimited && dim.block > dim.stride) ||
          (dim.block == kSelectionUnlimited && dim.count != 1)) {
        c.Fail("dimension " + std::to_string(d) + ": start " + std::to_string(dim.start) + ", stride " +
               std::to_string(dim.stride) + ", count " + Num(dim.count) + ", block " + Num(dim.block) +
               " is not a valid regular hyperslab (count and block >= 1, blocks not overlapping)");
        return c.status();
      }
      sel.dims.push_back(dim);
    }
    *pos = c.pos();
    return sel;
  }
  // A list of blocks. The HDF5 library writes regular selections this way too (version 1, for
  // files of the earliest format): a list that is the product of one regular set of intervals per
  // dimension is read as that regular hyperslab; other lists are kept as their blocks.
  const uint64_t blocks = c.U(width);
  TESSERA_RETURN_IF_ERROR(c.status());
  if (blocks == 0) return unsupported("empty hyperslab");
  const size_t block_bytes = 2 * rank * width;
  if (blocks > (data.size() - std::min(data.size(), c.pos())) / block_bytes) {
    c.Fail(std::to_string(blocks) + " blocks of " + std::to_string(block_bytes) + " bytes do not fit");
    return c.status();
  }
  if (blocks > kMaxSelectionBlocks)
    return Unsupported(what + ": an irregular hyperslab of " + std::to_string(blocks) + " blocks (selection at byte " +
                       std::to_string(*pos) + "); tessera reads block lists of at most " +
                       std::to_string(kMaxSelectionBlocks) + " blocks");
  std::vector<uint64_t> all_corners;
  all_corners.reserve(blocks * 2 * rank);
  std::vector<std::set<std::pair<uint64_t, uint64_t>>> intervals(rank);
  std::set<std::vector<uint64_t>> seen;
  for (uint64_t b = 0; b < blocks; ++b) {
    std::vector<uint64_t> corners(2 * rank);
    for (uint64_t& v : corners) v = c.U(width);
    TESSERA_RETURN_IF_ERROR(c.status());
    for (uint32_t d = 0; d < rank; ++d) {
      const uint64_t start = corners[d], end = corners[rank + d];
      if (end < start || end == kSelectionUnlimited) {
        c.Fail("block " + std::to_string(b) + " dimension " + std::to_string(d) + " ends at " + std::to_string(end) +
               " before its start " + std::to_string(start));
        return c.status();
      }
      intervals[d].insert({start, end});
    }
    all_corners.insert(all_corners.end(), corners.begin(), corners.end());
    seen.insert(std::move(corners));
  }
  // Not the product of regular intervals: kept as the union of its blocks.
  auto irregular = [&]() -> Result<DecodedSelection> {
    DecodedSelection list;
    list.kind = SelectionKind::kBlocks;
    list.rank = rank;
    list.blocks = std::move(all_corners);
    *pos = c.pos();
    return list;
  };
  uint64_t product = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    const auto& set = intervals[d];
    const uint64_t block = set.begin()->second - set.begin()->first + 1;
    const uint64_t stride = set.size() > 1 ? std::next(set.begin())->first - set.begin()->first : block;
    uint64_t expected_start = set.begin()->first;
    for (const auto& [start, end] : set) {
      if (start != expected_start || end - start + 1 != block || stride < block) return irregular();
      expected_start += stride;
    }
    product = product > UINT64_MAX / set.size() ? UINT64_MAX : product * set.size();
    sel.dims.push_back({set.begin()->first, stride, set.size(), block});
  }
  if (product != blocks || seen.size() != blocks) return irregular();
  *pos = c.pos();
  return sel;
}

}  // namespace tessera::hdf5
