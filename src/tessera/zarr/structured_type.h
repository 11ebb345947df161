// Zarr's structured data type (numpy's record dtype, packed fields in order), read as raw bytes of
// the record (FixedBytesType kind 'V') and presented as numpy's structured dtype.
//   v3 (zarr-python): {"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}}
//   v2: [["a", "<i4"], ["b", ">f8"]]  (translated to the v3 form with these numpy type strings)
// Fields are scalars: bool, integers, floats, complex (v3 names or numpy type strings, whose byte
// order is kept, as zarr-python keeps it), and S / U / V; subarray and nested fields are refused.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"
#include "tessera/zarr/fixed_bytes_type.h"

namespace tessera::zarr {

// The v3 data_type `j`: nullopt when it is no structured type, an error naming the field that
// tessera cannot read or that is malformed.
Result<std::optional<FixedBytesType>> StructuredTypeFromJson(const nlohmann::json& j);

}  // namespace tessera::zarr
