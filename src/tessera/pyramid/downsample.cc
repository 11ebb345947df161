#include "tessera/pyramid/downsample.h"

#include <algorithm>
#include <bit>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "tessera/core/limits.h"
#include "tessera/index/chunk_grid.h"

namespace tessera::pyramid {
namespace {

constexpr std::pair<DownsampleMethod, std::string_view> kMethodNames[] = {
    {DownsampleMethod::kStride, "stride"}, {DownsampleMethod::kMean, "mean"},     {DownsampleMethod::kMin, "min"},
    {DownsampleMethod::kMax, "max"},       {DownsampleMethod::kMedian, "median"}, {DownsampleMethod::kMode, "mode"}};

bool IsComplex(DataType t) { return t == DataType::kComplex64 || t == DataType::kComplex128; }

// The shape of a row and of its reduction: `blocks` cuts the row's extents into blocks of the
// factors, one output element each (the edge cuts the last block). A row of rank R >= 1 is
// `lines` lines of blocks.shape[R-1] elements; a rank-1 array's row (one element) is one line of
// one element.
struct RowGeometry {
  index::ChunkGrid blocks;
  int64_t lines = 1;          // input lines: product of the row's extents but the last
  int64_t output_elements = 1;
  int64_t block = 1;          // the most elements one output element of a row reduces

