#include "tessera/precomputed/murmurhash3.h"

namespace tessera::precomputed {
namespace {

inline uint32_t Rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

inline uint32_t FinalMix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

}  // namespace

std::array<uint8_t, 16> MurmurHash3_x86_128(ByteView key, uint32_t seed) {
  constexpr uint32_t c1 = 0x239b961bu, c2 = 0xab0e9789u, c3 = 0x38b34ae5u, c4 = 0xa1e38b93u;
  const size_t len = key.size();
  const size_t nblocks = len / 16;
  uint32_t h1 = seed, h2 = seed, h3 = seed, h4 = seed;

  // Body: 16-byte blocks of four little-endian words.
  for (size_t i = 0; i < nblocks; ++i) {
    const uint8_t* block = key.data() + 16 * i;
    uint32_t k1 = DecodeFixed32LE(block), k2 = DecodeFixed32LE(block + 4);
    uint32_t k3 = DecodeFixed32LE(block + 8), k4 = DecodeFixed32LE(block + 12);
    k1 *= c1; k1 = Rotl32(k1, 15); k1 *= c2; h1 ^= k1;
    h1 = Rotl32(h1, 19); h1 += h2; h1 = h1 * 5 + 0x561ccd1bu;
    k2 *= c2; k2 = Rotl32(k2, 16); k2 *= c3; h2 ^= k2;
    h2 = Rotl32(h2, 17); h2 += h3; h2 = h2 * 5 + 0x0bcaa747u;
    k3 *= c3; k3 = Rotl32(k3, 17); k3 *= c4; h3 ^= k3;
    h3 = Rotl32(h3, 15); h3 += h4; h3 = h3 * 5 + 0x96cd1c35u;
    k4 *= c4; k4 = Rotl32(k4, 18); k4 *= c1; h4 ^= k4;
    h4 = Rotl32(h4, 13); h4 += h1; h4 = h4 * 5 + 0x32ac3b17u;
  }

  // Tail: the last len % 16 bytes, little endian within each word.
  const uint8_t* tail = key.data() + 16 * nblocks;
  uint32_t k[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < (len & 15); ++i) k[i / 4] |= static_cast<uint32_t>(tail[i]) << (8 * (i % 4));
  if ((len & 15) > 12) { k[3] *= c4; k[3] = Rotl32(k[3], 18); k[3] *= c1; h4 ^= k[3]; }
  if ((len & 15) > 8) { k[2] *= c3; k[2] = Rotl32(k[2], 17); k[2] *= c4; h3 ^= k[2]; }
  if ((len & 15) > 4) { k[1] *= c2; k[1] = Rotl32(k[1], 16); k[1] *= c3; h2 ^= k[1]; }
  if ((len & 15) > 0) { k[0] *= c1; k[0] = Rotl32(k[0], 15); k[0] *= c2; h1 ^= k[0]; }

  // Finalization.
  const uint32_t n = static_cast<uint32_t>(len);
  h1 ^= n; h2 ^= n; h3 ^= n; h4 ^= n;
  h1 += h2; h1 += h3; h1 += h4;
  h2 += h1; h3 += h1; h4 += h1;
  h1 = FinalMix32(h1); h2 = FinalMix32(h2); h3 = FinalMix32(h3); h4 = FinalMix32(h4);
  h1 += h2; h1 += h3; h1 += h4;
  h2 += h1; h3 += h1; h4 += h1;

  std::array<uint8_t, 16> out;
  EncodeFixed32LE(out.data(), h1);
  EncodeFixed32LE(out.data() + 4, h2);
  EncodeFixed32LE(out.data() + 8, h3);
  EncodeFixed32LE(out.data() + 12, h4);
  return out;
}

uint64_t MurmurHash3ChunkId(uint64_t chunk_id) {
  uint8_t key[8];
  EncodeFixed64LE(key, chunk_id);
  const std::array<uint8_t, 16> digest = MurmurHash3_x86_128(ByteView(key, 8), 0);
  return DecodeFixed64LE(digest.data());
}

}  // namespace tessera::precomputed
