// Byte buffers and little-endian helpers. Bytes owns; ByteView borrows.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace tessera {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;
using MutableByteView = std::span<uint8_t>;

inline ByteView AsView(const std::string& s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}
inline std::string AsString(ByteView v) { return std::string(v.begin(), v.end()); }

inline void EncodeFixed32LE(uint8_t* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void EncodeFixed64LE(uint8_t* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t DecodeFixed32LE(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t DecodeFixed64LE(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline void PutFixed32LE(Bytes* dst, uint32_t v) {
  size_t n = dst->size();
  dst->resize(n + 4);
  EncodeFixed32LE(dst->data() + n, v);
}
inline void PutFixed64LE(Bytes* dst, uint64_t v) {
  size_t n = dst->size();
  dst->resize(n + 8);
  EncodeFixed64LE(dst->data() + n, v);
}

}  // namespace tessera
