// The format drivers tessera knows (driver/format_driver.h), and what the façade asks of them by
// format: the one place that lists the formats. A new format is a folder with its driver and one
// line in kDrivers (driver_registry.cc).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tessera/core/status.h"
#include "tessera/driver/format_driver.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"

namespace tessera {

// Every driver, in the order detection asks them.
std::span<const driver::FormatDriver* const> FormatDrivers();
const driver::FormatDriver& DriverOf(Format format);

std::string_view FormatName(Format format);  // "zarr3", "precomputed", "hdf5"
// A driver's name or alias ("zarr", "h5", ...); kUnsupported naming the supported ones otherwise.
Result<Format> ParseFormat(std::string_view name);

// Checks `spec` for `format` and fills in the format's defaults (codec, chunk shape, pyramid).
// Errors (kInvalidArgument, kUnsupported) start with the field they are about: "chunk_shape: ...".
// A choice the format cannot honour is an error naming the field and the format.
Result<ArraySpec> ResolveSpec(const ArraySpec& spec, Format format);

// The spec of pyramid level `level` of a spec resolved for `format`: LevelShape, plus the
// format's own fields that change with the level (precomputed: resolution, voxel offset, key).
ArraySpec LevelSpec(const ArraySpec& resolved, Format format, int level);

// The format of what exists at `location`, as the drivers detect it. kNotFound when nothing
// recognisable is there; kInvalidArgument for an object (file) no driver recognises.
Result<Format> DetectFormat(const Location& location);

// The format a new array at `location` gets when the caller names none: the driver claiming its
// extension (".h5", ".hdf5", ".he5", ".nc", ".hdf" -> HDF5), else Zarr v3.
Format FormatFromName(const Location& location);

// The format of a new array at `location`: `format_name` parsed, or FormatFromName when empty.
Result<Format> FormatForNew(const std::string& location, std::string_view format_name);

}  // namespace tessera
