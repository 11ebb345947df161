// MurmurHash3_x86_128 (Austin Appleby's public-domain algorithm, our own implementation), as the
// Neuroglancer sharded format uses it: the hash of a chunk id is MurmurHash3_x86_128 of its 8
// little-endian bytes with seed 0, and the low 8 bytes of the 16-byte digest read as a
// little-endian uint64.
#pragma once

#include <array>
#include <cstdint>

#include "tessera/core/bytes.h"

namespace tessera::precomputed {

// The 16-byte digest as the reference implementation writes it: four uint32 words h1..h4, each
// little endian.
std::array<uint8_t, 16> MurmurHash3_x86_128(ByteView key, uint32_t seed);

// hash(chunk_id) of neuroglancer_uint64_sharded_v1 with "hash": "murmurhash3_x86_128".
uint64_t MurmurHash3ChunkId(uint64_t chunk_id);

}  // namespace tessera::precomputed
