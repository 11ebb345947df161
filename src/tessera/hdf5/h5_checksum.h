// Bob Jenkins' lookup3 `hashlittle`, the checksum HDF5 puts on version 2+ metadata (superblock
// v2/v3, OHDR/OCHK object header chunks, fixed/extensible array and v2 B-tree blocks).
#pragma once

#include <cstdint>

#include "tessera/core/bytes.h"

namespace tessera::hdf5 {

uint32_t Lookup3Hash(ByteView data, uint32_t initval = 0);

}  // namespace tessera::hdf5
