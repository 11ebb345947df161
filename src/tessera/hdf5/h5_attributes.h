// An object's attributes (attribute messages, versions 1-3, in its header or in dense storage), decoded for
// `tessera info`: numbers (integer and IEEE float types of either byte order, h5py bools) and
// strings (fixed length, or variable length from the global heap). Attributes are descriptive:
// one that cannot be decoded is shown with the reason instead of failing the object.
#pragma once

#include <nlohmann/json.hpp>

#include "tessera/hdf5/h5_raw_file.h"
#include "tessera/hdf5/h5_object_header.h"

namespace tessera::hdf5 {

// {name: value}: a scalar as a JSON value, an array as a flat list (up to kMaxShownElements
// elements, else a "<N elements of T>" summary), an undecodable one as {"unreadable": reason}.
// Attributes in dense storage (more than 8 in new-style headers: a fractal heap and a v2 B-tree
// name index) are read too.
nlohmann::json ReadAttributes(const RawFile& file, const ObjectHeader& oh);

inline constexpr size_t kMaxShownElements = 64;

}  // namespace tessera::hdf5