  int rank() const { return blocks.rank; }
  int64_t line() const { return blocks.shape[rank() - 1]; }
  int64_t out_line() const { return blocks.chunk_count[rank() - 1]; }
  int64_t last_factor() const { return blocks.chunk_shape[rank() - 1]; }
  // Elements of block o along dimension d.
  int64_t Extent(int d, int64_t o) const { return blocks.ChunkExtent(d, o); }
};

RowGeometry MakeGeometry(std::span<const int64_t> shape, std::span<const int64_t> factors) {
  RowGeometry g;
  if (shape.size() <= 1) {
    const int64_t one = 1;
    g.blocks = index::ChunkGrid(1, &one, &one);
    return g;
  }
  g.blocks = index::ChunkGrid(static_cast<int>(shape.size()) - 1, shape.data() + 1, factors.data() + 1);
  for (int d = 0; d < g.rank(); ++d) {
    g.output_elements *= g.blocks.chunk_count[d];
    g.block *= g.blocks.chunk_shape[d];
    if (d < g.rank() - 1) g.lines *= g.blocks.shape[d];
  }
  return g;
}

// Calls fn(input line, output line, first) for every input line of a row, in row-major order;
// `first`: the line is the first of its output line's blocks (every outer coordinate a block start).
template <typename Fn>
void ForEachInputLine(const RowGeometry& g, Fn&& fn) {
  int64_t c[kMaxRank] = {};
  const int outer = g.rank() - 1;
  for (int64_t line = 0; line < g.lines; ++line) {
    int64_t out_line = 0;
    bool first = true;
    for (int d = 0; d < outer; ++d) {
      int64_t offset;
      out_line = out_line * g.blocks.chunk_count[d] + g.blocks.ChunkOf(d, c[d], &offset);
      first &= offset == 0;
    }
    fn(line, out_line, first);
    for (int d = outer - 1; d >= 0; --d) {
      if (++c[d] < g.blocks.shape[d]) break;
      c[d] = 0;
    }
  }
}

// Calls fn(output line, elements its blocks cut from one input row apart from the last
// dimension) for every output line of a row.
template <typename Fn>
void ForEachOutputLine(const RowGeometry& g, Fn&& fn) {
  int64_t c[kMaxRank] = {};
  const int outer = g.rank() - 1;
  const int64_t lines = g.output_elements / g.out_line();
  for (int64_t line = 0; line < lines; ++line) {
    int64_t cut = 1;
    for (int d = 0; d < outer; ++d) cut *= g.Extent(d, c[d]);
    fn(line, cut);
    for (int d = outer - 1; d >= 0; --d) {
      if (++c[d] < g.blocks.chunk_count[d]) break;
      c[d] = 0;
    }
  }
}

// Calls fn(o, x) for every element x of a line of n elements, o = x / f, in order of x.
template <typename Fn>
inline void ForEachBlock(int64_t n, int64_t f, Fn&& fn) {
  if (f == 1) {
    for (int64_t x = 0; x < n; ++x) fn(x, x);
  } else if (f == 2) {
    int64_t x = 0;
    for (; x + 1 < n; x += 2) fn(x >> 1, x), fn(x >> 1, x + 1);
    if (x < n) fn(x >> 1, x);
  } else {
    for (int64_t x = 0, o = 0; x < n; ++o)
      for (const int64_t end = std::min(n, x + f); x < end; ++x) fn(o, x);
  }
}

// How elements of each dtype are loaded and stored: `Value` is what the reductions compute on
// (float16 as float, bool as 0/1), `Sum` what the mean adds up in.
template <DataType kType> struct Element;
#define TESSERA_ELEMENT(type, T, V, S)                                                     \
  template <> struct Element<DataType::type> {                                             \
    using Stored = T;                                                                      \
    using Value = V;                                                                       \
    using Sum = S;                                                                         \
    static Value Load(const uint8_t* p) {                                                  \
      Stored v;                                                                            \
      std::memcpy(&v, p, sizeof v);                                                        \
      return static_cast<Value>(v);                                                        \
    }                                                                                      \
    static void Store(uint8_t* p, Value v) {                                               \
      const Stored s = static_cast<Stored>(v);                                             \
      std::memcpy(p, &s, sizeof s);                                                        \
    }                                                                                      \
  };
TESSERA_ELEMENT(kBool, uint8_t, uint8_t, int64_t)
TESSERA_ELEMENT(kInt8, int8_t, int8_t, int64_t)
TESSERA_ELEMENT(kInt16, int16_t, int16_t, int64_t)
TESSERA_ELEMENT(kInt32, int32_t, int32_t, int64_t)
TESSERA_ELEMENT(kInt64, int64_t, int64_t, __int128)
TESSERA_ELEMENT(kUInt8, uint8_t, uint8_t, uint64_t)
TESSERA_ELEMENT(kUInt16, uint16_t, uint16_t, uint64_t)
TESSERA_ELEMENT(kUInt32, uint32_t, uint32_t, uint64_t)
TESSERA_ELEMENT(kUInt64, uint64_t, uint64_t, unsigned __int128)
TESSERA_ELEMENT(kFloat32, float, float, float)
TESSERA_ELEMENT(kFloat64, double, double, double)
TESSERA_ELEMENT(kComplex64, std::complex<float>, std::complex<float>, std::complex<float>)
TESSERA_ELEMENT(kComplex128, std::complex<double>, std::complex<double>, std::complex<double>)
#undef TESSERA_ELEMENT
template <> struct Element<DataType::kFloat16> {
  using Stored = uint16_t;
  using Value = float;
  using Sum = float;
  static Value Load(const uint8_t* p) {
    Stored v;
    std::memcpy(&v, p, sizeof v);
    return HalfBitsToFloat(v);
  }
  static void Store(uint8_t* p, Value v) {
    const Stored s = FloatToHalfBits(v);
    std::memcpy(p, &s, sizeof s);
  }
};

template <typename T>
constexpr bool kIntegerSum = std::is_integral_v<T> || std::is_same_v<T, __int128> || std::is_same_v<T, unsigned __int128>;
template <typename T> constexpr bool kIsComplex = false;
template <typename T> constexpr bool kIsComplex<std::complex<T>> = true;

// sum / count, integers rounded to nearest with ties to even (C++ division truncates: for a
// negative sum the remainder is <= 0).
template <typename Sum>
Sum DivideRounded(Sum sum, int64_t count) {
  const Sum n = static_cast<Sum>(count);
  if constexpr (std::is_floating_point_v<Sum> || kIsComplex<Sum>) {
    return sum / n;
  } else {
    const Sum q = sum / n, r = sum % n;
    const bool odd = (q & 1) != 0;
    if constexpr (Sum(-1) < Sum(0)) {  // signed
      if (sum < 0) return q - ((-r * 2 > n || (-r * 2 == n && odd)) ? 1 : 0);
    }
    return q + ((r * 2 > n || (r * 2 == n && odd)) ? 1 : 0);
  }
}

// DivideRounded for a count of 2^shift (the usual block of factors 1 and 2): a shift instead of a
// division. Floor division then rounding half to even gives the same as DivideRounded, which
// rounds the exact quotient the same way.
template <typename Sum>
Sum ShiftRounded(Sum sum, int shift) {
  if (shift == 0) return sum;
  const Sum q = sum >> shift;        // floor, also for negative sums (arithmetic shift)
  const Sum r = sum - (q << shift);  // 0 <= r < 2^shift
  // Up when r is above half, or at half with q odd: r + (q & 1) > half, without a branch.
  return q + static_cast<Sum>((r + (q & 1)) > (Sum(1) << (shift - 1)));
}

// The order the mode sorts by: complex by real part, then imaginary part.
template <typename V>
bool Less(const V& a, const V& b) {
  if constexpr (kIsComplex<V>) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  } else {
    return a < b;
  }
}

// The common frame of the reductions of one dtype: the row geometry, the element's loads and
// stores, and the walk over a row's elements. Working memory is allocated on the first row, so a
// downsampler made only to plan (memory_bytes) costs nothing.
template <DataType kType>
class RowReducer : public RowDownsampler {
 protected:
  using E = Element<kType>;
  using V = typename E::Value;
  static constexpr int64_t kItem = static_cast<int64_t>(sizeof(typename E::Stored));

