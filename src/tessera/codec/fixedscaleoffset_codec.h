// numcodecs' `fixedscaleoffset` filter: Zarr v3 `numcodecs.fixedscaleoffset` (array -> array) and
// the Zarr v2 filter `fixedscaleoffset`, as xarray and netCDF's scale_factor/add_offset use it.
// For float32/float64 arrays: encoding stores round((x - offset) * scale) as `astype` (computed in
// the array's precision, round half to even, as numpy does); decoding computes
// enc / scale + offset, in float64 for an integer astype and in astype's precision for a float one,
// and converts to the array's type. Values outside an integer astype's range wrap as numpy's
// conversion through int64 does on x86-64.
// Configuration: "offset" and "scale" (numbers, required), "dtype" (required, the array's type) and
// "astype" (default: dtype; an integer type or float32/float64).
#pragma once

#include "tessera/codec/codec.h"

namespace tessera {

class FixedScaleOffsetCodec final : public ArrayToArrayCodec {
 public:
  // Preconditions (MakeFixedScaleOffsetCodec checks them): dtype float32/64; astype an integer type
  // or float32/64; scale non-zero.
  FixedScaleOffsetCodec(double offset, double scale, DataType dtype, DataType astype, nlohmann::json config)
      : offset_(offset), scale_(scale), dtype_(dtype), astype_(astype), config_(std::move(config)) {}

  std::string_view name() const override { return "numcodecs.fixedscaleoffset"; }
  nlohmann::json ToJson() const override { return {{"name", "numcodecs.fixedscaleoffset"}, {"configuration", config_}}; }
  Result<ChunkSpec> EncodedSpec(const ChunkSpec& decoded) const override;
  Status Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const override;
  Status Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const override;

 private:
  double offset_;
  double scale_;
  DataType dtype_;
  DataType astype_;
  nlohmann::json config_;  // as given, for ToJson
};

Result<std::shared_ptr<const ArrayToArrayCodec>> MakeFixedScaleOffsetCodec(const nlohmann::json& config, const ChunkSpec& spec);

}  // namespace tessera
