// Creating an empty array to write regions into (zarr-python's create_array, tensorstore's
// create): the metadata of every level of `spec` is written, no chunk; every element reads as the
// fill value until written.
//
//   ArraySpec spec;  spec.dtype = DataType::kUInt32;  spec.shape = {512, 2048, 2048};  ...
//   auto a = CreateArray("labels.zarr", spec).value();     // opened r+
//   Status st = a->Write(a->Select("0:64, 0:512, 0:512").value(), block);
//
// options.mode: w- (the default: an error naming what exists, if anything does) or w (what is
// there is removed wholly first); see api/create_mode.h. A pyramid spec creates every level, each
// an array of its own: writing level 0 does not change the others. Formats without region writes
// (HDF5) are refused before anything is written.
#pragma once

#include <memory>
#include <string>

#include "tessera/api/array.h"
#include "tessera/api/stream.h"

namespace tessera {

Result<std::unique_ptr<Array>> CreateArray(const std::string& location, const ArraySpec& spec,
                                           const StreamOptions& options = {});

}  // namespace tessera
