// The Zarr v3 `blosc` bytes -> bytes codec (c-blosc 1). The encoding is one blosc buffer
// (README_CHUNK_FORMAT in c-blosc: a 16-byte header, then the compressed blocks). Calls go through
// the context API with one internal thread, so the codec is thread-safe and needs no blosc_init;
// callers parallelise across chunks. zstd encodings without bit shuffle are written by tessera's
// own encoder (blosc1_zstd_encoder.h: the same bytes, one zstd context per thread instead of one per
// block); everything else, and all decoding, is c-blosc's. Decode validates the header against the
// input length before decompressing; malformed input is kCorruptData.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "tessera/codec/codec.h"

namespace tessera {

enum class BloscShuffle { kNoShuffle = 0, kShuffle = 1, kBitShuffle = 2 };

std::string_view BloscShuffleName(BloscShuffle shuffle);  // "noshuffle", "shuffle", "bitshuffle"

struct BloscOptions {
  std::string cname = "zstd";  // lz4, lz4hc, blosclz, zstd, zlib, snappy
  int clevel = 5;              // 0 (no compression) .. 9
  BloscShuffle shuffle = BloscShuffle::kShuffle;
  int typesize = 1;   // bytes per shuffled element, >= 1
  int blocksize = 0;  // bytes per blosc block; 0 lets blosc choose
};

class BloscCodec final : public BytesToBytesCodec {
 public:
  // Precondition: options are valid and cname is compiled into this c-blosc (MakeBloscCodec
  // checks both).
  explicit BloscCodec(BloscOptions options) : options_(std::move(options)) {}

  const BloscOptions& options() const { return options_; }

  std::string_view name() const override { return "blosc"; }
  CodecId id() const override { return CodecId::kBlosc; }
  std::optional<int> compression_level() const override { return options_.clevel; }
  // {"name":"blosc","configuration":{"typesize":T,"cname":C,"clevel":L,"shuffle":S,"blocksize":B}}
  nlohmann::json ToJson() const override;
  // kInvalidArgument for inputs larger than blosc's 2 GiB buffer limit.
  Status Encode(ByteView in, Bytes* out) const override;
  Status Decode(ByteView in, Bytes* out) const override;
  // Decodes whole (blosc has no prefix decoding), refusing a header that claims another size than
  // `decoded_bytes` before allocating anything.
  Status DecodePrefix(ByteView in, size_t decoded_bytes, size_t prefix_bytes, Bytes* out) const override;
  // decoded_bytes + BLOSC_MAX_OVERHEAD.
  std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const override;

 private:
  BloscOptions options_;
};

}  // namespace tessera
