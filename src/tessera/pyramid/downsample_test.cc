#include "tessera/pyramid/downsample.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"
#include "tessera/index/index.h"

namespace tessera::pyramid {
namespace {

template <typename T>
Bytes AsBytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
std::vector<T> FromBytes(const Bytes& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

// Streams the rows of `data` (shape[0] rows) through a RowDownsampler; returns every output row,
// the last from ReducePending when the rows end inside a group.
Bytes Downsample(DataType dtype, DownsampleMethod method, const std::vector<int64_t>& shape,
                 const std::vector<int64_t>& factors, const Bytes& data) {
  auto r = RowDownsampler::Create(dtype, method, shape, factors);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  RowDownsampler& d = **r;
  Bytes out, row(static_cast<size_t>(d.output_row_bytes()));
  for (int64_t i = 0; i < shape[0]; ++i)
    if (d.AddRow(data.data() + i * d.input_row_bytes(), row.data())) out.insert(out.end(), row.begin(), row.end());
  if (d.ReducePending(row.data())) out.insert(out.end(), row.begin(), row.end());
  return out;
}

template <typename T>
std::vector<T> Downsample(DownsampleMethod method, const std::vector<int64_t>& shape,
                          const std::vector<int64_t>& factors, const std::vector<T>& data, DataType dtype) {
  return FromBytes<T>(Downsample(dtype, method, shape, factors, AsBytes(data)));
}

TEST(DownsampleTest, MeanRoundsHalfToEvenAndCutsEdgeBlocks) {
  // 2 x 5, factors 2 x 2: blocks {1,2,3,4} = 2.5 -> 2, {3,4,5,6} = 4.5 -> 4, {5,8} = 6.5 -> 6.
  EXPECT_EQ(Downsample<uint8_t>(DownsampleMethod::kMean, {2, 5}, {2, 2}, {1, 2, 3, 4, 5, 3, 4, 5, 6, 8},
                                DataType::kUInt8),
            (std::vector<uint8_t>{2, 4, 6}));
  // Negative sums: -1.5 -> -2, -2.5 -> -2, 1.5 -> 2, -4.5 -> -4, -4; one row, one group.
  EXPECT_EQ(Downsample<int16_t>(DownsampleMethod::kMean, {1, 9}, {1, 2}, {-1, -2, -1, -4, 1, 2, -5, -4, -4},
                                DataType::kInt16),
            (std::vector<int16_t>{-2, -2, 2, -4, -4}));
  // 64-bit values whose sum needs 128 bits.
  const uint64_t big = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(Downsample<uint64_t>(DownsampleMethod::kMean, {2, 1}, {2, 1}, {big, big - 2}, DataType::kUInt64),
            (std::vector<uint64_t>{big - 1}));
  // bool: {0,1} is a tie -> 0; {1,1,0} -> 1.
  EXPECT_EQ(Downsample<uint8_t>(DownsampleMethod::kMean, {1, 5}, {1, 2}, {0, 1, 1, 1, 0}, DataType::kBool),
            (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(Downsample<uint8_t>(DownsampleMethod::kMode, {3, 1}, {3, 1}, {1, 1, 0}, DataType::kBool),
            (std::vector<uint8_t>{1}));
}

TEST(DownsampleTest, MeanSumsDoNotOverflowAtTheNarrowSumLimit) {
  // 8- and 16-bit means sum in 32 bits up to 2^15 elements a block, and in 64 bits beyond: blocks
  // of 2^15 and 2^17 extreme values, and a 2^15 block of int16 minima, stay exact.
  for (const int64_t cols : {int64_t{128}, int64_t{512}}) {
    const std::vector<uint16_t> high(static_cast<size_t>(2 * 128 * cols), 65535);
    EXPECT_EQ(Downsample<uint16_t>(DownsampleMethod::kMean, {2, 128, cols}, {2, 128, cols}, high, DataType::kUInt16),
              (std::vector<uint16_t>{65535}))
        << cols;
  }
  const std::vector<int16_t> low(1 << 15, std::numeric_limits<int16_t>::min());
  EXPECT_EQ(Downsample<int16_t>(DownsampleMethod::kMean, {1, 1 << 15}, {1, 1 << 15}, low, DataType::kInt16),
            (std::vector<int16_t>{std::numeric_limits<int16_t>::min()}));
}

TEST(DownsampleTest, MedianModeStrideMinMax) {
  const std::vector<int32_t> row = {4, 1, 3, 2, 3, 1, 3, 1, 2, 7};
  EXPECT_EQ(Downsample<int32_t>(DownsampleMethod::kMedian, {1, 2, 5}, {1, 1, 5}, row, DataType::kInt32),
            (std::vector<int32_t>{3, 2}));  // {4,1,3,2,3} -> 3; {1,3,1,2,7} -> lower median of 1,1,2,3,7 = 2
  EXPECT_EQ(Downsample<int32_t>(DownsampleMethod::kMedian, {1, 10}, {1, 4}, row, DataType::kInt32),
            (std::vector<int32_t>{2, 1, 2}));  // 1,2,3,4 -> 2; 1,1,3,3 -> 1; 2,7 -> 2
  EXPECT_EQ(Downsample<int32_t>(DownsampleMethod::kMode, {1, 10}, {1, 5}, row, DataType::kInt32),
            (std::vector<int32_t>{3, 1}));  // {4,1,3,2,3} -> 3; {1,3,1,2,7} -> 1
  EXPECT_EQ(Downsample<int32_t>(DownsampleMethod::kMode, {1, 4}, {1, 4}, {3, 1, 3, 1}, DataType::kInt32),
            (std::vector<int32_t>{1}));  // a tie: the smaller value
  EXPECT_EQ(Downsample<int32_t>(DownsampleMethod::kStride, {2, 5}, {2, 2}, row, DataType::kInt32),
            (std::vector<int32_t>{4, 3, 3}));
  EXPECT_EQ(Downsample<int32_t>(DownsampleMethod::kMin, {2, 5}, {2, 3}, row, DataType::kInt32),
            (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(Downsample<int32_t>(DownsampleMethod::kMax, {2, 5}, {2, 3}, row, DataType::kInt32),
            (std::vector<int32_t>{4, 7}));
  // A NaN never wins; a block of NaNs gives the start value.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Downsample<float>(DownsampleMethod::kMin, {1, 4}, {1, 2}, {nan, 2, nan, nan}, DataType::kFloat32),
            (std::vector<float>{2, inf}));
  EXPECT_EQ(Downsample<float>(DownsampleMethod::kMax, {1, 4}, {1, 2}, {nan, 2, nan, nan}, DataType::kFloat32),
            (std::vector<float>{2, -inf}));
}

TEST(DownsampleTest, RefusesWhatIsNotDefined) {
  EXPECT_ERROR(RowDownsampler::Create(DataType::kComplex64, DownsampleMethod::kMedian, {{4, 4}}, {{2, 2}}),
               ErrorKind::kUnsupported, "median", "complex64");
  EXPECT_TRUE(RowDownsampler::Create(DataType::kComplex64, DownsampleMethod::kMode, {{4, 4}}, {{2, 2}}).ok());
  EXPECT_ERROR(RowDownsampler::Create(DataType::kUInt8, DownsampleMethod::kMean, {{4, 4}}, {{2}}),
               ErrorKind::kInvalidArgument, "1 factors for a rank-2 array");
  EXPECT_ERROR(RowDownsampler::Create(DataType::kUInt8, DownsampleMethod::kMean, {{4, 4}}, {{2, 0}}),
               ErrorKind::kInvalidArgument, "factor 0 of dimension 1");
  EXPECT_ERROR(ParseDownsampleMethod("average"), ErrorKind::kInvalidArgument, "\"average\"",
               "stride, mean, min, max, median or mode");
  EXPECT_EQ(*ParseDownsampleMethod("median"), DownsampleMethod::kMedian);
  EXPECT_EQ(DownsampledShape(std::vector<int64_t>{0, 5, 4, 1}, std::vector<int64_t>{2, 2, 2, 2}),
            (std::vector<int64_t>{0, 3, 2, 1}));
}

// ---------------------------------------------------------------------------------------------
// Random shapes against a direct reference: every output element reduces its whole block,
// visited in row-major order, with the rules written out once more (floor division for the
// rounding, a counting map for the mode).

template <typename T, typename Sum>
std::vector<T> Reference(DownsampleMethod method, const std::vector<int64_t>& shape, const std::vector<int64_t>& f,
                         const std::vector<T>& in) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> out_shape(shape.size());
  int64_t out_n = 1;
  for (int d = 0; d < rank; ++d) out_n *= out_shape[d] = index::CeilDiv(shape[d], f[d]);
  std::vector<T> out(static_cast<size_t>(out_n));
  for (int64_t o = 0; o < out_n; ++o) {
    std::vector<int64_t> oc(rank), lo(rank), hi(rank), c(rank);
    int64_t rem = o;
    for (int d = rank - 1; d >= 0; --d) oc[d] = rem % out_shape[d], rem /= out_shape[d];
    for (int d = 0; d < rank; ++d) lo[d] = oc[d] * f[d], hi[d] = std::min(shape[d], lo[d] + f[d]);
    std::vector<T> block;
    c = lo;
    for (bool more = true; more;) {
      int64_t i = 0;
      for (int d = 0; d < rank; ++d) i = i * shape[d] + c[d];
      block.push_back(in[static_cast<size_t>(i)]);
      more = false;
      for (int d = rank - 1; d >= 0; --d) {
        if (++c[d] < hi[d]) { more = true; break; }
        c[d] = lo[d];
      }
    }
    const int64_t n = static_cast<int64_t>(block.size());
    T r = block[0];
    if (method == DownsampleMethod::kMean) {
      Sum s{};
      for (const T& v : block) s += static_cast<Sum>(v);
      if constexpr (std::is_integral_v<Sum> || std::is_same_v<Sum, __int128> || std::is_same_v<Sum, unsigned __int128>) {
        Sum q = s / n, rr = s % n;
        if (rr < 0) rr += n, q -= 1;  // floor division
        r = static_cast<T>(q + ((2 * rr > n || (2 * rr == n && (q % 2 != 0))) ? 1 : 0));
      } else {
        r = static_cast<T>(s / static_cast<Sum>(n));
      }
    } else if (method == DownsampleMethod::kMin || method == DownsampleMethod::kMax) {
      const bool max = method == DownsampleMethod::kMax;
      bool any = false;
      for (const T& v : block) {
        if (v != v) continue;  // NaN
        if (!any || (max ? r < v : v < r)) r = v;
        any = true;
      }
      if (!any) r = static_cast<T>(max ? -INFINITY : INFINITY);
    } else if (method == DownsampleMethod::kMedian) {
      std::sort(block.begin(), block.end());
      r = block[static_cast<size_t>((n - 1) / 2)];
    } else if (method == DownsampleMethod::kMode) {
      std::map<T, int> counts;
      for (const T& v : block) ++counts[v];
      int best = 0;
      for (const auto& [v, k] : counts)
        if (k > best) r = v, best = k;
    }
    out[static_cast<size_t>(o)] = r;
  }
  return out;
}

template <typename T, typename Sum>
void RandomCase(DataType dtype, std::mt19937& rng, bool with_nan) {
  const int rank = 1 + static_cast<int>(rng() % 5);
  std::vector<int64_t> shape(rank), f(rank);
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    shape[d] = 1 + rng() % (rank > 3 ? 5 : 11);
    f[d] = 1 + rng() % 3;
    n *= shape[d];
  }
  std::vector<T> data(static_cast<size_t>(n));
  for (T& v : data) {
    if constexpr (std::is_floating_point_v<T>) {
      v = static_cast<T>(static_cast<int>(rng() % 2001) - 1000) / static_cast<T>(7);
      if (with_nan && rng() % 9 == 0) v = std::numeric_limits<T>::quiet_NaN();
    } else {
      v = static_cast<T>(rng() % 5 == 0 ? std::numeric_limits<T>::max() - rng() % 3 : rng());
    }
  }
  std::vector<DownsampleMethod> methods = {DownsampleMethod::kStride, DownsampleMethod::kMean,
                                           DownsampleMethod::kMin, DownsampleMethod::kMax};
  if (!with_nan) methods.insert(methods.end(), {DownsampleMethod::kMedian, DownsampleMethod::kMode});
  for (DownsampleMethod m : methods) {
    SCOPED_TRACE(std::string(DownsampleMethodName(m)) + " " + std::string(DataTypeName(dtype)) + " rank " +
                 std::to_string(rank));
    const std::vector<T> got = Downsample<T>(m, shape, f, data, dtype);
    const std::vector<T> want = Reference<T, Sum>(m, shape, f, data);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(T)));
  }
}

TEST(DownsampleTest, RandomShapesMatchTheReference) {
  std::mt19937 rng(12);
  for (int i = 0; i < 60; ++i) {
    RandomCase<uint8_t, uint64_t>(DataType::kUInt8, rng, false);
    RandomCase<int16_t, int64_t>(DataType::kInt16, rng, false);
    RandomCase<int32_t, int64_t>(DataType::kInt32, rng, false);
    RandomCase<int64_t, __int128>(DataType::kInt64, rng, false);
    RandomCase<uint64_t, unsigned __int128>(DataType::kUInt64, rng, false);
    RandomCase<float, float>(DataType::kFloat32, rng, i % 2 == 0);
    RandomCase<double, double>(DataType::kFloat64, rng, i % 2 == 0);
  }
}

// ReducePending gives the reduction of a stream that ends there, and the group stays open.
TEST(DownsampleTest, PendingGroupCanBeReducedAndContinued) {
  const std::vector<int64_t> shape = {3, 4, 6}, f = {3, 2, 2};
  std::vector<float> data(72);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 37) % 23) / 3.0f;
  for (DownsampleMethod m : {DownsampleMethod::kMean, DownsampleMethod::kMedian, DownsampleMethod::kMode,
                             DownsampleMethod::kMin, DownsampleMethod::kStride}) {
    SCOPED_TRACE(DownsampleMethodName(m));
    auto r = RowDownsampler::Create(DataType::kFloat32, m, shape, f);
    ASSERT_TRUE(r.ok());
    std::vector<float> row(6);
    auto* out = reinterpret_cast<uint8_t*>(row.data());
    const auto* in = reinterpret_cast<const uint8_t*>(data.data());
    EXPECT_FALSE((*r)->ReducePending(out));
    for (int64_t i = 0; i < 2; ++i) {
      EXPECT_FALSE((*r)->AddRow(in + i * 96, out));
      ASSERT_TRUE((*r)->ReducePending(out));
      const std::vector<float> prefix(data.begin(), data.begin() + (i + 1) * 24);
      EXPECT_EQ(row, (Reference<float, float>(m, {i + 1, 4, 6}, f, prefix)));
    }
    ASSERT_TRUE((*r)->AddRow(in + 2 * 96, out));
    EXPECT_EQ(row, (Reference<float, float>(m, shape, f, data)));
    EXPECT_EQ((*r)->pending_rows(), 0);
  }
}

