// Where an array lives, and which format it is in.
//
// A location is a path on the local filesystem (a `file://` URL is accepted too). Zarr v3 arrays
// and Neuroglancer precomputed volumes are directories; an HDF5 dataset is a file plus the
// dataset's path inside it. Object-store URLs (`s3://`, `http(s)://`) parse, and are refused as
// unsupported until a store for them exists.
#pragma once

#include <optional>
#include <string>

#include "tessera/api/array_spec.h"
#include "tessera/core/status.h"

namespace tessera {

struct Location {
  std::string scheme = "file";  // "file" (today the only one that opens), "s3", "http", "https"
  std::string path;             // the filesystem path (or the URL without its scheme)

  std::string ToString() const;
};

// Parses "path", "file:///abs/path", "s3://bucket/prefix", "https://host/path". An empty text is
// an error.
Result<Location> ParseLocation(const std::string& text);

// The format of what exists at `location`: an HDF5 file (by its signature), a directory with
// zarr.json (Zarr v3) or info (precomputed). kNotFound when nothing recognisable is there.
Result<Format> DetectFormat(const Location& location);

// The format a new array at `location` gets when the caller names none: ".h5", ".hdf5", ".he5",
// ".nc" -> HDF5; anything else -> Zarr v3.
Format FormatFromName(const Location& location);

}  // namespace tessera
