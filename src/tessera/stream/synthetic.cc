#include "tessera/stream/synthetic.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "tessera/core/parallel.h"

namespace tessera::stream {
namespace {

inline uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

Result<SyntheticKind> ParseSyntheticKind(const std::string& name) {
  if (name == "camera") return SyntheticKind::kCamera;
  if (name == "zeros") return SyntheticKind::kZeros;
  if (name == "random") return SyntheticKind::kRandom;
  return InvalidArgument("synthetic input must be camera, zeros or random");
}

namespace {

// The per-element loop for one element store: walks row by row so the per-element work is a
// multiply and a shift (no division), and stores each value with `store(p, v)`.
template <typename Store>
void FillRows(SyntheticKind kind, int64_t row_elements, int64_t first, int64_t n, uint8_t* dst, size_t item,
              Store store) {
  int64_t row = first / row_elements, col = first % row_elements;
  for (int64_t i = 0; i < n;) {
    const int64_t run = std::min(n - i, row_elements - col);
    uint8_t* p = dst + static_cast<size_t>(i) * item;
    const uint64_t e0 = static_cast<uint64_t>(first + i);
    if (kind == SyntheticKind::kRandom) {
      for (int64_t k = 0; k < run; ++k, p += item) store(p, Mix(e0 + static_cast<uint64_t>(k)));
    } else {
      // A gradient that moves with the row, plus cheap multiplicative-hash noise in [0, 8).
      const uint64_t base = static_cast<uint64_t>((row % 256) * 3) + 100;
      for (int64_t k = 0; k < run; ++k, p += item) {
        const uint64_t noise = ((e0 + static_cast<uint64_t>(k)) * 0x9e3779b97f4a7c15ull) >> 61;
        store(p, static_cast<uint64_t>(((col + k) % 1024) / 4) + base + noise);
      }
    }
    i += run;
    col = 0;
    ++row;
  }
}

template <size_t N>
void StoreLittle(uint8_t* p, uint64_t v) {  // integers and raw bits: v's low bytes, v repeated past 8
  if constexpr (N <= 8) {
    std::memcpy(p, &v, N);
  } else {
    for (size_t b = 0; b < N; ++b) p[b] = static_cast<uint8_t>(v >> (8 * (b % 8)));
  }
}

}  // namespace

void FillSynthetic(SyntheticKind kind, DataType dtype, int64_t row_elements, int64_t first, int64_t n, uint8_t* dst) {
  static_assert(std::endian::native == std::endian::little, "tessera assumes a little-endian host");
  const size_t item = ItemSize(dtype);
  if (kind == SyntheticKind::kZeros) {
    std::memset(dst, 0, static_cast<size_t>(n) * item);
    return;
  }
  auto fill = [&](auto store) { FillRows(kind, row_elements, first, n, dst, item, store); };
  switch (dtype) {
    case DataType::kFloat32:
      return fill([](uint8_t* p, uint64_t v) {
        const float f = static_cast<float>(v & 0xffff);
        std::memcpy(p, &f, 4);
      });
    case DataType::kFloat64:
      return fill([](uint8_t* p, uint64_t v) {
        const double d = static_cast<double>(v & 0xffff);
        std::memcpy(p, &d, 8);
      });
    case DataType::kBool:
      return fill([](uint8_t* p, uint64_t v) { *p = static_cast<uint8_t>(v & 1); });
    default:
      break;
  }
  switch (item) {
    case 1: return fill([](uint8_t* p, uint64_t v) { StoreLittle<1>(p, v); });
    case 2: return fill([](uint8_t* p, uint64_t v) { StoreLittle<2>(p, v); });
    case 4: return fill([](uint8_t* p, uint64_t v) { StoreLittle<4>(p, v); });
    case 8: return fill([](uint8_t* p, uint64_t v) { StoreLittle<8>(p, v); });
    default:
      return fill([item](uint8_t* p, uint64_t v) {
        for (size_t b = 0; b < item; ++b) p[b] = static_cast<uint8_t>(v >> (8 * (b % 8)));
      });
  }
}

void FillSyntheticParallel(SyntheticKind kind, DataType dtype, int64_t row_elements, int64_t first, int64_t n,
                           uint8_t* dst, int threads) {
  constexpr int64_t kMinPiece = int64_t{1} << 18;  // elements
  const int64_t pieces = std::clamp<int64_t>(n / kMinPiece, 1, int64_t{4} * std::max(threads, 1));
  const size_t item = ItemSize(dtype);
  (void)ParallelFor(pieces, threads, [&](int64_t k, int) -> Status {
    const int64_t b = n * k / pieces, e = n * (k + 1) / pieces;
    FillSynthetic(kind, dtype, row_elements, first + b, e - b, dst + static_cast<size_t>(b) * item);
    return Status::Ok();
  });
}

}  // namespace tessera::stream
