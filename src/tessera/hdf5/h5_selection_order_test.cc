// Point and irregular hyperslab selections on hand-made bytes (each encoding the HDF5 library
// writes) and the element order HDF5 pairs mappings in (checked against a brute-force enumeration).
#include "tessera/hdf5/h5_selection_order.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cpp_support/status_matchers.h"
#include "tessera/hdf5/h5_selection_encoding.h"

namespace tessera::hdf5 {
namespace {

void Put(Bytes* b, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Points, version 1 (u32 fields) or 2 (`width`-byte fields).
Bytes Points(int version, int width, uint32_t rank, const std::vector<std::vector<uint64_t>>& points) {
  Bytes b;
  Put(&b, 1, 4);
  Put(&b, version, 4);
  if (version == 1) {
    Put(&b, 0, 4);
    Put(&b, 8 + points.size() * 4 * rank, 4);
    width = 4;
  } else {
    Put(&b, width, 1);
  }
  Put(&b, rank, 4);
  Put(&b, points.size(), width);
  for (const auto& p : points)
    for (uint64_t v : p) Put(&b, v, width);
  return b;
}

// An irregular hyperslab, version 3 with `width`-byte fields: block count, then per block
// start[rank], end[rank].
Bytes BlocksV3(int width, uint32_t rank, const std::vector<std::vector<uint64_t>>& blocks) {
  Bytes b;
  Put(&b, 2, 4);
  Put(&b, 3, 4);
  Put(&b, 0, 1);  // not regular
  Put(&b, width, 1);
  Put(&b, rank, 4);
  Put(&b, blocks.size(), width);
  for (const auto& corners : blocks)
    for (uint64_t v : corners) Put(&b, v, width);
  return b;
}

Result<DecodedSelection> Decode(const Bytes& b) {
  size_t pos = 0;
  Result<DecodedSelection> s = DecodeSelection(b, &pos, "f.h5: sel");
  if (s.ok()) EXPECT_EQ(pos, b.size());
  return s;
}

TEST(H5SelectionPoints, EveryEncodingDecodesInStoredOrder) {
  const std::vector<std::vector<uint64_t>> pts = {{5, 1}, {0, 3}, {2, 2}};
  for (auto [version, width] : std::vector<std::pair<int, int>>{{1, 4}, {2, 2}, {2, 4}, {2, 8}}) {
    Result<DecodedSelection> s = Decode(Points(version, width, 2, pts));
    ASSERT_TRUE(s.ok()) << version << "/" << width << ": " << s.status().ToString();
    EXPECT_EQ(s->kind, SelectionKind::kPoints);
    EXPECT_EQ(s->rank, 2u);
    EXPECT_EQ(s->points, (std::vector<uint64_t>{5, 1, 0, 3, 2, 2}));
    EXPECT_EQ(s->ToString(), "3 points");
  }
  Bytes bad_width = Points(2, 3, 1, {{1}});
  EXPECT_ERROR(Decode(bad_width), ErrorKind::kCorruptData, "f.h5: sel", "encoded size 3");
  Bytes bad_version = Points(2, 4, 1, {{1}});
  bad_version[4] = 7;
  EXPECT_ERROR(Decode(bad_version), ErrorKind::kCorruptData, "point selection version 7");
  Bytes short_list = Points(2, 4, 2, {{1, 2}, {3, 4}});
  short_list.resize(short_list.size() - 4);
  EXPECT_ERROR(Decode(short_list), ErrorKind::kCorruptData, "2 points of 8 bytes do not fit");
}

TEST(H5SelectionPoints, APathologicalListIsRefusedNamingItsCount) {
  Bytes b = Points(2, 8, 1, {});
  b.resize(b.size() - 8);
  Put(&b, kMaxSelectionPoints + 1, 8);
  EXPECT_ERROR(Decode(b), ErrorKind::kUnsupported, "f.h5: sel", std::to_string(kMaxSelectionPoints + 1) + " points",
               "at most " + std::to_string(kMaxSelectionPoints));
}

TEST(H5SelectionBlocks, IrregularListsInEveryWidth) {
  for (int width : {2, 4, 8}) {
    Result<DecodedSelection> s = Decode(BlocksV3(width, 2, {{0, 0, 1, 2}, {5, 4, 7, 5}}));
    ASSERT_TRUE(s.ok()) << width << ": " << s.status().ToString();
    EXPECT_EQ(s->kind, SelectionKind::kBlocks);
    EXPECT_EQ(s->blocks, (std::vector<uint64_t>{0, 0, 1, 2, 5, 4, 7, 5}));
  }
  Bytes many = BlocksV3(8, 1, {});
  many.resize(many.size() - 8);
  Put(&many, kMaxSelectionBlocks + 1, 8);
  for (uint64_t i = 0; i <= kMaxSelectionBlocks; ++i) {
    Put(&many, 2 * i, 8);
    Put(&many, 2 * i, 8);
  }
  EXPECT_ERROR(Decode(many), ErrorKind::kUnsupported, std::to_string(kMaxSelectionBlocks + 1) + " blocks");
}

// Every selected element in HDF5's order, by brute force: C order of the union for hyperslabs.
std::vector<std::vector<uint64_t>> BruteForce(const DecodedSelection& sel, const std::vector<uint64_t>& extent) {
  std::vector<std::vector<uint64_t>> out;
  const size_t r = extent.size();
  if (sel.kind == SelectionKind::kPoints) {
    for (size_t i = 0; i < sel.points.size(); i += r) out.emplace_back(sel.points.begin() + i, sel.points.begin() + i + r);
    return out;
  }
  std::set<std::vector<uint64_t>> in;
  for (size_t b = 0; b < sel.blocks.size(); b += 2 * r) {
    std::vector<uint64_t> c(sel.blocks.begin() + b, sel.blocks.begin() + b + r);
    while (true) {
      in.insert(c);
      size_t d = r;
      while (d-- > 0) {
        if (++c[d] <= sel.blocks[b + r + d]) break;
        c[d] = sel.blocks[b + d];
      }
      if (d == static_cast<size_t>(-1)) break;
    }
  }
  return {in.begin(), in.end()};  // std::set orders vectors lexicographically: C order
}

TEST(H5SelectionOrder, RandomBlockListsAndPointsMatchBruteForce) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t r = 1 + rng() % 3;
    std::vector<uint64_t> extent(r);
    for (uint64_t& e : extent) e = 1 + rng() % 9;
    DecodedSelection sel;
    sel.rank = static_cast<uint32_t>(r);
    const size_t n = 1 + rng() % 6;
    if (trial % 3 == 0) {
      sel.kind = SelectionKind::kPoints;
      for (size_t i = 0; i < n * r; ++i) sel.points.push_back(rng() % extent[i % r]);
    } else {
      sel.kind = SelectionKind::kBlocks;  // blocks may overlap: their union counts once
      for (size_t i = 0; i < n; ++i) {
        std::vector<uint64_t> lo(r), hi(r);
        for (size_t d = 0; d < r; ++d) {
          lo[d] = rng() % extent[d];
          hi[d] = lo[d] + rng() % (extent[d] - lo[d]);
        }
        sel.blocks.insert(sel.blocks.end(), lo.begin(), lo.end());
        sel.blocks.insert(sel.blocks.end(), hi.begin(), hi.end());
      }
    }
    Result<OrderedSelection> order = OrderedSelection::Make(sel, extent, "t");
    ASSERT_TRUE(order.ok()) << order.status().ToString();
    const auto expected = BruteForce(sel, extent);
    ASSERT_EQ(order->size(), expected.size()) << "trial " << trial;
    std::vector<uint64_t> c(r);
    for (uint64_t k = 0; k < expected.size(); ++k) {
      const uint64_t run = order->At(k, c);
      ASSERT_EQ(c, expected[k]) << "trial " << trial << " k " << k;
      ASSERT_GE(run, 1u);
      for (uint64_t j = 1; j < run; ++j) {  // a run continues along the last dimension
        std::vector<uint64_t> next = expected[k];
        next[r - 1] += j;
        ASSERT_EQ(expected[k + j], next) << "trial " << trial;
      }
    }
    // The runs inside a random box are exactly the elements inside it, each once.
    std::vector<uint64_t> lo(r), hi(r);
    for (size_t d = 0; d < r; ++d) {
      lo[d] = rng() % extent[d];
      hi[d] = lo[d] + 1 + rng() % (extent[d] - lo[d]);
    }
    // ... in ascending k (points: their stored order).
    std::map<uint64_t, std::vector<uint64_t>> seen;
    order->ForEachRunInBox(lo, hi, [&](uint64_t k, std::span<const uint64_t> at, uint64_t n) {
      ASSERT_TRUE(seen.empty() || k > seen.rbegin()->first) << "trial " << trial << " k " << k;
      for (uint64_t j = 0; j < n; ++j) {
        std::vector<uint64_t> e(at.begin(), at.end());
        e[r - 1] += j;
        ASSERT_TRUE(seen.emplace(k + j, e).second);
      }
    });
    size_t inside = 0;
    for (uint64_t k = 0; k < expected.size(); ++k) {
      bool in = true;
      for (size_t d = 0; d < r; ++d) in = in && expected[k][d] >= lo[d] && expected[k][d] < hi[d];
      if (!in) continue;
      ++inside;
      ASSERT_TRUE(seen.count(k)) << "trial " << trial << " k " << k;
      EXPECT_EQ(seen[k], expected[k]);
    }
    EXPECT_EQ(seen.size(), inside) << "trial " << trial;
  }
}

TEST(H5SelectionOrder, RegularSelectionsAndBounds) {
  OrderedSelection s = OrderedSelection::FromRegular({{1, 4, 3, 2}, {0, 3, 2, 1}});
  EXPECT_EQ(s.size(), 12u);
  std::vector<uint64_t> c(2);
  s.At(5, c);  // row position 2 (index 5), column position 1 (index 3)
  EXPECT_EQ(c, (std::vector<uint64_t>{5, 3}));
  EXPECT_EQ(s.bounds_lo(), (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(s.bounds_hi(), (std::vector<uint64_t>{11, 4}));
  EXPECT_TRUE(SelectionFitsExtent({1, 4, 3, 2}, 11));
  EXPECT_FALSE(SelectionFitsExtent({1, 4, 3, 2}, 10));
  EXPECT_TRUE(SelectionFitsExtent({0, 1, 1, 10}, 10));
  // 2^63 + 1 blocks of 2: count x block wraps to 2 in 64 bits, which must not pass as 2 elements.
  EXPECT_FALSE(SelectionFitsExtent({0, 2, (uint64_t{1} << 63) + 1, 2}, 10));
  EXPECT_FALSE(SelectionFitsExtent({0, 1, 1, ~uint64_t{0}}, 10));
  DecodedSelection wrapping;
  wrapping.dims = {{0, 2, (uint64_t{1} << 63) + 1, 2}};
  EXPECT_ERROR(OrderedSelection::Make(wrapping, {10}, "f.h5: v"), ErrorKind::kCorruptData, "leaves dimension 0");
  DecodedSelection out_of_range;
  out_of_range.kind = SelectionKind::kPoints;
  out_of_range.rank = 1;
  out_of_range.points = {3, 12};
  EXPECT_ERROR(OrderedSelection::Make(out_of_range, {10}, "f.h5: v"), ErrorKind::kCorruptData, "f.h5: v",
               "point 1 reaches 12 in dimension 0 (extent 10)");
}

TEST(H5SelectionOrder, PathologicallyOverlappingBlocksAreRefused) {
  // A staircase of 65536 blocks each covering all later rows: ordering their union is quadratic.
  DecodedSelection sel;
  sel.kind = SelectionKind::kBlocks;
  sel.rank = 2;
  const uint64_t n = kMaxSelectionBlocks;
  for (uint64_t i = 0; i < n; ++i) sel.blocks.insert(sel.blocks.end(), {i, 0, n - 1, 9});
  EXPECT_ERROR(OrderedSelection::Make(sel, {n, 10}, "f.h5: v"), ErrorKind::kUnsupported, "f.h5: v",
               std::to_string(n) + " blocks", "steps to order");
  // The same count of disjoint blocks (what HDF5 writes) orders quickly.
  DecodedSelection disjoint = sel;
  disjoint.blocks.clear();
  for (uint64_t i = 0; i < n; ++i) disjoint.blocks.insert(disjoint.blocks.end(), {i, i % 7, i, i % 7 + 2});
  Result<OrderedSelection> ok = OrderedSelection::Make(disjoint, {n, 10}, "f.h5: v");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->size(), 3 * n);
}

}  // namespace
}  // namespace tessera::hdf5
