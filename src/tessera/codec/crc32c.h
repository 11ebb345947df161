// CRC-32C (Castagnoli, RFC 3720): reflected polynomial 0x82F63B78, initial value and final xor
// 0xFFFFFFFF. Crc32c("123456789") == 0xE3069283.
//
// On x86_64 CPUs with SSE4.2 (checked once at run time) the hardware crc32 instruction is used;
// elsewhere a portable slicing-by-8 table implementation. Both give identical results.
// All functions are pure and thread-safe.
#pragma once

#include <cstdint>

#include "tessera/core/bytes.h"

namespace tessera {

// A finished CRC-32C checksum as stored on disk: a distinct type so a checksum is not mixed up
// with a size or an offset.
struct Crc32cValue {
  uint32_t value = 0;
  friend bool operator==(Crc32cValue, Crc32cValue) = default;
};

// The checksum of `data`.
Crc32cValue Crc32c(ByteView data);
// The checksum of (the bytes `crc` was computed over) followed by `data`:
// ExtendCrc32c(Crc32c(a), b) == Crc32c(a + b); ExtendCrc32c(Crc32cValue{0}, x) == Crc32c(x).
Crc32cValue ExtendCrc32c(Crc32cValue crc, ByteView data);

namespace crc32c_internal {
// The two implementations behind ExtendCrc32c, exposed so tests can check they agree.
Crc32cValue ExtendPortable(Crc32cValue crc, ByteView data);
// Precondition: HardwareAvailable().
Crc32cValue ExtendHardware(Crc32cValue crc, ByteView data);
// True on x86_64 CPUs with SSE4.2.
bool HardwareAvailable();
}  // namespace crc32c_internal

}  // namespace tessera
