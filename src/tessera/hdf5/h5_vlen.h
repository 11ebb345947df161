// HDF5 variable-length data (datatype class 9): strings (type 1) and sequences (type 0), as h5py
// writes them with h5py.string_dtype() and h5py.vlen_dtype(), at the top of a dataset's datatype
// or inside compounds, arrays and other sequences (h5_vlen_value.h says what each reads as).
//
// Each variable-length value is stored as one reference (16 bytes with 8-byte offsets):
//
//   u32 LE  count                 characters (strings) or base elements (sequences)
//   u64 LE  collection address    of a global heap collection (h5_global_heap.h)
//   u32 LE  object index          in that collection
//
// whose object holds the value's data (count * base size bytes; the object may be longer, as
// the library pads it). A value of count 0 is empty, whatever its heap ID says.
//
// The fixed-size reader reads a dataset holding such values as opaque elements of the
// datatype's size ("|V16" for a plain string); VlenElements resolves them, chunk by chunk,
// through the file's shared global heap cache, so a read touches only the chunks and the heap
// collections its elements point into.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/hdf5/h5_datatype.h"
#include "tessera/hdf5/h5_datatype_numpy.h"
#include "tessera/hdf5/h5_global_heap.h"
#include "tessera/hdf5/h5_vlen_value.h"
#include "tessera/read/object_read.h"

namespace tessera::hdf5 {

inline constexpr size_t kVlenReferenceBytes = 4 + kGlobalHeapIdBytes;

// Whether `type` is variable-length or has a variable-length member, base or element anywhere.
bool HoldsVariableLength(const H5Type& type);

// The numpy element the fixed-size reader gives a type holding variable-length data: its stored
// bytes, uninterpreted ("|V<size>"). kUnsupported for what VlenObjectType refuses.
Result<NumpyElement> MapVariableLengthElement(const H5Type& type, const std::string& where);

// What an element of `type` (HoldsVariableLength) is as an object (h5_vlen_value.h).
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

// The elements of a dataset holding variable-length data, resolved from its stored bytes.
class VlenElements final : public ObjectChunkSource {
 public:
  // `raw`: the dataset read as stored bytes (shape and chunk shape with one trailing dimension of
  // the datatype's size, ChunkSource::element_type()'s convention); `file`: the file it is in;
  // `type`: its datatype (HoldsVariableLength); `where` names it in errors ("f.h5: dataset /names").
  static Result<std::unique_ptr<VlenElements>> Make(std::shared_ptr<const ChunkSource> raw,
                                                    std::shared_ptr<const RawFile> file, const H5Type& type,
                                                    std::string where);
  ~VlenElements() override;

  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_shape_; }
  const ObjectType& object_type() const override;
  const std::string& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t> coords, std::vector<std::string>* out) const override;
  int io_concurrency() const override { return raw_->io_concurrency(); }

 private:
  VlenElements() = default;
  std::shared_ptr<const ChunkSource> raw_;
  std::shared_ptr<GlobalHeap> heap_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> chunk_shape_;
  std::unique_ptr<VlenValuePlan> plan_;
  std::string fill_;  // an element never written: the fill value's, or a zero element's
  std::string where_;
};

}  // namespace tessera::hdf5
