// One HDF5 element as JSON, for attribute values in `tessera info`: numbers as numbers ("NaN",
// "Infinity" as the fill-value JSON spells them), bools, complex as [re, im], strings as text
// (non-UTF-8 bytes escaped \xNN), opaque values as "0x..." hex, compounds as objects of their
// members, array types as nested lists.
#pragma once

#include <nlohmann/json.hpp>

#include "tessera/core/bytes.h"
#include "tessera/hdf5/h5_datatype.h"

namespace tessera::hdf5 {

// `element`: type.size bytes already converted to numpy's layout (ConvertToNumpy). Types with no
// fixed-size value (variable-length, reference, time) give a string naming their class.
nlohmann::json ElementToJson(const H5Type& type, ByteView element);

}  // namespace tessera::hdf5
