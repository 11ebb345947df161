// What a Neuroglancer precomputed location holds, read from its info, to name it in "something
// exists here" errors (mode w-) and to remove it wholly (mode w).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/core/status.h"
#include "tessera/store/store.h"

namespace tessera::precomputed {

struct StoredVolume {
  std::string type;                     // "image", "segmentation", ...
  std::vector<std::string> scale_keys;  // the scale folders the info lists
};

// The volume whose info is at the root of `store`; nullopt when there is no info. The info is
// read as JSON only (its scales' keys), so a volume tessera cannot read is still named and
// removable. Malformed JSON is kCorruptData naming the key.
Result<std::optional<StoredVolume>> ReadStoredVolume(const Store& store);

// "a precomputed image volume of 2 scale(s) (info; s0, s1)"
std::string DescribeStoredVolume(const StoredVolume& volume);

// Removes the volume: the info first, so nothing half-removed looks valid, then every key under
// each scale folder it lists. Other keys beside them (meshes, skeletons, provenance: not part of
// the scales) stay.
Status RemoveStoredVolume(Store& store, const StoredVolume& volume);

}  // namespace tessera::precomputed
