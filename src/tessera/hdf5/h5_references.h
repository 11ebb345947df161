// HDF5 object references (datatype class 7, type 0: h5py.ref_dtype, H5T_STD_REF_OBJ), read as the
// path of the object each one points to: tessera has no reference objects, and a path is what a
// user does something with (h5py's f[ref].name; tessera.open(file, dataset=path)).
//
// A stored object reference is the 8-byte address of the object's header. The paths come from one
// walk of the file's groups (depth first, links in name order, the first path found for an object
// kept, as the HDF5 library's H5Iget_name finds one), made on the first read and kept. A null
// reference (address 0 or undefined), and one to an object no group links to (an anonymous
// dataset), read as "" (h5py's name is None for both).
//
// Region references (type 1) and HDF5 1.12's references (types 2-4: an object or region in this
// or another file, or an attribute, each encoded in the global heap) stay refused, naming which.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/hdf5/h5_datatype.h"
#include "tessera/hdf5/h5_datatype_numpy.h"
#include "tessera/read/object_read.h"

namespace tessera::hdf5 {

inline constexpr size_t kObjectReferenceBytes = 8;

// Whether `type` is a whole-element reference (class 7) of any reference type.
bool IsReference(const H5Type& type);

// The element the fixed-size reader gives an object reference: its stored 8 bytes ("|V8"), which
// ObjectReferencePaths resolves. kUnsupported, naming the reference type, for other references.
Result<NumpyElement> MapReferenceElement(const H5Type& type, const std::string& where);

// The paths of the objects reachable from the root group, by object header address. An object
// whose header (or a group whose links) cannot be read keeps the path of its link, and the walk
// goes on past it; `hidden` says why what lies below it is unknown (ok when nothing is). Only
// the root group's own failure, or a walk over the bounds, fails.
struct ObjectPaths {
  std::map<uint64_t, std::string> by_address;
  Status hidden;
};
Result<ObjectPaths> ObjectPathsByAddress(const RawFile& file, uint64_t root_object_header);

// The elements of an object-reference dataset as their objects' paths (ObjectKind::kString).
class ObjectReferencePaths final : public ObjectChunkSource {
 public:
  // `raw`: the dataset read as stored bytes (one trailing dimension of 8); `root`: the root
  // group's object header; `where` names the dataset in errors.
  static Result<std::unique_ptr<ObjectReferencePaths>> Make(std::shared_ptr<const ChunkSource> raw,
                                                            std::shared_ptr<const RawFile> file, uint64_t root,
                                                            std::string where);

  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_shape_; }
  const ObjectType& object_type() const override { return type_; }
  const std::string& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t> coords, std::vector<std::string>* out) const override;
  int io_concurrency() const override { return raw_->io_concurrency(); }

  // The path of the object at `address` ("" for a null reference or an unlinked object). An
  // address the walk did not meet, in a file part of whose groups could not be walked, is an
  // error saying why (the object may lie there).
  Result<std::string> PathOf(uint64_t address) const;

 private:
  ObjectReferencePaths() = default;
  std::shared_ptr<const ChunkSource> raw_;
  std::shared_ptr<const RawFile> file_;
  uint64_t root_ = kUndefinedAddress;
  std::vector<int64_t> shape_;
  std::vector<int64_t> chunk_shape_;
  ObjectType type_;
  std::string fill_;
  std::string where_;
  // Built on the first read (the walk reads every group's header), then shared by all reads.
  mutable std::once_flag paths_once_;
  mutable Status paths_status_;
  mutable ObjectPaths paths_;
};

}  // namespace tessera::hdf5
