// numcodecs' `lz4` bytes -> bytes codec ("numcodecs.lz4" in zarr.json, `lz4` as a Zarr v2
// compressor): a 4-byte little-endian decoded size, then one LZ4 block. A size that disagrees with
// the block, or a malformed block, is kCorruptData.
#pragma once

#include "tessera/codec/codec.h"

namespace tessera {

class Lz4Codec final : public BytesToBytesCodec {
 public:
  explicit Lz4Codec(int acceleration) : acceleration_(acceleration) {}

  std::string_view name() const override { return "numcodecs.lz4"; }
  CodecId id() const override { return CodecId::kLz4; }
  nlohmann::json ToJson() const override;
  Status Encode(ByteView in, Bytes* out) const override;
  Status Decode(ByteView in, Bytes* out) const override;
  std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const override;

 private:
  int acceleration_;
};

}  // namespace tessera
