#include "tessera/read/selection_read.h"

#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"

namespace tessera {
namespace {

// The dimension-0 source positions of a selection, in output order.
std::vector<int64_t> Rows(const index::DimSlice& s) {
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < s.count; ++i) rows.push_back(s.start + i * s.step);
  return rows;
}

TEST(SplitIntoPiecesTest, HandCheckedPositiveStep) {
  // 10 rows of 4 x 2-byte elements (8 bytes a row), chunks of 3 rows, pieces of <= 16 bytes.
  Hyperslab sel = *ParseSliceExpression("1:10", {10, 4});
  std::vector<Hyperslab> pieces = SplitIntoPieces(sel, 3, 2, 16);
  // Chunk rows touched: [1,3) [3,6) [6,9) [9,10) -> 2, 3, 3, 1 rows; a piece never splits one.
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(Rows(pieces[0].dims[0]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Rows(pieces[1].dims[0]), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(Rows(pieces[2].dims[0]), (std::vector<int64_t>{6, 7, 8}));
  EXPECT_EQ(Rows(pieces[3].dims[0]), (std::vector<int64_t>{9}));
  for (const Hyperslab& p : pieces) EXPECT_EQ(p.dims[1].count, 4);
}

TEST(SplitIntoPiecesTest, HandCheckedNegativeStep) {
  Hyperslab sel = *ParseSliceExpression("::-2", {10, 4});  // rows 9 7 5 3 1
  std::vector<Hyperslab> pieces = SplitIntoPieces(sel, 4, 1, 8);  // chunks [0,4) [4,8) [8,10)
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(Rows(pieces[0].dims[0]), (std::vector<int64_t>{9}));
  EXPECT_EQ(Rows(pieces[1].dims[0]), (std::vector<int64_t>{7, 5}));
  EXPECT_EQ(Rows(pieces[2].dims[0]), (std::vector<int64_t>{3, 1}));
}

TEST(SplitIntoPiecesTest, RandomSelectionsConcatenateToTheWhole) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t n = 1 + rng() % 60, chunk = 1 + rng() % 9;
    const int64_t start = static_cast<int64_t>(rng() % (n + 4)) - 2, stop = static_cast<int64_t>(rng() % (n + 4)) - 2;
    int64_t step = 1 + rng() % 7;
    if (rng() % 2) step = -step;
    std::string expr = std::to_string(start) + ":" + std::to_string(stop) + ":" + std::to_string(step);
    if (rng() % 4 == 0) expr = "::" + std::to_string(step);
    Hyperslab sel = *ParseSliceExpression(expr + ",:", {n, 3});
    const int64_t max_bytes = 1 + rng() % 40;
    std::vector<Hyperslab> pieces = SplitIntoPieces(sel, chunk, 1, max_bytes);
    if (sel.NumElements() == 0) {
      EXPECT_EQ(pieces.size(), 1u);
      continue;
    }
    std::vector<int64_t> joined;
    for (const Hyperslab& p : pieces) {
      ASSERT_GT(p.dims[0].count, 0) << expr;
      for (int64_t r : Rows(p.dims[0])) joined.push_back(r);
      // A piece over budget holds exactly the rows of one chunk.
      if (p.dims[0].count * 3 > max_bytes) {
        const std::vector<int64_t> rows = Rows(p.dims[0]);
        EXPECT_EQ(rows.front() / chunk, rows.back() / chunk) << expr;
      }
    }
    EXPECT_EQ(joined, Rows(sel.dims[0])) << expr << " chunk " << chunk << " max " << max_bytes;
    // No chunk row is split across two pieces.
    for (size_t i = 1; i < pieces.size(); ++i) {
      const int64_t last = Rows(pieces[i - 1].dims[0]).back(), first = Rows(pieces[i].dims[0]).front();
      EXPECT_NE(last / chunk, first / chunk) << expr;
    }
  }
}

TEST(SplitIntoPiecesTest, EmptySelectionIsOnePiece) {
  Hyperslab sel = *ParseSliceExpression("5:5", {10});
  EXPECT_EQ(SplitIntoPieces(sel, 3, 1, 4).size(), 1u);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(SliceExpression, StepsNearTheInt64LimitsSelectAsNumpyDoes) {
  const std::vector<int64_t> shape = {10};
  struct Case {
    const char* expr;
    int64_t start, count;
  };
  for (const Case& c : {Case{"::9223372036854775807", 0, 1}, Case{"::-9223372036854775808", 9, 1},
                        Case{"::-9223372036854775807", 9, 1}, Case{"3::99999999999999999999", 3, 1},
                        Case{"::-99999999999999999999", 9, 1}, Case{"99999999999999999999:", 10, 0},
                        Case{"-99999999999999999999::-1", 0, 0}, Case{"5:-99999999999999999999:-3", 5, 2}}) {
    Result<Hyperslab> h = ParseSliceExpression(c.expr, shape);
    ASSERT_TRUE(h.ok()) << c.expr << ": " << h.status().ToString();
    EXPECT_EQ(h->dims[0].count, c.count) << c.expr;
    if (c.count > 0) EXPECT_EQ(h->dims[0].start, c.start) << c.expr;
  }
  // An index that large is out of range, not an overflow.
  EXPECT_ERROR(ParseSliceExpression("99999999999999999999", shape), ErrorKind::kOutOfRange,
               "slice \"99999999999999999999\"", "out of range for dimension 0 of extent 10");
}

TEST(SliceExpression, EllipsisAndNewAxisAreNumpyBasicIndexing) {
  const std::vector<int64_t> shape = {4, 5, 6};
  Result<Hyperslab> h = ParseSliceExpression("..., 2", shape);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->OutputShape(), (std::vector<int64_t>{4, 5}));
  EXPECT_TRUE(h->dropped[2]);
  h = ParseSliceExpression("1, ..., ::2", shape);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->OutputShape(), (std::vector<int64_t>{5, 3}));
  h = ParseSliceExpression("None, 1:3, None, ...", shape);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->OutputShape(), (std::vector<int64_t>{2, 5, 6}));
  h = ParseSliceExpression("0, 0, 0, ...", shape);  // an ellipsis may stand for nothing
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->NumElements(), 1);
  EXPECT_ERROR(ParseSliceExpression("..., 1, ...", shape), ErrorKind::kInvalidArgument, "slice \"..., 1, ...\"",
               "single ellipsis");
  EXPECT_ERROR(ParseSliceExpression("0, 0, 0, 0, ...", shape), ErrorKind::kOutOfRange, "slice \"0, 0, 0, 0, ...\"",
               "4 entries for an array of rank 3");
}

