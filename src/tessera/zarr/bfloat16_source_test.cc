#include "tessera/zarr/bfloat16_source.h"

#include <gtest/gtest.h>

#include <cstring>

namespace tessera::zarr {
namespace {

// A 1-D uint16 array of 6 elements in chunks of 2: chunk 1 is not stored.
class BitsSource : public ChunkSource {
 public:
  BitsSource() { fill_.bytes = {0xc0, 0x7f}; }  // 0x7fc0, NaN
  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_; }
  DataType dtype() const override { return DataType::kUInt16; }
  const FillValue& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t> coords, Bytes* out) const override {
    EXPECT_EQ(coords.size(), 1u);  // the element's byte dimension is not the bits source's
    if (coords[0] == 1) return false;
    const uint16_t values[2] = {static_cast<uint16_t>(0x3f80 + coords[0]), 0xbf80};
    out->resize(sizeof values);
    std::memcpy(out->data(), values, sizeof values);
    return true;
  }

 private:
  std::vector<int64_t> shape_{6}, chunk_{2};
  FillValue fill_;
};

TEST(BFloat16SourceTest, PresentsTwoBytesPerElementAndFillsAbsentChunks) {
  std::unique_ptr<ChunkSource> source = BFloat16ElementSource(std::make_shared<BitsSource>());
  EXPECT_EQ(source->shape(), (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(source->read_chunk_shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(source->dtype(), DataType::kUInt8);
  ASSERT_NE(source->element_type(), nullptr);
  EXPECT_EQ(source->element_type()->numpy, "bfloat16");
  EXPECT_EQ(source->element_type()->item_bytes, 2u);
  EXPECT_EQ(source->element_type()->fill, (Bytes{0xc0, 0x7f}));

  Hyperslab all = Hyperslab::All(source->shape());
  all.dims[0] = {5, -1, 6};  // backwards, across the absent chunk
  uint16_t out[6];
  ASSERT_TRUE(ReadHyperslab(*source, all, reinterpret_cast<uint8_t*>(out)).ok());
  const uint16_t expected[6] = {0xbf80, 0x3f82, 0x7fc0, 0x7fc0, 0xbf80, 0x3f80};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], expected[i]) << i;
}

}  // namespace
}  // namespace tessera::zarr
