// numcodecs' `quantize` filter: Zarr v3 `numcodecs.quantize` (array -> array) and the Zarr v2
// filter `quantize`. Encoding keeps `digits` decimal digits of float32/float64 values by rounding
// them to a multiple of 2^-bits, bits = ceil(log2(10^digits)) (round half to even, in the array's
// precision, as numpy does), then converts them to `astype` (float16/32/64); decoding converts
// astype back to the array's type (the rounding is lossy). Configuration: "digits" (required),
// "dtype" (required, the array's type as a numpy dtype string) and "astype" (default: dtype).
#pragma once

#include "tessera/codec/codec.h"

namespace tessera {

class QuantizeCodec final : public ArrayToArrayCodec {
 public:
  // Preconditions (MakeQuantizeCodec checks them): dtype float32/64, astype float16/32/64.
  QuantizeCodec(int digits, DataType dtype, DataType astype);

  std::string_view name() const override { return "numcodecs.quantize"; }
  nlohmann::json ToJson() const override;
  Result<ChunkSpec> EncodedSpec(const ChunkSpec& decoded) const override;
  Status Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const override;
  Status Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const override;

 private:
  int digits_;
  DataType dtype_;
  DataType astype_;
  double scale_;  // 2^bits
};

Result<std::shared_ptr<const ArrayToArrayCodec>> MakeQuantizeCodec(const nlohmann::json& config, const ChunkSpec& spec);

}  // namespace tessera
