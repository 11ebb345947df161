// numcodecs' `zlib` compressor as a Zarr v3 bytes -> bytes codec (`numcodecs.zlib`, what zarr-python
// 3 writes for zarr.codecs.numcodecs.Zlib). Encode writes one zlib stream (RFC 1950) at `level`
// 0-9 with libdeflate; Decode accepts zlib (and gzip) streams, as GzipCodec does. A malformed or
// truncated stream is kCorruptData naming the codec.
#pragma once

#include "tessera/codec/codec.h"

namespace tessera {

class ZlibCodec final : public BytesToBytesCodec {
 public:
  // Precondition: 0 <= level <= 9 (MakeZlibCodec checks this).
  explicit ZlibCodec(int level) : level_(level) {}

  int level() const { return level_; }

  std::string_view name() const override { return "numcodecs.zlib"; }
  std::optional<int> compression_level() const override { return level_; }
  nlohmann::json ToJson() const override;
  Status Encode(ByteView in, Bytes* out) const override;
  Status Decode(ByteView in, Bytes* out) const override;
  std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const override;

 private:
  int level_;
};

}  // namespace tessera
