#include "tessera/api/location.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "tessera/hdf5/h5_reader.h"

namespace tessera {

std::string Location::ToString() const { return scheme == "file" ? path : scheme + "://" + path; }

Result<Location> ParseLocation(const std::string& text) {
  if (text.empty()) return InvalidArgument("location: empty");
  Location loc;
  const size_t sep = text.find("://");
  if (sep == std::string::npos) {
    loc.path = text;
    return loc;
  }
  std::string scheme = text.substr(0, sep);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  loc.scheme = scheme;
  loc.path = text.substr(sep + 3);
  if (scheme == "file") {
    if (loc.path.empty()) return InvalidArgument("location: " + text + " names no path");
    return loc;
  }
  if (scheme == "s3" || scheme == "http" || scheme == "https" || scheme == "gs")
    return Unsupported("location: " + text + ": " + scheme + ":// stores are not available yet (local paths only)");
  return InvalidArgument("location: " + text + ": unknown scheme \"" + scheme + "\" (use a path or file://)");
}

Result<Format> DetectFormat(const Location& location) {
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
  if (fs::is_regular_file(p / "zarr.json", ec)) return Format::kZarr3;
  if (fs::is_regular_file(p / "info", ec)) return Format::kPrecomputed;
  return NotFound(location.path + ": no Zarr v3 array (zarr.json) or precomputed volume (info) here");
}

Format FormatFromName(const Location& location) {
  std::string ext = std::filesystem::path(location.path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".h5" || ext == ".hdf5" || ext == ".he5" || ext == ".nc" || ext == ".hdf") return Format::kHdf5;
  return Format::kZarr3;
}

}  // namespace tessera
