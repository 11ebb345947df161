// numcodecs' `delta` filter: Zarr v3 `numcodecs.delta` (array -> array) and the Zarr v2 filter
// `delta`. Over the chunk's elements in C order (flattened), encoding stores the first element and
// then each element minus the one before it, converted to `astype`; decoding is the running sum,
// in the array's type. Integers wrap (two's complement) as numpy does, and `astype` may be any
// integer type: each stored difference is sign- or zero-extended by astype's signedness before it
// is added. Floating-point types (float16/32/64) add in their own precision, as numpy's cumsum
// does, and need astype equal to the array's type. Configuration: "dtype" (required, the array's
// type as a numpy dtype string such as "<i4"; its byte order is not part of the values) and
// "astype" (default: dtype).
#pragma once

#include <string>

#include "tessera/codec/codec.h"

namespace tessera {

// A numpy dtype string ("<i4", ">f8", "|u1", "int16", "float32") as a DataType and its byte order
// character ('<', '>' or '|' for one byte and where the string names none). kUnsupported for other
// kinds (bool, complex, strings, structured).
struct NumpyDtype {
  DataType dtype = DataType::kUInt8;
  char byte_order = '|';
};
Result<NumpyDtype> ParseNumpyDtype(const std::string& text);

class DeltaCodec final : public ArrayToArrayCodec {
 public:
  // Preconditions (MakeDeltaCodec checks them): dtype and astype are integer types, or the same
  // floating-point type.
  DeltaCodec(DataType dtype, DataType astype) : dtype_(dtype), astype_(astype) {}

  DataType dtype() const { return dtype_; }
  DataType astype() const { return astype_; }

  std::string_view name() const override { return "numcodecs.delta"; }
  nlohmann::json ToJson() const override;
  Result<ChunkSpec> EncodedSpec(const ChunkSpec& decoded) const override;
  Status Encode(const ChunkSpec& decoded, ByteView in, Bytes* out) const override;
  Status Decode(const ChunkSpec& decoded, ByteView in, Bytes* out) const override;

 private:
  DataType dtype_;
  DataType astype_;
};

// The codec from a numcodecs configuration (v3 "configuration" or a v2 filter object without
// "id") for arrays of `array_dtype`.
Result<std::shared_ptr<const ArrayToArrayCodec>> MakeDeltaCodec(const nlohmann::json& config, const ChunkSpec& spec);

}  // namespace tessera
