#include "tessera/hdf5/h5_checksum.h"

namespace tessera::hdf5 {
namespace {

inline uint32_t Rot(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

inline void Mix(uint32_t& a, uint32_t& b, uint32_t& c) {
  a -= c; a ^= Rot(c, 4);  c += b;
  b -= a; b ^= Rot(a, 6);  a += c;
  c -= b; c ^= Rot(b, 8);  b += a;
  a -= c; a ^= Rot(c, 16); c += b;
  b -= a; b ^= Rot(a, 19); a += c;
  c -= b; c ^= Rot(b, 4);  b += a;
}

inline void Final(uint32_t& a, uint32_t& b, uint32_t& c) {
  c ^= b; c -= Rot(b, 14);
  a ^= c; a -= Rot(c, 11);
  b ^= a; b -= Rot(a, 25);
  c ^= b; c -= Rot(b, 16);
  a ^= c; a -= Rot(c, 4);
  b ^= a; b -= Rot(a, 14);
  c ^= b; c -= Rot(b, 24);
}

// Byte-at-a-time little-endian word assembly: the same result on any host and alignment.
inline uint32_t Word(const uint8_t* k, size_t n) {
  uint32_t w = 0;
  for (size_t i = 0; i < n; ++i) w |= static_cast<uint32_t>(k[i]) << (8 * i);
  return w;
}

}  // namespace

uint32_t Lookup3Hash(ByteView data, uint32_t initval) {
  size_t length = data.size();
  const uint8_t* k = data.data();
  uint32_t a, b, c;
  a = b = c = 0xdeadbeef + static_cast<uint32_t>(length) + initval;
  while (length > 12) {
    a += Word(k, 4);
    b += Word(k + 4, 4);
    c += Word(k + 8, 4);
    Mix(a, b, c);
    length -= 12;
    k += 12;
  }
  if (length == 0) return c;
  // The last 1..12 bytes, zero-padded, as in lookup3's byte-wise tail.
  a += Word(k, length < 4 ? length : 4);
  if (length > 4) b += Word(k + 4, length < 8 ? length - 4 : 4);
  if (length > 8) c += Word(k + 8, length - 8);
  Final(a, b, c);
  return c;
}

}  // namespace tessera::hdf5
