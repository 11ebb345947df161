#include "tessera/api/driver_registry.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>

#include "tessera/hdf5/hdf5_driver.h"
#include "tessera/precomputed/precomputed_driver.h"
#include "tessera/spec/spec_error.h"
#include "tessera/zarr/zarr_driver.h"

namespace tessera {
namespace {

// The formats: one line each, in the order of the Format enum (and of detection).
const std::array<const driver::FormatDriver*, 3>& Registry() {
  static const std::array<const driver::FormatDriver*, 3> kDrivers = {
      &zarr::ZarrDriver(),
      &precomputed::PrecomputedDriver(),
      &hdf5::Hdf5Driver(),
  };
  return kDrivers;
}

// "A, B or C" of what each driver in `drivers` stores.
std::string StoredAsList(const std::vector<const driver::FormatDriver*>& drivers) {
  std::string out;
  for (size_t i = 0; i < drivers.size(); ++i) {
    if (i > 0) out += i + 1 == drivers.size() ? " or " : ", ";
    out += drivers[i]->stored_as();
  }
  return out;
}

// "zarr3 and precomputed arrays are <what>".
std::string ArePhrase(const std::vector<const driver::FormatDriver*>& drivers, const std::string& what) {
  std::string out;
  for (size_t i = 0; i < drivers.size(); ++i) {
    if (i > 0) out += i + 1 == drivers.size() ? " and " : ", ";
    out += drivers[i]->name();
  }
  return out + " arrays are " + what;
}

std::vector<const driver::FormatDriver*> DriversWhere(bool single_object) {
  std::vector<const driver::FormatDriver*> out;
  for (const driver::FormatDriver* d : FormatDrivers())
    if (d->single_object() == single_object) out.push_back(d);
  return out;
}

std::string Lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::span<const driver::FormatDriver* const> FormatDrivers() { return Registry(); }

const driver::FormatDriver& DriverOf(Format format) {
  for (const driver::FormatDriver* d : FormatDrivers())
    if (d->format() == format) return *d;
  return *Registry()[0];  // unreachable: every Format has a driver
}

std::string_view FormatName(Format format) { return DriverOf(format).name(); }

Result<Format> ParseFormat(std::string_view name) {
  std::string supported;
  for (const driver::FormatDriver* d : FormatDrivers()) {
    if (d->name() == name) return d->format();
    for (std::string_view alias : d->aliases())
      if (alias == name) return d->format();
    supported += (supported.empty() ? "" : ", ") + std::string(d->name());
  }
  return FieldError(ErrorKind::kUnsupported, "format",
                    "\"" + std::string(name) + "\" (supported: " + supported + ")");
}

Result<ArraySpec> ResolveSpec(const ArraySpec& spec, Format format) {
  const driver::FormatDriver& d = DriverOf(format);
  ArraySpec s = spec;
  TESSERA_RETURN_IF_ERROR(d.PrepareSpec(&s));
  TESSERA_RETURN_IF_ERROR(CheckCommonFields(s));
  // The options of the other formats must be left at their defaults.
  for (const driver::FormatDriver* other : FormatDrivers())
    if (other != &d) TESSERA_RETURN_IF_ERROR(other->CheckOptionsUnset(s, d.name()));
  TESSERA_RETURN_IF_ERROR(d.ResolveSpec(&s));
  TESSERA_RETURN_IF_ERROR(CheckCodecLevel(s));
  TESSERA_RETURN_IF_ERROR(CheckPyramidRequest(s));
  TESSERA_RETURN_IF_ERROR(d.ResolveMultiscale(&s));
  TESSERA_RETURN_IF_ERROR(ResolvePyramidLevels(&s));
  return s;
}

ArraySpec LevelSpec(const ArraySpec& resolved, Format format, int level) {
  ArraySpec s = LevelShape(resolved, level);
  // An image with a root of its own (an OME-Zarr group) keeps the attributes there, once.
  if (resolved.multiscale() && DriverOf(format).HasMultiscaleRoot()) s.attributes = nlohmann::json::object();
  if (level > 0) DriverOf(format).ScaleLevelSpec(resolved, level, &s);
  return s;
}

Result<Format> DetectFormat(const Location& location) {
  namespace fs = std::filesystem;
  const std::vector<const driver::FormatDriver*> objects = DriversWhere(true), prefixes = DriversWhere(false);
  if (location.is_file()) {
    std::error_code ec;
    const fs::path p(location.path);
    const bool file = fs::is_regular_file(p, ec);
    if (!file && !fs::exists(p, ec)) return NotFound(location.path + ": no such file or directory");
    if (!file && !fs::is_directory(p, ec))
      return InvalidArgument(location.path + " is neither a directory nor an " + StoredAsList(objects));
    for (const driver::FormatDriver* d : file ? objects : prefixes) {
      TESSERA_ASSIGN_OR_RETURN(driver::Detection found, d->Detect(location));
      if (found == driver::Detection::kDetected) return d->format();
    }
    if (file)
      return InvalidArgument(location.path + " is a file but not an " + StoredAsList(objects) + "; " +
                             ArePhrase(prefixes, "directories"));
    return NotFound(location.path + ": no " + StoredAsList(prefixes) + " here");
  }
  // An object store: the driver claiming the name first ("f.h5" is rarely a prefix), then the
  // prefix formats, then the other object formats.
  const Format named = FormatFromName(location);
  std::vector<const driver::FormatDriver*> order;
  if (DriverOf(named).single_object()) order.push_back(&DriverOf(named));
  for (const driver::FormatDriver* d : prefixes) order.push_back(d);
  for (const driver::FormatDriver* d : objects)
    if (d->format() != named) order.push_back(d);
  for (const driver::FormatDriver* d : order) {
    TESSERA_ASSIGN_OR_RETURN(driver::Detection found, d->Detect(location));
    if (found == driver::Detection::kDetected) return d->format();
    if (found == driver::Detection::kOtherObject && d->format() != named)
      return InvalidArgument(location.ToString() + " is an object but not an " + std::string(d->stored_as()) + "; " +
                             ArePhrase(prefixes, "prefixes of keys"));
  }
  std::vector<const driver::FormatDriver*> all(FormatDrivers().begin(), FormatDrivers().end());
  std::stable_partition(all.begin(), all.end(), [](const driver::FormatDriver* d) { return d->single_object(); });
  return NotFound(location.ToString() + ": no " + StoredAsList(all) + " here");
}

Format FormatFromName(const Location& location) {
  const std::string ext = Lowercase(std::filesystem::path(location.path).extension().string());
  for (const driver::FormatDriver* d : FormatDrivers())
    if (d->ClaimsExtension(ext)) return d->format();
  return Registry()[0]->format();
}

Result<Format> FormatForNew(const std::string& location, std::string_view format_name) {
  if (!format_name.empty()) return ParseFormat(format_name);
  TESSERA_ASSIGN_OR_RETURN(Location parsed, ParseLocation(location));
  return FormatFromName(parsed);
}

}  // namespace tessera
