#include "tessera/codec/transpose_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "tessera/codec/codec_factories.h"
#include "cpp_support/codec_helpers.h"
#include "cpp_support/status_matchers.h"
#include "tessera/index/index.h"

namespace tessera {
namespace {

using codec_test::MakeSpec;
using codec_test::RandomBytes;

// The definition, element by element: B[b] = A[a] with b[i] = a[order[i]].
Bytes ReferenceTranspose(const ChunkSpec& spec, const std::vector<int>& order, const Bytes& in) {
  const int rank = static_cast<int>(order.size());
  const size_t item = ItemSize(spec.dtype);
  std::vector<int64_t> encoded_shape(rank);
  for (int i = 0; i < rank; ++i) encoded_shape[i] = spec.shape[order[i]];
  Bytes out(in.size());
  std::vector<int64_t> a(rank), b(rank);
  for (int64_t idx = 0; idx < spec.NumElements(); ++idx) {
    index::Unravel(rank, spec.shape.data(), idx, a.data());
    for (int i = 0; i < rank; ++i) b[i] = a[order[i]];
    const int64_t out_idx = index::Ravel(rank, encoded_shape.data(), b.data());
    std::copy_n(in.begin() + idx * item, item, out.begin() + out_idx * item);
  }
  return out;
}

TEST(TransposeCodecTest, TwoByThreeHandChecked) {
  const TransposeCodec codec({1, 0});
  const ChunkSpec spec = MakeSpec(DataType::kUInt8, {2, 3});
  // A = [[0, 1, 2], [3, 4, 5]]  ->  B = [[0, 3], [1, 4], [2, 5]]
  const Bytes a = {0, 1, 2, 3, 4, 5};
  Bytes b;
  ASSERT_TRUE(codec.Encode(spec, a, &b).ok());
  EXPECT_EQ(b, Bytes({0, 3, 1, 4, 2, 5}));
  auto encoded_spec = codec.EncodedSpec(spec);
  ASSERT_TRUE(encoded_spec.ok());
  EXPECT_EQ(encoded_spec->shape, std::vector<int64_t>({3, 2}));
  Bytes back;
  ASSERT_TRUE(codec.Decode(spec, b, &back).ok());
  EXPECT_EQ(back, a);
}

TEST(TransposeCodecTest, ThreeDimensionalFollowsDefinition) {
  // order {2, 0, 1}: B.shape = (A2, A0, A1) and B[k, i, j] = A[i, j, k].
  const TransposeCodec codec({2, 0, 1});
  const ChunkSpec spec = MakeSpec(DataType::kUInt16, {2, 3, 4});
  Bytes a(spec.NumBytes());
  for (size_t e = 0; e < 24; ++e) {
    a[2 * e] = static_cast<uint8_t>(e);
    a[2 * e + 1] = 0;
  }
  Bytes b;
  ASSERT_TRUE(codec.Encode(spec, a, &b).ok());
  // B[k=1, i=1, j=2] == A[1, 2, 1] == 1*12 + 2*4 + 1 == 21; its B index is 1*6 + 1*3 + 2 == 11.
  EXPECT_EQ(b[2 * 11], 21);
  EXPECT_EQ(b, ReferenceTranspose(spec, {2, 0, 1}, a));
}

TEST(TransposeCodecTest, RoundTripsAllPermutationsAndTypes) {
  uint64_t seed = 7;
  for (const auto& shape : codec_test::TestShapes()) {
    std::vector<int> order(shape.size());
    std::iota(order.begin(), order.end(), 0);
    do {
      const TransposeCodec codec(order);
      for (DataType dtype : {DataType::kUInt8, DataType::kInt16, DataType::kFloat32,
                             DataType::kFloat64, DataType::kComplex128}) {
        const ChunkSpec spec = MakeSpec(dtype, shape);
        const Bytes a = RandomBytes(spec.NumBytes(), seed++);
        Bytes b, back;
        ASSERT_TRUE(codec.Encode(spec, a, &b).ok());
        ASSERT_EQ(b, ReferenceTranspose(spec, order, a));
        ASSERT_TRUE(codec.Decode(spec, b, &back).ok());
        ASSERT_EQ(back, a);
      }
    } while (std::next_permutation(order.begin(), order.end()));
  }
}

TEST(TransposeCodecTest, LargerArraysMatchReference) {
  // Sizes that are not multiples of the copy tiles, and a 2-D case longer than one row band.
  const ChunkSpec specs[] = {MakeSpec(DataType::kFloat32, {33, 17, 9}),
                             MakeSpec(DataType::kUInt8, {1100, 37}),
                             MakeSpec(DataType::kComplex128, {37, 1100})};
  for (const ChunkSpec& spec : specs) {
    const Bytes a = RandomBytes(spec.NumBytes(), 99);
    std::vector<int> order(spec.shape.size());
    std::iota(order.begin(), order.end(), 0);
    do {
      const TransposeCodec codec(order);
      Bytes b, back;
      ASSERT_TRUE(codec.Encode(spec, a, &b).ok());
      ASSERT_EQ(b, ReferenceTranspose(spec, order, a));
      ASSERT_TRUE(codec.Decode(spec, b, &back).ok());
      ASSERT_EQ(back, a);
    } while (std::next_permutation(order.begin(), order.end()));
  }
}

TEST(TransposeCodecTest, RankMismatchAndWrongSize) {
  const TransposeCodec codec({1, 0});
  const ChunkSpec rank3 = MakeSpec(DataType::kUInt8, {2, 2, 2});
  EXPECT_ERROR(codec.EncodedSpec(rank3), ErrorKind::kInvalidArgument, "transpose codec", "2 entries", "rank 3");
  Bytes out;
  EXPECT_ERROR(codec.Encode(rank3, Bytes(8), &out), ErrorKind::kInvalidArgument, "transpose codec", "rank 3");
  const ChunkSpec spec = MakeSpec(DataType::kUInt8, {2, 3});
  EXPECT_ERROR(codec.Encode(spec, Bytes(5), &out), ErrorKind::kInvalidArgument, "transpose codec", "5 bytes",
               "needs 6");
  EXPECT_ERROR(codec.Decode(spec, Bytes(7), &out), ErrorKind::kCorruptData, "transpose codec", "7 bytes",
               "expected 6");
}

TEST(TransposeCodecTest, FactoryAndJsonRoundTrip) {
  const ChunkSpec spec = MakeSpec(DataType::kUInt8, {2, 3, 4});
  const nlohmann::json config = {{"order", {2, 0, 1}}};
  auto codec = MakeTransposeCodec(config, spec);
  ASSERT_TRUE(codec.ok()) << codec.status().ToString();
  EXPECT_EQ((*codec)->name(), "transpose");
  EXPECT_EQ((*codec)->ToJson(), nlohmann::json({{"name", "transpose"}, {"configuration", config}}));
}

TEST(TransposeCodecTest, FactoryRejectsBadOrder) {
  const ChunkSpec spec = MakeSpec(DataType::kUInt8, {2, 3, 4});
  // A bad order names the field, what it must be and what it got.
  for (const nlohmann::json& config :
       {nlohmann::json({{"order", {0, 1}}}), nlohmann::json({{"order", {0, 1, 1}}}),
        nlohmann::json({{"order", {0, 1, 3}}}), nlohmann::json({{"order", {0, 1, -1}}}),
        nlohmann::json({{"order", "C"}}), nlohmann::json({{"order", {0, 1, 2.5}}})}) {
    EXPECT_ERROR(MakeTransposeCodec(config, spec), ErrorKind::kInvalidArgument, "transpose codec", "\"order\"",
                 "permutation of 0..2", config["order"].dump());
  }
  EXPECT_ERROR(MakeTransposeCodec(nlohmann::json::object(), spec), ErrorKind::kInvalidArgument, "transpose codec",
               "\"order\" is required");
  EXPECT_ERROR(MakeTransposeCodec({{"order", {0, 1, 2}}, {"x", 0}}, spec), ErrorKind::kInvalidArgument,
               "transpose codec", "unknown", "\"x\"");
}

}  // namespace
}  // namespace tessera