  RowReducer(const RowGeometry& g, int64_t rows_per_group)
      : RowDownsampler(kItem, g.lines * g.line(), g.output_elements, rows_per_group), g_(g) {}

  // Calls fn(o, element) for every element of `row` in row-major order, o its output element.
  template <typename Fn>
  void ForEachElement(const uint8_t* row, Fn&& fn) const {
    const int64_t f = g_.last_factor(), n = g_.line();
    ForEachInputLine(g_, [&](int64_t line, int64_t out_line, bool) {
      const uint8_t* in = row + line * n * kItem;
      const int64_t first = out_line * g_.out_line();
      ForEachBlock(n, f, [&](int64_t o, int64_t x) { fn(first + o, in + x * kItem); });
    });
  }

  const RowGeometry g_;
};

// stride: the block's first element, from the group's first row.
template <DataType kType>
class StrideReducer final : public RowReducer<kType> {
  using Base = RowReducer<kType>;
  using Base::g_;
  using Base::kItem;

 public:
  StrideReducer(const RowGeometry& g, int64_t rows) : Base(g, rows) {}
  int64_t memory_bytes() const override { return g_.output_elements * kItem; }

 private:
  void Accumulate(const uint8_t* row, int64_t index) override {
    if (index != 0) return;
    first_.resize(static_cast<size_t>(memory_bytes()));
    const int64_t f = g_.last_factor();
    // Lines whose outer coordinates are all block starts hold the blocks' first elements.
    ForEachInputLine(g_, [&](int64_t line, int64_t out_line, bool first) {
      if (!first) return;
      const uint8_t* in = row + line * g_.line() * kItem;
      uint8_t* out = first_.data() + out_line * g_.out_line() * kItem;
      for (int64_t o = 0; o < g_.out_line(); ++o) std::memcpy(out + o * kItem, in + o * f * kItem, kItem);
    });
  }
  void Reduce(int64_t, uint8_t* out) override { std::memcpy(out, first_.data(), first_.size()); }

  Bytes first_;
};

// mean: sums in the block's row-major order, divided by the element count. `Sum` is the dtype's
// wide sum, or a 32-bit one for 8- and 16-bit integers when no block can overflow it (half the
// memory traffic of the usual small factors).
template <DataType kType, typename Sum = typename Element<kType>::Sum>
class MeanReducer final : public RowReducer<kType> {
  using Base = RowReducer<kType>;
  using typename Base::E;
  using Base::g_;
  using Base::kItem;

 public:
  MeanReducer(const RowGeometry& g, int64_t rows) : Base(g, rows) {}
  int64_t memory_bytes() const override { return g_.output_elements * static_cast<int64_t>(sizeof(Sum)); }

