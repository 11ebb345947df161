// Where an HDF5 file being written goes: its H5Writer over the location's store. The file is
// written through the store's writable file: a local file beside its final name, renamed into
// place at Close; on an object store a staged file uploaded at Close in one PUT or one multipart
// upload. Either way it appears complete or not at all. Shared by the single-dataset stream
// (hdf5_driver) and a file of several datasets (hdf5_shared_file).
#pragma once

#include <memory>
#include <optional>

#include "tessera/hdf5/h5_writer.h"
#include "tessera/store/location.h"

namespace tessera::hdf5 {

struct Hdf5FileTarget {
  std::optional<LocationObject> remote;  // an object store's; destroyed after the file's writer
  std::unique_ptr<H5Writer> file;
};

// Starts the file that becomes `location` at H5Writer::Close. A local file's directory must
// exist; an object store's credentials and bucket are checked now, not after the whole stream.
Result<Hdf5FileTarget> CreateHdf5FileTarget(const Location& location);

}  // namespace tessera::hdf5
