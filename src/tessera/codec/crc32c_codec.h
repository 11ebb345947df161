// The Zarr v3 `crc32c` bytes -> bytes codec. Encoded layout:
//   [ input bytes ... ][ crc32c(input) : uint32 little-endian ]
// Decode verifies and strips the 4-byte checksum; a mismatch or an input shorter than 4 bytes is
// kCorruptData. The codec has no configuration.
#pragma once

#include "tessera/codec/codec.h"

namespace tessera {

class Crc32cCodec final : public BytesToBytesCodec {
 public:
  static constexpr size_t kChecksumBytes = 4;

  std::string_view name() const override { return "crc32c"; }
  CodecId id() const override { return CodecId::kCrc32c; }
  nlohmann::json ToJson() const override { return {{"name", "crc32c"}}; }
  Status Encode(ByteView in, Bytes* out) const override;
  Status Decode(ByteView in, Bytes* out) const override;
  std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const override {
    return decoded_bytes + kChecksumBytes;
  }
  std::optional<size_t> FixedEncodedSize(size_t decoded_bytes) const override {
    return decoded_bytes + kChecksumBytes;
  }
};

}  // namespace tessera
