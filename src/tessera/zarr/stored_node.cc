#include "tessera/zarr/stored_node.h"

#include "tessera/driver/driver_support.h"
#include "tessera/zarr/metadata.h"

namespace tessera::zarr {
namespace {

using driver::Member;

Result<std::optional<nlohmann::json>> ReadJson(const Store& store, const std::string& key) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> bytes, store.Get(key));
  if (!bytes) return std::optional<nlohmann::json>();
  TESSERA_ASSIGN_OR_RETURN(nlohmann::json j,
                           ParseJsonDocument(std::string(bytes->begin(), bytes->end()), store.Describe(key)));
  return std::optional<nlohmann::json>(std::move(j));
}

// The level paths of an OME-Zarr `multiscales` list (empty: not an image).
std::vector<std::string> LevelPaths(const nlohmann::json* multiscales) {
  std::vector<std::string> paths;
  if (!multiscales || !multiscales->is_array() || multiscales->empty()) return paths;
  const nlohmann::json* datasets = Member((*multiscales)[0], "datasets");
  if (!datasets || !datasets->is_array()) return paths;
  for (const nlohmann::json& ds : *datasets)
    if (const nlohmann::json* path = Member(ds, "path"); path && path->is_string())
      paths.push_back(path->get<std::string>());
  return paths;
}

StoredNode GroupNode(std::string metadata_key, const nlohmann::json* multiscales) {
  StoredNode node;
  node.metadata_key = std::move(metadata_key);
  node.level_paths = LevelPaths(multiscales);
  node.kind = node.level_paths.empty() ? StoredNode::Kind::kGroup : StoredNode::Kind::kOmeImage;
  return node;
}

}  // namespace

Result<std::optional<StoredNode>> ReadStoredNode(const Store& store) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<nlohmann::json> v3, ReadJson(store, "zarr.json"));
  if (v3) {
    const nlohmann::json* type = Member(*v3, "node_type");
    if (!type || *type != "group") return std::optional<StoredNode>(StoredNode{StoredNode::Kind::kArray, "zarr.json", {}});
    const nlohmann::json* attributes = Member(*v3, "attributes");
    const nlohmann::json* ome = attributes ? Member(*attributes, "ome") : nullptr;
    return std::optional<StoredNode>(GroupNode("zarr.json", ome ? Member(*ome, "multiscales") : nullptr));
  }
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> v2_array, store.Size(".zarray"));
  if (v2_array) return std::optional<StoredNode>(StoredNode{StoredNode::Kind::kArray, ".zarray", {}});
  TESSERA_ASSIGN_OR_RETURN(std::optional<uint64_t> v2_group, store.Size(".zgroup"));
  if (!v2_group) return std::optional<StoredNode>();
  TESSERA_ASSIGN_OR_RETURN(std::optional<nlohmann::json> zattrs, ReadJson(store, ".zattrs"));
  return std::optional<StoredNode>(GroupNode(".zgroup", zattrs ? Member(*zattrs, "multiscales") : nullptr));
}

std::string DescribeStoredNode(const StoredNode& node) {
  switch (node.kind) {
    case StoredNode::Kind::kArray:
      return "a Zarr array (" + node.metadata_key + ")";
    case StoredNode::Kind::kOmeImage: {
      std::string levels;
      for (const std::string& p : node.level_paths) levels += (levels.empty() ? "" : ", ") + p;
      return "an OME-Zarr image of " + std::to_string(node.level_paths.size()) + " level(s) (" + node.metadata_key +
             "; levels " + levels + ")";
    }
    case StoredNode::Kind::kGroup:
      return "a Zarr group (" + node.metadata_key + ")";
  }
  return "a Zarr node";
}

Status RemoveStoredNode(Store& store, const StoredNode& node, const std::string& where) {
  if (node.kind == StoredNode::Kind::kGroup)
    return FailedPrecondition(where + ": " + DescribeStoredNode(node) +
                              " holds arrays of its own; only an array or an OME-Zarr image is replaced whole");
  TESSERA_RETURN_IF_ERROR(store.Erase(node.metadata_key));
  for (const std::string& level : node.level_paths) {
    TESSERA_RETURN_IF_ERROR(store.Erase(level + "/zarr.json"));
    TESSERA_RETURN_IF_ERROR(store.Erase(level + "/.zarray"));
  }
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> keys, store.List(""));
  for (const std::string& key : keys) TESSERA_RETURN_IF_ERROR(store.Erase(key));
  return store.Flush();
}

}  // namespace tessera::zarr
