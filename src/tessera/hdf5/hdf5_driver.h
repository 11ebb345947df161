// The HDF5 format driver (one chunked dataset of a file): see driver/format_driver.h.
#pragma once

#include "tessera/driver/format_driver.h"

namespace tessera::hdf5 {

const driver::FormatDriver& Hdf5Driver();

}  // namespace tessera::hdf5
