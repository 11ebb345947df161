#include "tessera/api/create_mode.h"

#include <filesystem>

#include "tessera/api/driver_registry.h"

namespace tessera::api_internal {
namespace {

// The entries of a local directory, for the message: how many, and the first one's name.
std::optional<std::string> NonEmptyDirectory(const std::filesystem::path& dir) {
  std::error_code ec;
  int64_t count = 0;
  std::string first;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    if (count++ == 0) first = it->path().filename().string();
  }
  if (count == 0) return std::nullopt;
  return "a non-empty directory (" + std::to_string(count) + " entr" + (count == 1 ? "y" : "ies") + ", e.g. " +
         first + ") that holds no array";
}

}  // namespace

Result<std::optional<Format>> StoredFormatAt(const Location& location) {
  Result<Format> detected = DetectFormat(location);
  if (detected.ok()) return std::optional<Format>(*detected);
  // Nothing recognisable (kNotFound), or an object no driver reads (kInvalidArgument).
  if (detected.status().kind() == ErrorKind::kNotFound || detected.status().kind() == ErrorKind::kInvalidArgument)
    return std::optional<Format>();
  return detected.status();
}

Result<std::optional<std::string>> WhatExistsAt(const Location& location, Format format) {
  // A location tessera cannot write (http) is that error, before anything is looked at.
  if (!location.is_file()) TESSERA_RETURN_IF_ERROR(OpenLocationStore(location, /*create=*/true).status());
  TESSERA_ASSIGN_OR_RETURN(std::optional<Format> stored, StoredFormatAt(location));
  if (stored) {
    TESSERA_ASSIGN_OR_RETURN(std::string what, DriverOf(*stored).DescribeStored(location));
    return std::optional<std::string>(std::move(what));
  }
  if (location.is_file()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path p(location.path);
    const fs::file_status st = fs::status(p, ec);
    if (!fs::exists(st)) return std::optional<std::string>();
    if (fs::is_directory(st)) return NonEmptyDirectory(p);
    return std::optional<std::string>("a file that is no array tessera reads");
  }
  // An object store: an object of the name (a single-object format's), or keys under the prefix.
  if (DriverOf(format).single_object()) {
    Result<LocationObject> object = OpenLocationObject(location, /*create=*/false);
    if (object.ok()) {
      TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> size, object->store->Size(object->key));
      if (size) return std::optional<std::string>("an object of " + std::to_string(*size) + " bytes that is no array tessera reads");
    }
  }
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Store> store, OpenLocationStore(location, /*create=*/false));
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> keys, store->List(""));
  if (keys.empty()) return std::optional<std::string>();
  return std::optional<std::string>(std::to_string(keys.size()) + " key(s) under this prefix (e.g. " + keys.front() +
                                    ") that hold no array");
}

Status ExistsError(const Location& location, const std::string& what) {
  return AlreadyExists(location.ToString() + ": " + what + " exists here; mode w replaces it");
}

Status PrepareToCreate(const Location& location, Format format, Mode mode) {
  if (mode != Mode::kCreate && mode != Mode::kOverwrite)
    return InvalidArgument("mode " + std::string(ModeName(mode)) + " does not create an array (w- or w)");
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> what, WhatExistsAt(location, format));
  if (!what) return Status::Ok();
  if (mode == Mode::kCreate) return ExistsError(location, *what);
  TESSERA_ASSIGN_OR_RETURN(std::optional<Format> stored, StoredFormatAt(location));
  if (!stored)
    return AlreadyExists(location.ToString() + ": " + *what +
                         " exists here; mode w replaces only an array tessera recognises (remove it first)");
  // The new file of a single-object format replaces the old one whole when it is complete.
  if (*stored == format && DriverOf(format).single_object()) return Status::Ok();
  return DriverOf(*stored).Remove(location).WithContext("replacing " + location.ToString() + " (mode w)");
}

}  // namespace tessera::api_internal
