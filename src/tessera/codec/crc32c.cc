#include "tessera/codec/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tessera {
namespace crc32c_internal {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // reflected Castagnoli polynomial

// kTables[0][b] is the CRC of byte b; kTables[k][b] is the CRC of byte b followed by k zero
// bytes, which lets the portable loop fold 8 input bytes per step (slicing-by-8).
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    t[0][b] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

}  // namespace

// `crc` below is the running register: the finished value xor 0xFFFFFFFF.
Crc32cValue ExtendPortable(Crc32cValue crc_value, ByteView data) {
  uint32_t crc = ~crc_value.value;
  const uint8_t* p = data.data();
  size_t n = data.size();
  while (n >= 8) {
    const uint32_t lo = crc ^ DecodeFixed32LE(p);
    const uint32_t hi = DecodeFixed32LE(p + 4);
    crc = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
          kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  for (; n > 0; --n, ++p) crc = (crc >> 8) ^ kTables[0][(crc ^ *p) & 0xff];
  return Crc32cValue{~crc};
}

#if defined(__x86_64__)

__attribute__((target("sse4.2"))) Crc32cValue ExtendHardware(Crc32cValue crc_value, ByteView data) {
  uint64_t crc = ~crc_value.value;
  const uint8_t* p = data.data();
  size_t n = data.size();
  // Align to 8 bytes so the 64-bit loads never straddle cache lines needlessly.
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc = _mm_crc32_u8(static_cast<uint32_t>(crc), *p++);
    --n;
  }
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    crc = _mm_crc32_u64(crc, word);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    crc = _mm_crc32_u8(static_cast<uint32_t>(crc), *p++);
    --n;
  }
  return Crc32cValue{~static_cast<uint32_t>(crc)};
}

bool HardwareAvailable() {
  static const bool kAvailable = __builtin_cpu_supports("sse4.2");
  return kAvailable;
}

#else

Crc32cValue ExtendHardware(Crc32cValue crc, ByteView data) { return ExtendPortable(crc, data); }
bool HardwareAvailable() { return false; }

#endif

}  // namespace crc32c_internal

Crc32cValue ExtendCrc32c(Crc32cValue crc, ByteView data) {
  return crc32c_internal::HardwareAvailable() ? crc32c_internal::ExtendHardware(crc, data)
                                              : crc32c_internal::ExtendPortable(crc, data);
}

Crc32cValue Crc32c(ByteView data) { return ExtendCrc32c(Crc32cValue{0}, data); }

}  // namespace tessera
