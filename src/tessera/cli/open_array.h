// Opens whatever array a store path holds, for the format-neutral commands (`read`, `info`):
// a Zarr v3 array (zarr.json), a Neuroglancer precomputed volume (info), or one dataset of an
// HDF5 file (recognised by its signature, whatever the file is called).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/read/hyperslab.h"

namespace tessera::cli {

struct OpenedArray {
  std::string format;                   // "zarr3", "precomputed" or "hdf5"
  std::unique_ptr<ChunkSource> source;  // what the hyperslab engine reads
  nlohmann::json description;           // format-specific details for `tessera info`
};

// `scale` selects a precomputed scale (ignored otherwise). `dataset` selects an HDF5 dataset by
// path; empty picks the file's only dataset (a usage error listing them when there are several).
Result<OpenedArray> OpenArray(const std::string& path, int scale, const std::string& dataset = "");

// Whether `path` is an HDF5 file (a regular file with the HDF5 signature).
bool IsHdf5Path(const std::string& path);

}  // namespace tessera::cli
