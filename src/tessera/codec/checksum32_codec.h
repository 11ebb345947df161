// numcodecs' 32-bit checksum codecs as Zarr v3 bytes -> bytes codecs (and Zarr v2 filters):
//   numcodecs.crc32       zlib's CRC-32,   stored first by default
//   numcodecs.adler32     zlib's Adler-32, stored first by default
//   numcodecs.crc32c      CRC-32C,         stored last by default
//   numcodecs.fletcher32  HDF5's Fletcher-32 (16-bit words taken big-endian), always stored last
// Encoded layout, the checksum a little-endian uint32:
//   location "start":  [ checksum ][ input bytes ... ]
//   location "end":    [ input bytes ... ][ checksum ]
// Decode verifies and strips the checksum; a mismatch or an input shorter than 4 bytes is
// kCorruptData naming the codec and both values.
#pragma once

#include <cstdint>

#include "tessera/codec/codec.h"

namespace tessera {

enum class Checksum32Kind { kCrc32, kAdler32, kCrc32c, kFletcher32 };

// HDF5's Fletcher-32 (H5_checksum_fletcher32) as numcodecs computes it: 16-bit words taken
// big-endian, an odd last byte as the high byte of a final word.
uint32_t Fletcher32Checksum(ByteView data);

class Checksum32Codec final : public BytesToBytesCodec {
 public:
  static constexpr size_t kChecksumBytes = 4;

  Checksum32Codec(Checksum32Kind kind, bool at_start) : kind_(kind), at_start_(at_start) {}

  Checksum32Kind kind() const { return kind_; }
  bool at_start() const { return at_start_; }
  // The checksum of `data` this codec stores.
  uint32_t Compute(ByteView data) const;

  std::string_view name() const override;
  nlohmann::json ToJson() const override;
  Status Encode(ByteView in, Bytes* out) const override;
  Status Decode(ByteView in, Bytes* out) const override;
  std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const override { return decoded_bytes + kChecksumBytes; }
  std::optional<size_t> FixedEncodedSize(size_t decoded_bytes) const override { return decoded_bytes + kChecksumBytes; }

 private:
  Checksum32Kind kind_;
  bool at_start_;
};

}  // namespace tessera
