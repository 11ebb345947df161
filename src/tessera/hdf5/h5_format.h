// Constants of the HDF5 file format that the reader and the writer share.
#pragma once

#include <cstdint>

namespace tessera::hdf5 {

// The format signature, at offset 0 (or 512, 1024, 2048, ... after a user block).
inline constexpr uint8_t kHdf5Signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
// The "undefined address" (all bits set) of an 8-byte offset.
inline constexpr uint64_t kUndefinedAddress = ~uint64_t{0};
// A maximum dimension without limit (dataspace messages).
inline constexpr uint64_t kUnlimited = ~uint64_t{0};

}  // namespace tessera::hdf5
