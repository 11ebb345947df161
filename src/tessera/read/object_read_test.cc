#include "tessera/read/object_read.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

// A 2-D array whose element (i, j) is "i,j"; the chunks listed in `absent` are not stored.
class LabelSource final : public ObjectChunkSource {
 public:
  LabelSource(std::vector<int64_t> shape, std::vector<int64_t> chunk, std::vector<std::vector<int64_t>> absent)
      : shape_(std::move(shape)), chunk_(std::move(chunk)), absent_(std::move(absent)) {}
  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_; }
  const ObjectType& object_type() const override { return type_; }
  const std::string& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t> coords, std::vector<std::string>* out) const override {
    std::vector<int64_t> c(coords.begin(), coords.end());
    for (const auto& a : absent_)
      if (a == c) return false;
    out->clear();
    for (int64_t i = 0; i < chunk_[0]; ++i)
      for (int64_t j = 0; j < chunk_[1]; ++j)
        out->push_back(std::to_string(c[0] * chunk_[0] + i) + "," + std::to_string(c[1] * chunk_[1] + j));
    return true;
  }

 private:
  std::vector<int64_t> shape_, chunk_;
  std::vector<std::vector<int64_t>> absent_;
  ObjectType type_{ObjectKind::kString, "", "string"};
  std::string fill_ = "fill";
};

std::string Expected(int64_t i, int64_t j, int64_t chunk0, int64_t chunk1) {
  if (i / chunk0 == 1 && j / chunk1 == 0) return "fill";  // chunk (1, 0) is absent
  return std::to_string(i) + "," + std::to_string(j);
}

TEST(ObjectReadTest, StridedReversedSelectionsMatchElementwise) {
  LabelSource source({7, 9}, {3, 4}, {{1, 0}});
  for (const char* expr : {":, :", "::-1, 1:8:3", "5, ::-2", "1:7:2, -1", "2:2, :"}) {
    Result<Hyperslab> sel = ParseSliceExpression(expr, source.shape());
    ASSERT_TRUE(sel.ok());
    std::vector<std::string> out;
    ASSERT_TRUE(ReadObjectHyperslab(source, *sel, &out).ok()) << expr;
    ASSERT_EQ(static_cast<int64_t>(out.size()), sel->NumElements()) << expr;
    size_t at = 0;
    for (int64_t a = 0; a < sel->dims[0].count; ++a)
      for (int64_t b = 0; b < sel->dims[1].count; ++b) {
        const int64_t i = sel->dims[0].start + a * sel->dims[0].step;
        const int64_t j = sel->dims[1].start + b * sel->dims[1].step;
        EXPECT_EQ(out[at++], Expected(i, j, 3, 4)) << expr << " at (" << i << ", " << j << ")";
      }
  }
}

TEST(ObjectReadTest, SelectionOutsideTheArrayIsOutOfRange) {
  LabelSource source({4, 4}, {2, 2}, {});
  Hyperslab sel = Hyperslab::All({5, 4});
  std::vector<std::string> out;
  EXPECT_EQ(ReadObjectHyperslab(source, sel, &out).kind(), ErrorKind::kOutOfRange);
}

TEST(ObjectReadTest, PlaceholderRefusesFixedSizeReadsNamingTheType) {
  auto source = std::make_shared<LabelSource>(std::vector<int64_t>{4, 4}, std::vector<int64_t>{2, 2},
                                              std::vector<std::vector<int64_t>>{});
  std::unique_ptr<ChunkSource> placeholder = ObjectArrayPlaceholder(source, "names.zarr");
  EXPECT_EQ(placeholder->shape(), source->shape());
  Bytes bytes;
  int64_t coords[2] = {0, 0};
  Result<bool> r = placeholder->ReadChunk(coords, &bytes);
  ASSERT_EQ(r.status().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(r.status().message().find("names.zarr"), std::string::npos);
  EXPECT_NE(r.status().message().find("variable-length (string)"), std::string::npos);
}

}  // namespace
}  // namespace tessera
