// Where an array lives, and which format it is in.
//
// A location is a path on the local filesystem (a `file://` URL is accepted too), an object-store
// prefix `s3://bucket/prefix` (read and written; see store/s3_store.h for the configuration), or
// an `http(s)://` URL (read only). Zarr v3 arrays and Neuroglancer precomputed volumes are
// directories (prefixes); an HDF5 dataset is a file (local or an object) plus the dataset's path
// inside it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tessera/core/status.h"
#include "tessera/store/store.h"
#include "tessera/store/store_options.h"

namespace tessera {

struct Location {
  std::string scheme = "file";  // "file", "s3", "http" or "https"
  std::string path;             // the filesystem path (or the URL without its scheme)
  // How to reach the store (s3://, http(s)://) where the caller said, instead of the environment;
  // null: the environment's. Copies of a location (its levels, its parent) keep them.
  std::shared_ptr<const StoreOptions> store_options;

  bool is_file() const { return scheme == "file"; }

  std::string ToString() const;
};

// Parses "path", "file:///abs/path", "s3://bucket/prefix", "https://host/path". An empty text is
// an error. `store_options` (when not empty) travel with the location to OpenLocationStore.
Result<Location> ParseLocation(const std::string& text, const StoreOptions& store_options = {});

// The store of "SCHEME://path" for a scheme tessera does not know (an object store of the
// caller's, the tests' fault-injecting store): `create` is true when the location is written.
using StoreOpener = std::function<Result<std::shared_ptr<Store>>(const std::string& path, bool create)>;
// Makes SCHEME:// locations open through `opener` everywhere a location is taken (a null opener
// removes the scheme). file, s3, http and https cannot be replaced. Thread-safe.
Status RegisterStoreScheme(const std::string& scheme, StoreOpener opener);

// The store of a Zarr or precomputed location: a FileStore rooted at the path (its directory made
// when `create`), an S3Store over the bucket and prefix, or a read-only HttpStore (those two
// configured by the location's store_options over the environment).
Result<std::shared_ptr<Store>> OpenLocationStore(const Location& location, bool create);

// A single object (an HDF5 file) at a remote location: the store of its parent ("s3://b/d" for
// "s3://b/d/f.h5") and its key ("f.h5"). kInvalidArgument for a location that names no object.
struct LocationObject {
  std::shared_ptr<Store> store;
  std::string key;
};
Result<LocationObject> OpenLocationObject(const Location& location, bool create);

}  // namespace tessera