// A rank-1 int32 source whose element at position x holds x % 1000003 (computed, not stored).
class PositionSource final : public ChunkSource {
 public:
  PositionSource(int64_t size, int64_t chunk) : shape_{size}, chunk_{chunk} {}
  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_; }
  DataType dtype() const override { return DataType::kInt32; }
  const FillValue& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t> coords, Bytes* out) const override {
    out->resize(static_cast<size_t>(chunk_[0]) * 4);
    for (int64_t i = 0; i < chunk_[0]; ++i) {
      const int32_t v = static_cast<int32_t>((coords[0] * chunk_[0] + i) % 1000003);
      std::memcpy(out->data() + 4 * i, &v, 4);
    }
    return true;
  }

 private:
  std::vector<int64_t> shape_, chunk_;
  FillValue fill_{};
};

// Found by fuzzing (UBSan): a step so large that each chunk holds one selected position made the
// in-chunk stride in bytes (step x chunk stride) overflow, though it is never used.
TEST(ReadHyperslab, StepsOfAnySizeAcrossHugeArrays) {
  const int64_t size = int64_t{1} << 62;
  PositionSource source(size, 6);
  for (const int64_t step : {int64_t{1} << 61, (int64_t{1} << 62) - 5, INT64_MAX, -(int64_t{1} << 60)}) {
    Hyperslab sel;
    sel.dims = {index::DimSlice{step > 0 ? 1 : size - 2, step, 0}};
    sel.dropped = {false};
    std::vector<int64_t> positions;
    for (int64_t x = sel.dims[0].start; x >= 0 && x < size && positions.size() < 4;) {
      positions.push_back(x);
      if (__builtin_add_overflow(x, step, &x)) break;
    }
    sel.dims[0].count = static_cast<int64_t>(positions.size());
    std::vector<int32_t> out(positions.size(), -1);
    ASSERT_TRUE(ReadHyperslab(source, sel, reinterpret_cast<uint8_t*>(out.data())).ok()) << step;
    for (size_t i = 0; i < positions.size(); ++i)
      EXPECT_EQ(out[i], static_cast<int32_t>(positions[i] % 1000003)) << "step " << step << ", position " << positions[i];
  }
}

}  // namespace
}  // namespace tessera