 private:
  void Accumulate(const uint8_t* row, int64_t index) override {
    sums_.resize(static_cast<size_t>(g_.output_elements));
    const int64_t n = g_.line();
    // Integer sums are exact in any order: pairs are added at once, and a block's first line sets
    // its sums instead of adding to zeros. Floating-point sums start from +0 (tensorstore's order).
    if constexpr (kIntegerSum<Sum>) {
      if (g_.last_factor() == 2) {
        ForEachInputLine(g_, [&](int64_t line, int64_t out_line, bool first) {
          const uint8_t* __restrict in = row + line * n * kItem;
          Sum* __restrict acc = sums_.data() + out_line * g_.out_line();
          const auto load = [&](int64_t x) { return static_cast<Sum>(E::Load(in + x * kItem)); };
          const int64_t whole = n / 2;
          if (index == 0 && first) {
            for (int64_t o = 0; o < whole; ++o) acc[o] = load(2 * o) + load(2 * o + 1);
            if (n % 2) acc[whole] = load(2 * whole);
          } else {
            for (int64_t o = 0; o < whole; ++o) acc[o] += load(2 * o) + load(2 * o + 1);
            if (n % 2) acc[whole] += load(2 * whole);
          }
        });
        return;
      }
    }
    if (index == 0) std::fill(sums_.begin(), sums_.end(), Sum{});
    this->ForEachElement(row, [&](int64_t o, const uint8_t* p) { sums_[o] += static_cast<Sum>(E::Load(p)); });
  }
  void Reduce(int64_t rows, uint8_t* out) override {
    const int last = g_.rank() - 1;
    ForEachOutputLine(g_, [&](int64_t line, int64_t cut) {
      const Sum* __restrict acc = sums_.data() + line * g_.out_line();
      uint8_t* __restrict dst = out + line * g_.out_line() * kItem;
      // Every block of the line but an edge-cut last one has the same count.
      const int64_t m = g_.out_line(), f = g_.last_factor();
      const int64_t full = rows * cut * f;
      const int64_t interior = g_.blocks.IsEdgeChunk(last, m - 1) ? m - 1 : m;
      const auto store = [&](int64_t o, int64_t count) {
        E::Store(dst + o * kItem, static_cast<typename E::Value>(DivideRounded(acc[o], count)));
      };
      bool stored = false;
      if constexpr (kIntegerSum<Sum>) {
        if ((full & (full - 1)) == 0) {
          const int shift = std::countr_zero(static_cast<uint64_t>(full));
          for (int64_t o = 0; o < interior; ++o)
            E::Store(dst + o * kItem, static_cast<typename E::Value>(ShiftRounded(acc[o], shift)));
          stored = true;
        }
      }
      if (!stored)
        for (int64_t o = 0; o < interior; ++o) store(o, full);
      if (interior < m) store(m - 1, rows * cut * g_.Extent(last, m - 1));
    });
  }

  std::vector<Sum> sums_;
};

// min / max: the running extreme; a NaN input never replaces it (tensorstore's std::min/max).
template <DataType kType, bool kMax>
class ExtremeReducer final : public RowReducer<kType> {
  using Base = RowReducer<kType>;
  using typename Base::E;
  using typename Base::V;
  using Base::g_;
  using Base::kItem;

 public:
  ExtremeReducer(const RowGeometry& g, int64_t rows) : Base(g, rows) {}
  int64_t memory_bytes() const override { return g_.output_elements * static_cast<int64_t>(sizeof(V)); }

 private:
  static V Start() {
    if constexpr (std::is_floating_point_v<V>) {
      return kMax ? -std::numeric_limits<V>::infinity() : std::numeric_limits<V>::infinity();
    } else if constexpr (kType == DataType::kBool) {
      return kMax ? 0 : 1;
    } else {
      return kMax ? std::numeric_limits<V>::min() : std::numeric_limits<V>::max();
    }
  }
  void Accumulate(const uint8_t* row, int64_t index) override {
    if (index == 0) best_.assign(static_cast<size_t>(g_.output_elements), Start());
    this->ForEachElement(row, [&](int64_t o, const uint8_t* p) {
      const V v = E::Load(p);
      if (kMax ? best_[o] < v : v < best_[o]) best_[o] = v;
    });
  }
  void Reduce(int64_t, uint8_t* out) override {
    for (size_t o = 0; o < best_.size(); ++o) E::Store(out + static_cast<int64_t>(o) * kItem, best_[o]);
  }

