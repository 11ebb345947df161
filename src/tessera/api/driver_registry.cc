#include "tessera/api/driver_registry.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

#include "tessera/hdf5/h5_file.h"
#include "tessera/hdf5/h5_reader.h"
#include "tessera/hdf5/h5_superblock.h"

namespace tessera {

namespace {

// Whether the remote object at `location` is an HDF5 file (nullopt: there is no such object).
Result<std::optional<bool>> RemoteHdf5(const Location& location) {
  Result<LocationObject> object = OpenLocationObject(location, /*create=*/false);
  if (!object.ok()) return std::optional<bool>();
  Result<std::shared_ptr<hdf5::H5File>> file = hdf5::H5File::Open(object->store, object->key);
  if (!file.ok()) {
    if (file.status().kind() == ErrorKind::kNotFound) return std::optional<bool>();
    return file.status();
  }
  // A read that fails (short, the network) is that error, not "no HDF5 file here".
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> signature, hdf5::FindSignature(**file));
  return std::optional<bool>(signature.has_value());
}

}  // namespace

Result<Format> DetectFormat(const Location& location) {
  if (!location.is_file()) {
    const bool h5_name = FormatFromName(location) == Format::kHdf5;
    if (h5_name) {  // the object first: "f.h5" is rarely a directory
      TESSERA_ASSIGN_OR_RETURN(std::optional<bool> h5, RemoteHdf5(location));
      if (h5 && *h5) return Format::kHdf5;
    }
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
    for (const char* key : {"zarr.json", ".zarray", ".zgroup"}) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> zarr, store->Size(key));
      if (zarr) return Format::kZarr3;  // v3, or v2 (read as v3)
    }
    TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> info, store->Size("info"));
    if (info) return Format::kPrecomputed;
    if (!h5_name) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<bool> h5, RemoteHdf5(location));
      if (h5) {
        if (*h5) return Format::kHdf5;
        return InvalidArgument(location.ToString() + " is an object but not an HDF5 file (no HDF5 signature); " +
                               "Zarr and precomputed arrays are prefixes holding zarr.json or info");
      }
    }
    return NotFound(location.ToString() + ": no HDF5 file, Zarr array (zarr.json, .zarray or .zgroup) or precomputed volume (info) here");
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(location.path);
  if (fs::is_regular_file(p, ec)) {
    if (hdf5::LooksLikeHdf5(location.path)) return Format::kHdf5;
    return InvalidArgument(location.path + " is a file but not an HDF5 file (no HDF5 signature); Zarr and " +
                           "precomputed arrays are directories");
  }
  if (!fs::exists(p, ec)) return NotFound(location.path + ": no such file or directory");
  if (!fs::is_directory(p, ec)) return InvalidArgument(location.path + " is neither a directory nor an HDF5 file");
  for (const char* key : {"zarr.json", ".zarray", ".zgroup"})
    if (fs::is_regular_file(p / key, ec)) return Format::kZarr3;  // v3, or v2 (read as v3)
  if (fs::is_regular_file(p / "info", ec)) return Format::kPrecomputed;
  return NotFound(location.path + ": no Zarr array (zarr.json, .zarray or .zgroup) or precomputed volume (info) here");
}

Format FormatFromName(const Location& location) {
  std::string ext = std::filesystem::path(location.path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".h5" || ext == ".hdf5" || ext == ".he5" || ext == ".nc" || ext == ".hdf") return Format::kHdf5;
  return Format::kZarr3;
}

Result<Format> FormatForNew(const std::string& location, std::string_view format_name) {
  if (!format_name.empty()) return ParseFormat(format_name);
  TESSERA_ASSIGN_OR_RETURN(Location parsed, ParseLocation(location));
  return FormatFromName(parsed);
}

}  // namespace tessera
