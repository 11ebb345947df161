// The HDF5 driver's file of many arrays (driver::MultiArrayFile): an acquisition's arrays as
// datasets of one HDF5 file, written whole at Close (SharedHdf5File says how).
#pragma once

#include <memory>

#include "tessera/core/status.h"
#include "tessera/driver/format_driver.h"
#include "tessera/store/location.h"

namespace tessera::hdf5 {

// Starts the file that will be `location` at Close (a local path, its directory existing, or an
// object-store key).
Result<std::unique_ptr<driver::MultiArrayFile>> CreateHdf5MultiArrayFile(const Location& location);

}  // namespace tessera::hdf5