TEST(DownsampleTest, Float16AndComplex) {
  // float16 1.0, 2.0, 2.0, 4.0 (bits) -> mean 2.25, exactly representable.
  const std::vector<uint16_t> h = {0x3C00, 0x4000, 0x4000, 0x4400};
  EXPECT_EQ(Downsample<uint16_t>(DownsampleMethod::kMean, {1, 4}, {1, 4}, h, DataType::kFloat16),
            (std::vector<uint16_t>{0x4080}));
  EXPECT_EQ(Downsample<uint16_t>(DownsampleMethod::kMax, {1, 4}, {1, 4}, h, DataType::kFloat16),
            (std::vector<uint16_t>{0x4400}));
  EXPECT_EQ(Downsample<uint16_t>(DownsampleMethod::kMode, {1, 4}, {1, 4}, h, DataType::kFloat16),
            (std::vector<uint16_t>{0x4000}));
  using C = std::complex<float>;
  const std::vector<C> c = {{1, 2}, {3, -4}, {1, 2}, {0, 5}};
  EXPECT_EQ(Downsample<C>(DownsampleMethod::kMean, {2, 2}, {2, 2}, c, DataType::kComplex64),
            (std::vector<C>{{1.25f, 1.25f}}));
  EXPECT_EQ(Downsample<C>(DownsampleMethod::kMode, {2, 2}, {2, 2}, c, DataType::kComplex64), (std::vector<C>{{1, 2}}));
  EXPECT_EQ(Downsample<C>(DownsampleMethod::kStride, {2, 2}, {1, 2}, c, DataType::kComplex64),
            (std::vector<C>{{1, 2}, {1, 2}}));
}

}  // namespace
}  // namespace tessera::pyramid
