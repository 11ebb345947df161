// The Zarr v3 format driver (also reads Zarr v2 and OME-Zarr images): see driver/format_driver.h.
#pragma once

#include "tessera/driver/format_driver.h"

namespace tessera::zarr {

const driver::FormatDriver& ZarrDriver();

}  // namespace tessera::zarr
