// An ArraySpec's HDF5 part as the writers take it: the dataset's stream options (dtype, shape,
// chunks, the deflate / shuffle / fletcher32 filters, fill value, attributes) and JSON attributes
// as HDF5 attributes. Shared by the single-dataset driver and a file of several datasets
// (hdf5_shared_file.h), so a dataset's options mean the same in both.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/status.h"
#include "tessera/hdf5/h5_writer.h"
#include "tessera/hdf5/hdf5_stream.h"
#include "tessera/spec/array_spec.h"

namespace tessera::hdf5 {

// Ok when `value` can be stored as the HDF5 attribute `name`: a number (an integer within int64),
// a string, or a non-empty 1-D array of numbers; else kUnsupported about the field "attributes",
// naming the attribute and its value.
Status CheckHdf5Attribute(const std::string& name, const nlohmann::json& value);

// The attributes of a JSON object (null: none), each checked by CheckHdf5Attribute: integers as
// int64, other numbers as float64 (scalars or 1-D), strings as fixed-length UTF-8. Object order
// (nlohmann sorts keys), so the same JSON always gives the same attributes.
Result<std::vector<Attribute>> Hdf5AttributesOf(const nlohmann::json& attributes);

// The stream options of a resolved spec (the driver's ResolveSpec ran): its dataset is
// spec.hdf5.dataset.
Result<Hdf5StreamOptions> Hdf5StreamOptionsOf(const ArraySpec& resolved);

}  // namespace tessera::hdf5
