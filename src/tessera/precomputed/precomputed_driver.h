// The Neuroglancer precomputed format driver: see driver/format_driver.h.
#pragma once

#include "tessera/driver/format_driver.h"

namespace tessera::precomputed {

const driver::FormatDriver& PrecomputedDriver();

}  // namespace tessera::precomputed
