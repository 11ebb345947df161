#include "tessera/store/location.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "tessera/store/file_store.h"
#include "tessera/store/http_store.h"
#include "tessera/store/s3_store.h"

namespace tessera {
namespace {

std::mutex registry_mu;
std::map<std::string, StoreOpener>& Registry() {
  static std::map<std::string, StoreOpener> openers;
  return openers;
}

std::optional<StoreOpener> RegisteredOpener(const std::string& scheme) {
  std::lock_guard<std::mutex> lock(registry_mu);
  auto it = Registry().find(scheme);
  if (it == Registry().end()) return std::nullopt;
  return it->second;
}

}  // namespace

Status RegisterStoreScheme(const std::string& scheme, StoreOpener opener) {
  if (scheme.empty() || !std::all_of(scheme.begin(), scheme.end(), [](unsigned char c) {
        return std::islower(c) || std::isdigit(c) || c == '+' || c == '-' || c == '.';
      }))
    return InvalidArgument("store scheme \"" + scheme + "\": use lowercase letters, digits, '+', '-' or '.'");
  if (scheme == "file" || scheme == "s3" || scheme == "http" || scheme == "https")
    return InvalidArgument("store scheme \"" + scheme + "\" is tessera's own and cannot be replaced");
  std::lock_guard<std::mutex> lock(registry_mu);
  if (opener) {
    Registry()[scheme] = std::move(opener);
  } else {
    Registry().erase(scheme);
  }
  return Status::Ok();
}

std::string Location::ToString() const { return scheme == "file" ? path : scheme + "://" + path; }

Result<Location> ParseLocation(const std::string& text, const StoreOptions& store_options) {
  if (text.empty()) return InvalidArgument("location: empty");
  Location loc;
  if (!store_options.empty()) loc.store_options = std::make_shared<const StoreOptions>(store_options);
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
  if (scheme == "s3" || scheme == "http" || scheme == "https" || RegisteredOpener(scheme)) {
    while (!loc.path.empty() && loc.path.back() == '/') loc.path.pop_back();
    if (loc.path.empty()) return InvalidArgument("location: " + text + " names no " +
                                                 (scheme == "s3" ? "bucket" : scheme.starts_with("http") ? "host" : "path"));
    return loc;
  }
  if (scheme == "gs")
    return Unsupported("location: " + text + ": gs:// is not available (use its S3-compatible endpoint with s3://)");
  return InvalidArgument("location: " + text + ": unknown scheme \"" + scheme + "\" (use a path, file://, s3:// or http(s)://)");
}

Result<std::shared_ptr<Store>> OpenLocationStore(const Location& location, bool create) {
  if (!location.is_file()) {
    if (std::optional<StoreOpener> opener = RegisteredOpener(location.scheme)) return (*opener)(location.path, create);
  }
  if (location.scheme == "s3") {
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<S3Store> store,
                             S3Store::Open(location.path, location.store_options ? *location.store_options : StoreOptions{}));
    return std::shared_ptr<Store>(std::move(store));
  }
  if (location.scheme == "http" || location.scheme == "https") {
    if (create) return Unsupported(location.ToString() + ": HTTP(S) locations are read only (write to a path or s3://)");
    http::ClientOptions client;
    TESSERA_ASSIGN_OR_RETURN(client.retry.timeout_s,
                             RetryTimeoutOf(location.store_options ? *location.store_options : StoreOptions{}));
    return std::shared_ptr<Store>(std::make_shared<HttpStore>(location.ToString(), client));
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<FileStore> store, FileStore::Open(location.path, create));
  return std::shared_ptr<Store>(std::move(store));
}

Result<LocationObject> OpenLocationObject(const Location& location, bool create) {
  const size_t slash = location.path.rfind('/');
  if (location.is_file() || slash == std::string::npos)
    return InvalidArgument(location.ToString() + " names no object (an HDF5 file is " +
                           (location.scheme == "s3" ? "s3://bucket/key" : "a URL with a path") + ")");
  Location parent = location;
  parent.path = location.path.substr(0, slash);
  LocationObject out;
  out.key = location.path.substr(slash + 1);
  TESSERA_ASSIGN_OR_RETURN(out.store, OpenLocationStore(parent, create));
  return out;
}

}  // namespace tessera
