#include "tessera/zarr/bfloat16_fill.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace tessera::zarr {
namespace {

constexpr uint16_t kCanonicalNaN = 0x7fc0;
constexpr uint16_t kInfinity = 0x7f80;
constexpr uint16_t kNegativeInfinity = 0xff80;

FillValue FillOfBits(uint16_t bits) {
  FillValue f;
  f.bytes = {static_cast<uint8_t>(bits & 0xff), static_cast<uint8_t>(bits >> 8)};
  return f;
}

// bfloat16 is the upper half of a float32: round the lower half away, to nearest, ties to even.
uint16_t BitsOfFloat(float value) {
  if (std::isnan(value)) return kCanonicalNaN;
  uint32_t f;
  std::memcpy(&f, &value, sizeof f);
  const uint32_t rounding = 0x7fff + ((f >> 16) & 1);
  return static_cast<uint16_t>((f + rounding) >> 16);  // overflow to infinity is the right answer
}

float FloatOfBits(uint16_t bits) {
  const uint32_t f = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &f, sizeof value);
  return value;
}

}  // namespace

Result<FillValue> ParseBFloat16FillValue(const nlohmann::json& j) {
  if (j.is_number()) {
    const double value = j.get<double>();
    // Rounded through float32: exact for what writers store (a bfloat16's own value); a double
    // beyond float32's range is an infinity (converting it to float would be undefined).
    if (std::fabs(value) > std::numeric_limits<float>::max())
      return FillOfBits(value > 0 ? kInfinity : kNegativeInfinity);
    return FillOfBits(BitsOfFloat(static_cast<float>(value)));
  }
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "NaN") return FillOfBits(kCanonicalNaN);
    if (s == "Infinity") return FillOfBits(kInfinity);
    if (s == "-Infinity") return FillOfBits(kNegativeInfinity);
    if (s.size() == 6 && s[0] == '0' && s[1] == 'x') {
      unsigned bits = 0;
      bool hex = true;
      for (size_t i = 2; i < s.size(); ++i) {
        const char c = s[i];
        const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (digit < 0) hex = false;
        bits = bits * 16 + static_cast<unsigned>(digit < 0 ? 0 : digit);
      }
      if (hex) return FillOfBits(static_cast<uint16_t>(bits));
    }
  }
  return InvalidArgument("zarr.json: fill_value " + j.dump() +
                         " is not a bfloat16 value (expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or "
                         "\"0x\" and 4 hex digits)");
}

nlohmann::json BFloat16FillValueToJson(const FillValue& fill) {
  const uint16_t bits = fill.bytes.size() == 2 ? static_cast<uint16_t>(fill.bytes[0] | (fill.bytes[1] << 8)) : 0;
  if (bits == kInfinity) return "Infinity";
  if (bits == kNegativeInfinity) return "-Infinity";
  const float value = FloatOfBits(bits);
  if (std::isnan(value)) {
    if (bits == kCanonicalNaN) return "NaN";
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%04x", bits);
    return std::string(hex);
  }
  return static_cast<double>(value);
}

}  // namespace tessera::zarr