  std::vector<V> best_;
};

// median / mode: every element of every block kept, then selected or counted.
template <DataType kType, bool kMedian>
class SortingReducer final : public RowReducer<kType> {
  using Base = RowReducer<kType>;
  using typename Base::E;
  using typename Base::V;
  using Base::g_;
  using Base::kItem;

 public:
  SortingReducer(const RowGeometry& g, int64_t rows) : Base(g, rows), capacity_(g.block * rows) {}
  int64_t memory_bytes() const override {
    return g_.output_elements * (capacity_ * static_cast<int64_t>(sizeof(V)) + static_cast<int64_t>(sizeof(int32_t)));
  }

 private:
  void Accumulate(const uint8_t* row, int64_t index) override {
    values_.resize(static_cast<size_t>(g_.output_elements * capacity_));
    if (index == 0) counts_.assign(static_cast<size_t>(g_.output_elements), 0);
    this->ForEachElement(row, [&](int64_t o, const uint8_t* p) {
      values_[static_cast<size_t>(o * capacity_ + counts_[o]++)] = E::Load(p);
    });
  }
  void Reduce(int64_t, uint8_t* out) override {
    for (size_t o = 0; o < counts_.size(); ++o) {
      V* begin = values_.data() + o * static_cast<size_t>(capacity_);
      V* end = begin + counts_[o];
      E::Store(out + static_cast<int64_t>(o) * kItem, kMedian ? Median(begin, end) : Mode(begin, end));
    }
  }
  static V Median(V* begin, V* end) {
    V* mid = begin + (end - begin - 1) / 2;
    std::nth_element(begin, mid, end, Less<V>);
    return *mid;
  }
  static V Mode(V* begin, V* end) {
    std::sort(begin, end, Less<V>);
    V best = *begin;
    int64_t best_count = 0;
    for (V* run = begin; run != end;) {
      V* next = run + 1;
      while (next != end && *next == *run) ++next;
      if (next - run > best_count) best = *run, best_count = next - run;
      run = next;
    }
    return best;
  }

  const int64_t capacity_;  // elements kept per output element
  std::vector<V> values_;
  std::vector<int32_t> counts_;
};

// The 32-bit sum of 8- and 16-bit integers, exact for blocks of up to kNarrowSumBlock elements
// (|sum| <= 65535 * 2^15 < 2^31); void where the dtype has none.
template <DataType kType>
using NarrowSum = std::conditional_t<
    kType == DataType::kUInt8 || kType == DataType::kUInt16, uint32_t,
    std::conditional_t<kType == DataType::kInt8 || kType == DataType::kInt16 || kType == DataType::kBool, int32_t,
                       void>>;
constexpr int64_t kNarrowSumBlock = int64_t{1} << 15;

template <DataType kType>
std::unique_ptr<RowDownsampler> MakeReducer(DownsampleMethod method, const RowGeometry& g, int64_t rows) {
  constexpr bool complex = kIsComplex<typename Element<kType>::Value>;
  // bool: median and mode are the mean.
  if (kType == DataType::kBool && (method == DownsampleMethod::kMedian || method == DownsampleMethod::kMode))
    method = DownsampleMethod::kMean;
  switch (method) {
    case DownsampleMethod::kStride: return std::make_unique<StrideReducer<kType>>(g, rows);
    case DownsampleMethod::kMean:
      if constexpr (!std::is_void_v<NarrowSum<kType>>) {
        if (g.block * rows <= kNarrowSumBlock) return std::make_unique<MeanReducer<kType, NarrowSum<kType>>>(g, rows);
      }
      return std::make_unique<MeanReducer<kType>>(g, rows);
    case DownsampleMethod::kMode: return std::make_unique<SortingReducer<kType, false>>(g, rows);
    default: break;
  }
  if constexpr (!complex) {
    switch (method) {
      case DownsampleMethod::kMin: return std::make_unique<ExtremeReducer<kType, false>>(g, rows);
      case DownsampleMethod::kMax: return std::make_unique<ExtremeReducer<kType, true>>(g, rows);
      case DownsampleMethod::kMedian: return std::make_unique<SortingReducer<kType, true>>(g, rows);
      default: break;
    }
  }
  return nullptr;
}

}  // namespace

