// The Zarr v3 `gzip` bytes -> bytes codec. Encode writes one gzip member (RFC 1952) at `level`
// 0-9 with libdeflate. Decode accepts gzip or zlib-wrapped streams, including several concatenated
// members, and does not need to know the decoded size in advance. A malformed or truncated stream
// is kCorruptData carrying zlib's message.
#pragma once

#include "tessera/codec/codec.h"

namespace tessera {

class GzipCodec final : public BytesToBytesCodec {
 public:
  // Precondition: 0 <= level <= 9 (MakeGzipCodec checks this).
  explicit GzipCodec(int level) : level_(level) {}

  int level() const { return level_; }

  std::string_view name() const override { return "gzip"; }
  CodecId id() const override { return CodecId::kGzip; }
  std::optional<int> compression_level() const override { return level_; }
  nlohmann::json ToJson() const override;
  Status Encode(ByteView in, Bytes* out) const override;
  Status Decode(ByteView in, Bytes* out) const override;
  // libdeflate's gzip bound over every compressor (independent of the level).
  std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const override;

 private:
  int level_;
};

}  // namespace tessera
