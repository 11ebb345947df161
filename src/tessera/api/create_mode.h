// What creating an array does to what is already at its location, by mode (core/mode.h):
//   w-  anything there (an array or image of any format, an HDF5 file, any other file, a
//       non-empty directory or prefix) is kAlreadyExists naming it, before anything is written;
//   w   an array or image of any format is removed wholly first (FormatDriver::Remove) and nothing
//       outside it; anything tessera does not recognise as an array is refused as for w-. A file
//       of a single-object format (HDF5) written over by the same format is not removed first:
//       the new file replaces it whole at Close (rename or one upload), so a stream that fails
//       leaves the old file, as a crash would;
//   a   an existing array is continued (resume); nothing there: created as for w-.
// Internal to the façade: CreateStream, PlanStream, Convert and CreateSharedArray call it.
#pragma once

#include <optional>
#include <string>

#include "tessera/core/mode.h"
#include "tessera/core/status.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"

namespace tessera::api_internal {

// What is stored at `location`, in words ("a Zarr array (zarr.json)", "a non-empty directory
// (3 entries, e.g. notes.txt)"); nullopt when nothing is (a missing path, an empty directory,
// an empty prefix). `format` is the format about to be written there (it names the object an
// object-store location of a single-object format would be).
Result<std::optional<std::string>> WhatExistsAt(const Location& location, Format format);

// The format of the array at `location`, when one is there.
Result<std::optional<Format>> StoredFormatAt(const Location& location);

// Makes `location` ready for a new array of `format` by `mode` (kCreate or kOverwrite; see the top
// of this file). Touches nothing under kCreate; under kOverwrite removes the array found there.
Status PrepareToCreate(const Location& location, Format format, Mode mode);

// The kAlreadyExists error of `what` existing at `location`.
Status ExistsError(const Location& location, const std::string& what);

}  // namespace tessera::api_internal
