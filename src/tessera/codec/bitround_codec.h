// numcodecs' `bitround` filter: Zarr v3 `numcodecs.bitround` (array -> array) and the Zarr v2 filter
// `bitround`. Encoding rounds each float16/32/64 to `keepbits` mantissa bits (round half to even on
// the bit pattern, as numcodecs does after Klöwer et al. 2021), leaving the type unchanged; decoding
// is the identity (the rounding is lossy, the stored values are the array's). Configuration:
// "keepbits" (required, 0 .. the type's mantissa bits: 10, 23 or 52).
#pragma once

#include "tessera/codec/codec.h"

namespace tessera {

class BitRoundCodec final : public ArrayToArrayCodec {
 public:
  // Preconditions (MakeBitRoundCodec checks them): dtype float16/32/64, keepbits within its mantissa.
  BitRoundCodec(DataType dtype, int keepbits) : dtype_(dtype), keepbits_(keepbits) {}

  std::string_view name() const override { return "numcodecs.bitround"; }
  nlohmann::json ToJson() const override;
  Result<ChunkSpec> EncodedSpec(const ChunkSpec& decoded) const override;
  Status Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const override;
  Status Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const override;

 private:
  DataType dtype_;
  int keepbits_;
};

// The mantissa bits of a float type (10, 23, 52), 0 for other types.
int MantissaBits(DataType dtype);

Result<std::shared_ptr<const ArrayToArrayCodec>> MakeBitRoundCodec(const nlohmann::json& config, const ChunkSpec& spec);

}  // namespace tessera
