#include "tessera/stream/synthetic.h"

#include <algorithm>
#include <cstring>

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
  return InvalidArgument("--synthetic must be camera, zeros or random");
}

void FillSynthetic(SyntheticKind kind, DataType dtype, int64_t row_elements, int64_t first, int64_t n, uint8_t* dst) {
  const size_t item = ItemSize(dtype);
  if (kind == SyntheticKind::kZeros) {
    std::memset(dst, 0, static_cast<size_t>(n) * item);
    return;
  }
  // Walk row by row so the per-element work is a multiply and a shift (no division).
  auto value = [kind](int64_t e, int64_t row, int64_t col) -> uint64_t {
    if (kind == SyntheticKind::kRandom) return Mix(static_cast<uint64_t>(e));
    // A gradient that moves with the row, plus cheap multiplicative-hash noise in [0, 8).
    const uint64_t noise = (static_cast<uint64_t>(e) * 0x9e3779b97f4a7c15ull) >> 61;
    return static_cast<uint64_t>((col % 1024) / 4 + (row % 256) * 3) + noise + 100;
  };
  int64_t row = first / row_elements, col = first % row_elements;
  for (int64_t i = 0; i < n;) {
    const int64_t run = std::min(n - i, row_elements - col);
    uint8_t* p = dst + static_cast<size_t>(i) * item;
    for (int64_t k = 0; k < run; ++k, p += item) {
      const uint64_t v = value(first + i + k, row, col + k);
      switch (dtype) {
        case DataType::kFloat32: {
          const float f = static_cast<float>(v & 0xffff);
          std::memcpy(p, &f, 4);
          break;
        }
        case DataType::kFloat64: {
          const double d = static_cast<double>(v & 0xffff);
          std::memcpy(p, &d, 8);
          break;
        }
        case DataType::kBool:
          *p = static_cast<uint8_t>(v & 1);
          break;
        default:  // integers and the raw bits of the other types, little endian
          for (size_t b = 0; b < item; ++b) p[b] = static_cast<uint8_t>(v >> (8 * (b % 8)));
      }
    }
    i += run;
    col = 0;
    ++row;
  }
}

}  // namespace tessera::stream
