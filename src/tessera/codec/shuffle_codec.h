// numcodecs' byte `shuffle`: Zarr v3 `numcodecs.shuffle` and the Zarr v2 filter `shuffle`. Encoding
// groups the bytes of `elementsize`-byte elements by significance (all first bytes, then all
// second bytes, ...), as HDF5's shuffle filter does; decoding restores them. An elementsize of 0 or
// 1 copies. Input whose length is not a multiple of elementsize is refused, as numcodecs does:
// kInvalidArgument when encoding, kCorruptData when decoding.
#pragma once

#include "tessera/codec/codec.h"

namespace tessera {

class ShuffleCodec final : public BytesToBytesCodec {
 public:
  explicit ShuffleCodec(size_t element_bytes) : element_bytes_(element_bytes) {}

  size_t element_bytes() const { return element_bytes_; }

  std::string_view name() const override { return "numcodecs.shuffle"; }
  nlohmann::json ToJson() const override;
  Status Encode(ByteView in, Bytes* out) const override;
  Status Decode(ByteView in, Bytes* out) const override;
  std::optional<size_t> MaxEncodedSize(size_t decoded_bytes) const override { return decoded_bytes; }
  std::optional<size_t> FixedEncodedSize(size_t decoded_bytes) const override { return decoded_bytes; }

 private:
  size_t element_bytes_;
};

}  // namespace tessera
