// A Zarr array whose elements numpy sees as a type tessera has no DataType for, although their
// bytes are those of one (bfloat16's are uint16's, datetime64's and timedelta64's are int64's):
// the array is read as that DataType, through the same codecs and the same `bytes`-codec endian
// handling, so the decoded bytes are already numpy's native little-endian layout, and presented
// as an element type (core/element_type.h) of the same size.
#pragma once

#include <memory>
#include <string>

#include "tessera/read/selection_read.h"

namespace tessera::zarr {

// `bits`: the array read as the DataType of the same size (its fill_value the element's fill).
// `numpy`: numpy's dtype string ("bfloat16", "<M8[ns]"); `description` names it in messages.
std::unique_ptr<ChunkSource> ElementViewSource(std::shared_ptr<const ChunkSource> bits, std::string numpy,
                                               std::string description);

// `units`: an array whose last dimension is each element's code units (zarr/fixed_bytes_type.h),
// already in numpy's byte order; `element` the element type they make, its fill one element.
std::unique_ptr<ChunkSource> ElementBytesSource(std::shared_ptr<const ChunkSource> units, ElementType element);

}  // namespace tessera::zarr
