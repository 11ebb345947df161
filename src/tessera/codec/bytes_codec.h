// The Zarr v3 `bytes` array -> bytes codec: elements in C order, each in the configured byte
// order. Little endian is a plain copy (the decoded array is already host = little-endian order);
// big endian swaps each scalar component (ComponentSize: complex64 swaps its two float32 halves
// separately). Encoded size is always spec.NumBytes().
#pragma once

#include <optional>
#include <string_view>

#include "tessera/codec/codec.h"

namespace tessera {

class BytesCodec final : public ArrayToBytesCodec {
 public:
  // `endian` nullopt means the configuration omitted it, allowed only for 1-byte types (then the
  // codec acts as little endian and ToJson writes no configuration).
  explicit BytesCodec(std::optional<Endian> endian) : endian_(endian) {}

  std::optional<Endian> endian() const override { return endian_; }

  std::string_view name() const override { return "bytes"; }
  CodecId id() const override { return CodecId::kBytes; }
  nlohmann::json ToJson() const override;
  Status Encode(const ChunkSpec& spec, ByteView array, Bytes* out) const override;
  Status Decode(const ChunkSpec& spec, ByteView encoded, Bytes* out) const override;
  std::optional<size_t> MaxEncodedSize(const ChunkSpec& spec) const override {
    return spec.NumBytes();
  }
  std::optional<size_t> FixedEncodedSize(const ChunkSpec& spec) const override {
    return spec.NumBytes();
  }

 private:
  // Copies `in` to *out, swapping components when the codec is big endian. Both directions are
  // the same byte permutation.
  void Convert(DataType dtype, ByteView in, Bytes* out) const;

  std::optional<Endian> endian_;
};

// Reverses the bytes of each `component_bytes`-sized group of `data` in place (1, 2, 4 or 8;
// 1 is a no-op). data.size() must be a multiple of component_bytes.
void SwapComponentBytes(MutableByteView data, size_t component_bytes);

}  // namespace tessera
