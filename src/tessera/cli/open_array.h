// Opens whatever array a store path holds, for the format-neutral commands (`read`, `info`):
// a Zarr v3 array (zarr.json) or a Neuroglancer precomputed volume (info).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/read/hyperslab.h"

namespace tessera::cli {

struct OpenedArray {
  std::string format;                   // "zarr3" or "precomputed"
  std::unique_ptr<ChunkSource> source;  // what the hyperslab engine reads
  nlohmann::json description;           // format-specific details for `tessera info`
};

// `scale` selects a precomputed scale (ignored for Zarr).
Result<OpenedArray> OpenArray(const std::string& path, int scale);

}  // namespace tessera::cli
