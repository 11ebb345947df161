#include "tessera/hdf5/h5_references.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "tessera/hdf5/h5_group.h"
#include "tessera/hdf5/h5_object_header.h"

namespace tessera::hdf5 {
namespace {

// Class bits 0..3 of a reference datatype.
constexpr uint8_t kObjectReference = 0;
constexpr uint8_t kRegionReference = 1;

std::string ReferenceTypeName(uint8_t t) {
  switch (t) {
    case kObjectReference: return "object references";
    case kRegionReference: return "dataset region references (h5py.regionref_dtype)";
    case 2: return "HDF5 1.12 object references (H5R_OBJECT2)";
    case 3: return "HDF5 1.12 dataset region references (H5R_DATASET_REGION2)";
    case 4: return "HDF5 1.12 attribute references (H5R_ATTR)";
    default: return "references of type " + std::to_string(t);
  }
}

// Below the root, an object whose header or links cannot be read (one flagged "fail if unknown",
// a damaged one) ends its branch: its own path is already kept, and the first such failure is
// recorded in `paths->hidden` (as Hdf5File::WalkDatasets goes on past it).
Status Walk(const RawFile& file, uint64_t addr, const std::string& path, int depth, ObjectPaths* paths) {
  auto end_branch = [&](const Status& why) {
    if (depth == 0) return why;
    if (paths->hidden.ok()) paths->hidden = why;
    return Status::Ok();
  };
  Result<ObjectHeader> oh = ReadObjectHeader(file, addr);
  if (!oh.ok()) return end_branch(oh.status());
  if (!IsGroup(*oh)) return Status::Ok();
  if (depth > kMaxGroupDepth)
    return CorruptData(file.path() + ": groups nested deeper than " + std::to_string(kMaxGroupDepth) + " at " + path);
  Result<std::vector<GroupLink>> links = ReadGroupLinks(file, *oh, path);
  if (!links.ok()) return end_branch(links.status());
  std::sort(links->begin(), links->end(), [](const GroupLink& a, const GroupLink& b) { return a.name < b.name; });
  for (const GroupLink& link : *links) {
    if (!link.hard || !paths->by_address.emplace(link.object, JoinGroupPath(path, link.name)).second) continue;
    if (paths->by_address.size() > kMaxGroupObjects) return CorruptData(file.path() + ": more than a million objects");
    TESSERA_RETURN_IF_ERROR(Walk(file, link.object, JoinGroupPath(path, link.name), depth + 1, paths));
  }
  return Status::Ok();
}

}  // namespace

bool IsReference(const H5Type& type) { return type.cls == H5TypeClass::kReference; }

Result<NumpyElement> MapReferenceElement(const H5Type& type, const std::string& where) {
  if (type.reference_type != kObjectReference)
    return Unsupported(where + ": " + ReferenceTypeName(type.reference_type) +
                       " (tessera reads object references, as the paths of the objects)");
  if (type.size != kObjectReferenceBytes)
    return Unsupported(where + ": " + std::to_string(type.size) + "-byte object references (tessera reads 8-byte ones)");
  NumpyElement e;
  e.item_bytes = type.size;
  e.numpy = "|V" + std::to_string(type.size);
  e.description = "object reference (read as the object's path)";
  return e;
}

Result<ObjectPaths> ObjectPathsByAddress(const RawFile& file, uint64_t root_object_header) {
  ObjectPaths paths;
  paths.by_address.emplace(root_object_header, "/");
  TESSERA_RETURN_IF_ERROR(Walk(file, root_object_header, "/", 0, &paths));
  return paths;
}

Result<std::unique_ptr<ObjectReferencePaths>> ObjectReferencePaths::Make(std::shared_ptr<const ChunkSource> raw,
                                                                         std::shared_ptr<const RawFile> file,
                                                                         uint64_t root, std::string where) {
  if (raw->shape().empty() || raw->shape().back() != static_cast<int64_t>(kObjectReferenceBytes) ||
      raw->read_chunk_shape().back() != static_cast<int64_t>(kObjectReferenceBytes))
    return Unsupported(where + ": object references are not read as 8-byte elements here");
  std::unique_ptr<ObjectReferencePaths> p(new ObjectReferencePaths());
  p->shape_.assign(raw->shape().begin(), raw->shape().end() - 1);
  p->chunk_shape_.assign(raw->read_chunk_shape().begin(), raw->read_chunk_shape().end() - 1);
  p->type_.kind = ObjectKind::kString;
  p->type_.name = "object reference (path)";
  p->raw_ = std::move(raw);
  p->file_ = std::move(file);
  p->root_ = root;
  p->where_ = std::move(where);
  return p;  // fill_: chunks never written hold null references, which read as ""
}

Result<std::string> ObjectReferencePaths::PathOf(uint64_t address) const {
  if (address == 0 || address == kUndefinedAddress) return std::string();
  std::call_once(paths_once_, [&] {
    Result<ObjectPaths> paths = ObjectPathsByAddress(*file_, root_);
    if (paths.ok()) {
      paths_ = std::move(*paths);
    } else {
      paths_status_ = paths.status();
    }
  });
  if (!paths_status_.ok())
    return Status(paths_status_.kind(), where_ + ": finding the objects references point to: " + paths_status_.message());
  auto it = paths_.by_address.find(address);
  if (it != paths_.by_address.end()) return it->second;
  if (!paths_.hidden.ok())
    return Status(paths_.hidden.kind(), where_ + ": no path found for the object at " + Hex(address) +
                                            ", and part of the file's groups could not be walked: " +
                                            paths_.hidden.message());
  return std::string();
}

Result<bool> ObjectReferencePaths::ReadChunk(std::span<const int64_t> coords, std::vector<std::string>* out) const {
  std::vector<int64_t> raw_coords(coords.begin(), coords.end());
  raw_coords.push_back(0);  // the stored bytes: one chunk along the hidden dimension
  Bytes raw;
  TESSERA_ASSIGN_OR_RETURN(bool stored, raw_->ReadChunk(raw_coords, &raw));
  if (!stored) return false;
  size_t n = 1;
  for (int64_t e : chunk_shape_) n *= static_cast<size_t>(e);
  if (raw.size() < n * kObjectReferenceBytes)
    return CorruptData(where_ + ": a chunk gave " + std::to_string(raw.size()) + " bytes for " + std::to_string(n) +
                       " object references");
  out->assign(n, std::string());
  for (size_t i = 0; i < n; ++i) {
    uint64_t address = 0;
    for (size_t b = 0; b < kObjectReferenceBytes; ++b)
      address |= uint64_t{raw[i * kObjectReferenceBytes + b]} << (8 * b);
    TESSERA_ASSIGN_OR_RETURN((*out)[i], PathOf(address));
  }
  return true;
}

}  // namespace tessera::hdf5
