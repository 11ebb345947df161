// Zarr v3 `bfloat16` fill values (the data type tensorstore writes): tessera reads a bfloat16
// array as its 16-bit patterns (uint16, whose `bytes`-codec endian handling is the same), so
// its fill value is those 16 bits, little-endian.
#pragma once

#include <nlohmann/json.hpp>

#include "tessera/core/dtype.h"
#include "tessera/core/status.h"

namespace tessera::zarr {

// The spec's forms: a number (rounded to the nearest bfloat16, ties to even), "NaN",
// "Infinity", "-Infinity", or "0x" and four hex digits (the bit pattern).
Result<FillValue> ParseBFloat16FillValue(const nlohmann::json& j);

// The inverse: a number, "NaN" for the canonical NaN (0x7fc0), "Infinity"/"-Infinity", or the
// hex bit pattern for any other NaN.
nlohmann::json BFloat16FillValueToJson(const FillValue& fill);

}  // namespace tessera::zarr
