// HDF5 variable-length data (datatype class 9): strings (type 1) and sequences of a fixed-size
// base type (type 0), as h5py writes them with h5py.string_dtype() and h5py.vlen_dtype().
//
// A dataset's raw data holds one reference per element (16 bytes with 8-byte offsets):
//
//   u32 LE  count                 characters (strings) or base elements (sequences)
//   u64 LE  collection address    of a global heap collection (h5_global_heap.h)
//   u32 LE  object index          in that collection
//
// whose object holds the element's data (count * base size bytes; the object may be longer, as
// the library pads it). An element of count 0 is empty, whatever its heap ID says.
//
// The fixed-size reader reads those references as opaque 16-byte elements ("|V16");
// VlenElements resolves them, chunk by chunk, through the file's shared global heap cache, so a
// read touches only the chunks and the heap collections its elements point into.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/hdf5/h5_datatype.h"
#include "tessera/hdf5/h5_datatype_numpy.h"
#include "tessera/hdf5/h5_global_heap.h"
#include "tessera/read/object_read.h"

namespace tessera::hdf5 {

inline constexpr size_t kVlenReferenceBytes = 4 + kGlobalHeapIdBytes;

// The numpy element the fixed-size reader gives a top-level variable-length type: its stored
// references, uninterpreted ("|V16"). kUnsupported for references of another size.
Result<NumpyElement> MapVariableLengthElement(const H5Type& type, const std::string& where);

// What an element of `type` (class 9) is as an object: str for strings, a numpy array of the
// base type for sequences. kUnsupported for bases without a plain numpy scalar type (compounds,
// arrays, nested variable-length types).
Result<ObjectType> VlenObjectType(const H5Type& type, const std::string& where);

// One stored reference.
struct VlenReference {
  uint32_t count = 0;
  GlobalHeapId id;
};
// Decodes the first kVlenReferenceBytes of `element` (kCorruptData naming `what` when shorter).
Result<VlenReference> DecodeVlenReference(ByteView element, std::string_view what);
// The element's data: the first count * base_bytes bytes of `object` (its heap object's data).
// kCorruptData naming `what` when the object is shorter.
Result<std::string> VlenElementData(const VlenReference& ref, ByteView object, size_t base_bytes, std::string_view what);

// The elements of a variable-length dataset, resolved from its raw references.
class VlenElements final : public ObjectChunkSource {
 public:
  // `raw`: the dataset read as references (shape and chunk shape with one trailing dimension of
  // kVlenReferenceBytes, ChunkSource::element_type()'s convention); `file`: the file it is in;
  // `type`: its datatype (class 9); `where` names it in errors ("f.h5: dataset /names").
  static Result<std::unique_ptr<VlenElements>> Make(std::shared_ptr<const ChunkSource> raw,
                                                    std::shared_ptr<const RawFile> file, const H5Type& type,
                                                    std::string where);

  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_shape_; }
  const ObjectType& object_type() const override { return type_; }
  const std::string& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t> coords, std::vector<std::string>* out) const override;
  int io_concurrency() const override { return raw_->io_concurrency(); }

 private:
  VlenElements() = default;
  // The data `ref` points at, converted to numpy's layout; `collection` (may be null) caches the
  // last collection looked up. Errors name `what`.
  Result<std::string> Resolve(const VlenReference& ref, const std::string& what,
                              std::shared_ptr<const GlobalHeapCollection>* collection = nullptr) const;
  std::shared_ptr<const ChunkSource> raw_;
  std::shared_ptr<GlobalHeap> heap_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> chunk_shape_;
  ObjectType type_;
  size_t base_bytes_ = 1;                 // one character, or one base element as stored
  std::vector<ConvertStep> base_steps_;   // sequences: the base element from the file's layout to numpy's
  std::string fill_;                      // an element never written: the fill value's, or empty
  std::string where_;
};

}  // namespace tessera::hdf5
