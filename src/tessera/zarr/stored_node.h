// What a Zarr location holds (an array, an OME-Zarr image or another group), read from its
// metadata keys, to name it in "something exists here" errors (mode w-) and to remove it wholly
// (mode w). Zarr v2 nodes (.zarray, .zgroup with OME-Zarr 0.4 .zattrs) are recognised too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/core/status.h"
#include "tessera/store/store.h"

namespace tessera::zarr {

struct StoredNode {
  enum class Kind { kArray, kOmeImage, kGroup };
  Kind kind = Kind::kArray;
  std::string metadata_key;              // "zarr.json", ".zarray" or ".zgroup"
  std::vector<std::string> level_paths;  // an OME-Zarr image: its levels' paths, from multiscales
};

// The node at the root of `store`; nullopt when there is none. Malformed JSON is kCorruptData
// naming the key.
Result<std::optional<StoredNode>> ReadStoredNode(const Store& store);

// "a Zarr array (zarr.json)", "an OME-Zarr image of 3 levels (zarr.json; levels 0, 1, 2)", ...
std::string DescribeStoredNode(const StoredNode& node);

// Removes the node: its metadata first (an image's group metadata, then each level's), so nothing
// half-removed looks valid; then every key under the store's root, which all belong to it (an
// array's chunks and shards; an image's levels and whatever else the image holds). A group that
// is not an image is refused (kFailedPrecondition): its arrays are not one array to replace.
Status RemoveStoredNode(Store& store, const StoredNode& node, const std::string& where);

}  // namespace tessera::zarr
