#include "tessera/zarr/base64_text.h"

#include <cstdint>

namespace tessera::zarr {

std::optional<std::string> DecodeBase64(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t bits = 0;
  int nbits = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] != '='; ++i) {
    const int v = value(text[i]);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    nbits += 6;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((bits >> nbits) & 0xff));
    }
  }
  for (; i < text.size(); ++i)
    if (text[i] != '=') return std::nullopt;
  return out;
}

}  // namespace tessera::zarr
