// numcodecs' `bz2` compressor: Zarr v3 `numcodecs.bz2` and the Zarr v2 compressor `bz2`. The
// encoding is a bzip2 stream (libbz2) with a block size of `level` x 100 kB, as Python's
// bz2.compress writes. Decode reads one or more concatenated streams without knowing the decoded
// size in advance; a malformed or truncated stream is kCorruptData naming the codec.
#pragma once

#include "tessera/codec/codec.h"

namespace tessera {

class Bz2Codec final : public BytesToBytesCodec {
 public:
  // Precondition: 1 <= level <= 9 (MakeBz2Codec checks this).
  explicit Bz2Codec(int level) : level_(level) {}

  std::string_view name() const override { return "numcodecs.bz2"; }
  std::optional<int> compression_level() const override { return level_; }
  nlohmann::json ToJson() const override;
  Status Encode(ByteView in, Bytes* out) const override;
  Status Decode(ByteView in, Bytes* out) const override;
  // bzip2's documented bound: 1% of the input plus 600 bytes.
  std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const override;

 private:
  int level_;
};

}  // namespace tessera
