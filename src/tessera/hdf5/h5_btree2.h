// Version-2 B-trees ("BTHD" header, "BTIN" internal and "BTLF" leaf nodes): walks every record
// of a tree, whatever its record type. Used for chunk indexes (types 10, 11) and the link name
// index of dense groups (type 5).
#pragma once

#include <cstdint>
#include <functional>

#include "tessera/hdf5/h5_raw_file.h"

namespace tessera::hdf5 {

// Calls `visit` with each record's bytes (record_size of them) and where they are, in tree
// order. Checksums are verified, node capacities bounded, a node seen twice is a loop. The
// tree's record type must be `record_type`.
Status WalkBTreeV2(const RawFile& file, uint64_t header_addr, uint8_t record_type,
                   const std::function<Status(ByteView record, uint64_t record_addr)>& visit);

}  // namespace tessera::hdf5
