// The Zarr v3 `zstd` bytes -> bytes codec (libzstd). Encode writes one Zstandard frame (RFC 8878)
// recording the content size, with a content checksum when `checksum` is set. Decode accepts any
// sequence of concatenated frames (skippable frames included), whether or not their headers record
// the content size, and verifies checksums that are present. Errors are kCorruptData carrying
// ZSTD_getErrorName's text.
//
// Compression and decompression contexts are cached per thread, so the codec is thread-safe and
// repeated calls on one thread do not reallocate zstd's working memory.
#pragma once

#include "tessera/codec/codec.h"

namespace tessera {

class ZstdCodec final : public BytesToBytesCodec {
 public:
  // Precondition: ZSTD_minCLevel() <= level <= ZSTD_maxCLevel(); 0 is zstd's default level
  // (MakeZstdCodec checks this).
  ZstdCodec(int level, bool checksum) : level_(level), checksum_(checksum) {}

  int level() const { return level_; }
  bool checksum() const { return checksum_; }

  std::string_view name() const override { return "zstd"; }
  CodecId id() const override { return CodecId::kZstd; }
  std::optional<int> compression_level() const override { return level_; }
  // {"name":"zstd","configuration":{"level":L}} plus "checksum":true when set (the spec omits a
  // false checksum).
  nlohmann::json ToJson() const override;
  Status Encode(ByteView in, Bytes* out) const override;
  Status Decode(ByteView in, Bytes* out) const override;
  // One frame recording `decoded_bytes` as its content size and no checksum: decoded block by
  // block until the prefix is complete (zstd blocks hold up to 128 KiB). Anything else: Decode.
  Status DecodePrefix(ByteView in, size_t decoded_bytes, size_t prefix_bytes, Bytes* out) const override;
  // ZSTD_compressBound; nullopt when the input is too large for zstd.
  std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const override;

 private:
  int level_;
  bool checksum_;
};

}  // namespace tessera
