// The format drivers tessera knows, and what the façade asks of them by format.
#pragma once

#include <string>
#include <string_view>

#include "tessera/core/status.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"

namespace tessera {

// The format of what exists at `location`: an HDF5 file (by its signature), a directory with
// zarr.json (Zarr v3) or info (precomputed). kNotFound when nothing recognisable is there.
Result<Format> DetectFormat(const Location& location);

// The format a new array at `location` gets when the caller names none: ".h5", ".hdf5", ".he5",
// ".nc" -> HDF5; anything else -> Zarr v3.
Format FormatFromName(const Location& location);

// The format of a new array at `location`: `format_name` parsed ("zarr3", "precomputed", "hdf5"),
// or FormatFromName when it is empty.
Result<Format> FormatForNew(const std::string& location, std::string_view format_name);

}  // namespace tessera
