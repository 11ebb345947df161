// numcodecs' `lzma` compressor: Zarr v3 `numcodecs.lzma` and the Zarr v2 compressor `lzma`, with
// Debian's liblzma. numcodecs' configuration: format 1 (.xz, the default) or 2 (.lzma "alone"),
// check (-1 the format's default: CRC64 for .xz; 0 none, 1 CRC32, 4 CRC64, 10 SHA-256), preset
// (0-9, optionally with the extreme flag 0x80000000; null is 6) and filters (null: the preset's
// chain). Format 3 (raw) and explicit filter chains are kUnsupported. Decode reads .xz and .lzma
// streams (concatenated .xz streams too) without knowing the decoded size; a malformed or
// truncated stream is kCorruptData naming the codec.
#pragma once

#include <cstdint>

#include "tessera/codec/codec.h"

namespace tessera {

class LzmaCodec final : public BytesToBytesCodec {
 public:
  static constexpr int kFormatXz = 1;
  static constexpr int kFormatAlone = 2;
  static constexpr int kCheckDefault = -1;

  // Preconditions (MakeLzmaCodec checks them): format 1 or 2, check one of -1/0/1/4/10, preset
  // 0-9 possibly or'ed with 0x80000000.
  LzmaCodec(int format, int check, uint32_t preset) : format_(format), check_(check), preset_(preset) {}

  std::string_view name() const override { return "numcodecs.lzma"; }
  nlohmann::json ToJson() const override;
  Status Encode(ByteView in, Bytes* out) const override;
  Status Decode(ByteView in, Bytes* out) const override;
  std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const override;

 private:
  int format_;
  int check_;
  uint32_t preset_;
};

}  // namespace tessera
