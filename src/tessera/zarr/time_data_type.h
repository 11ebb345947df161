// Zarr's numpy datetime64 / timedelta64 data types: 64-bit signed counts of a unit (times a scale
// factor), NaT being the smallest int64. Read as int64 and presented to numpy as "<M8[10s]" etc.
//   v3: {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}
//   v2: "<M8[ns]", ">m8[10s]"
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tessera/core/dtype.h"
#include "tessera/core/status.h"

namespace tessera::zarr {

struct TimeDataType {
  char kind = 'M';           // numpy's kind: 'M' datetime64, 'm' timedelta64
  std::string unit = "s";    // numpy's unit: "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"
  int64_t scale_factor = 1;  // counts are of scale_factor units

  // numpy's dtype string, little-endian: "<M8[ns]", "<m8[10s]".
  std::string Numpy() const;
  std::string Description() const;  // "datetime64[ns]"
  nlohmann::json ToJson() const;    // the v3 data_type object
  // The v3 data_type `j`: nullopt when it names no time type, an error when it does but is malformed.
  static Result<std::optional<TimeDataType>> FromJson(const nlohmann::json& j);
  // A numpy/v2 dtype without its byte-order character: "M8[ns]", "m8[10s]"; nullopt if no time type.
  static Result<std::optional<TimeDataType>> FromNumpy(std::string_view t);
};

// fill_value: an integer count, or "NaT" (the smallest int64, as numpy stores NaT).
Result<FillValue> ParseTimeFillValue(const nlohmann::json& j);
nlohmann::json TimeFillValueToJson(const FillValue& fill);

}  // namespace tessera::zarr
