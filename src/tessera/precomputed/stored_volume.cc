#include "tessera/precomputed/stored_volume.h"

#include <nlohmann/json.hpp>

#include "tessera/driver/driver_support.h"

namespace tessera::precomputed {

Result<std::optional<StoredVolume>> ReadStoredVolume(const Store& store) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> bytes, store.Get("info"));
  if (!bytes) return std::optional<StoredVolume>();
  const nlohmann::json info = nlohmann::json::parse(bytes->begin(), bytes->end(), nullptr, false);
  if (info.is_discarded() || !info.is_object())
    return CorruptData(store.Describe("info") + ": not a JSON object (bytes " + ByteRangeText(0, bytes->size()) + ")");
  StoredVolume volume;
  if (const nlohmann::json* type = driver::Member(info, "type"); type && type->is_string())
    volume.type = type->get<std::string>();
  if (const nlohmann::json* scales = driver::Member(info, "scales"); scales && scales->is_array())
    for (const nlohmann::json& scale : *scales)
      if (const nlohmann::json* key = driver::Member(scale, "key"); key && key->is_string())
        volume.scale_keys.push_back(key->get<std::string>());
  return std::optional<StoredVolume>(std::move(volume));
}

std::string DescribeStoredVolume(const StoredVolume& volume) {
  std::string keys;
  for (const std::string& k : volume.scale_keys) keys += (keys.empty() ? "" : ", ") + k;
  return "a precomputed " + (volume.type.empty() ? std::string() : volume.type + " ") + "volume of " +
         std::to_string(volume.scale_keys.size()) + " scale(s) (info" + (keys.empty() ? "" : "; " + keys) + ")";
}

Status RemoveStoredVolume(Store& store, const StoredVolume& volume) {
  TESSERA_RETURN_IF_ERROR(store.Erase("info"));
  for (const std::string& scale : volume.scale_keys) {
    // A key that climbs out of the volume ("../x", "/abs") is not the volume's to remove.
    if (scale.empty() || scale.front() == '/' || scale.find("..") != std::string::npos) continue;
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> keys, store.List(scale + "/"));
    for (const std::string& key : keys) TESSERA_RETURN_IF_ERROR(store.Erase(key));
  }
  return store.Flush();
}

}  // namespace tessera::precomputed