Result<DownsampleMethod> ParseDownsampleMethod(std::string_view name) {
  for (const auto& [method, text] : kMethodNames)
    if (text == name) return method;
  return InvalidArgument("downsample method \"" + std::string(name) +
                         "\": expected stride, mean, min, max, median or mode");
}

std::string_view DownsampleMethodName(DownsampleMethod method) {
  for (const auto& [m, text] : kMethodNames)
    if (m == method) return text;
  return "?";
}

Status CheckDownsampleMethod(DataType dtype, DownsampleMethod method) {
  if (IsComplex(dtype) && (method == DownsampleMethod::kMin || method == DownsampleMethod::kMax ||
                           method == DownsampleMethod::kMedian))
    return Unsupported("downsample method " + std::string(DownsampleMethodName(method)) + " is not defined for " +
                       std::string(DataTypeName(dtype)) + " (complex numbers have no order)");
  return Status::Ok();
}

std::vector<int64_t> DownsampledShape(std::span<const int64_t> shape, std::span<const int64_t> factors) {
  std::vector<int64_t> out(shape.size());
  // Any rank (a block grid holds at most kMaxRank dimensions): one count of blocks per dimension.
  for (size_t d = 0; d < shape.size(); ++d) out[d] = index::CeilDiv(shape[d], factors[d]);
  return out;
}

Result<std::unique_ptr<RowDownsampler>> RowDownsampler::Create(DataType dtype, DownsampleMethod method,
                                                               std::span<const int64_t> shape,
                                                               std::span<const int64_t> factors) {
  if (shape.empty() || shape.size() > static_cast<size_t>(kMaxRank) + 1 || factors.size() != shape.size())
    return InvalidArgument("downsample: " + std::to_string(factors.size()) + " factors for a rank-" +
                           std::to_string(shape.size()) + " array").WithField("downsample");
  for (size_t d = 0; d < shape.size(); ++d) {
    if (factors[d] < 1) return InvalidArgument("downsample: factor " + std::to_string(factors[d]) + " of dimension " +
                                               std::to_string(d) + " is not >= 1").WithField("downsample");
    if (d > 0 && shape[d] < 1) return InvalidArgument("downsample: dimension " + std::to_string(d) + " is empty").WithField("downsample");
  }
  TESSERA_RETURN_IF_ERROR(CheckDownsampleMethod(dtype, method));
  const RowGeometry g = MakeGeometry(shape, factors);
  const int64_t rows = factors[0];
  std::unique_ptr<RowDownsampler> r;
  switch (dtype) {
#define TESSERA_CASE(type) \
  case DataType::type: r = MakeReducer<DataType::type>(method, g, rows); break;
    TESSERA_CASE(kBool) TESSERA_CASE(kInt8) TESSERA_CASE(kInt16) TESSERA_CASE(kInt32) TESSERA_CASE(kInt64)
    TESSERA_CASE(kUInt8) TESSERA_CASE(kUInt16) TESSERA_CASE(kUInt32) TESSERA_CASE(kUInt64)
    TESSERA_CASE(kFloat16) TESSERA_CASE(kFloat32) TESSERA_CASE(kFloat64)
    TESSERA_CASE(kComplex64) TESSERA_CASE(kComplex128)
#undef TESSERA_CASE
  }
  if (!r) return Unsupported("downsample: method not available for " + std::string(DataTypeName(dtype))).WithField("downsample");
  return r;
}

bool RowDownsampler::AddRow(const uint8_t* row, uint8_t* out) {
  Accumulate(row, pending_rows_++);
  if (pending_rows_ < rows_per_group_) return false;
  Reduce(pending_rows_, out);
  pending_rows_ = 0;
  return true;
}

bool RowDownsampler::ReducePending(uint8_t* out) {
  if (pending_rows_ == 0) return false;
  Reduce(pending_rows_, out);
  return true;
}

}  // namespace tessera::pyramid
