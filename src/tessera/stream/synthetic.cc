#include "tessera/stream/synthetic.h"

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
  for (int64_t i = 0; i < n; ++i) {
    const int64_t e = first + i;
    uint64_t v;
    if (kind == SyntheticKind::kRandom) {
      v = Mix(static_cast<uint64_t>(e));
    } else {
      const int64_t row = e / row_elements, col = e % row_elements;
      // Cheap multiplicative hash for sensor-like noise in [0, 8).
      const uint64_t noise = (static_cast<uint64_t>(e) * 0x9e3779b97f4a7c15ull) >> 61;
      v = static_cast<uint64_t>((col % 1024) / 4 + (row % 256) * 3) + noise + 100;
    }
    uint8_t* p = dst + static_cast<size_t>(i) * item;
    if (dtype == DataType::kFloat32) {
      float f = static_cast<float>(v & 0xffff);
      std::memcpy(p, &f, 4);
    } else if (dtype == DataType::kFloat64) {
      double d = static_cast<double>(v & 0xffff);
      std::memcpy(p, &d, 8);
    } else if (dtype == DataType::kBool) {
      *p = static_cast<uint8_t>(v & 1);
    } else {
      for (size_t b = 0; b < item; ++b) p[b] = static_cast<uint8_t>(v >> (8 * (b % 8)));
    }
  }
}

}  // namespace tessera::stream
