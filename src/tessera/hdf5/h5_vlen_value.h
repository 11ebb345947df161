// How one stored HDF5 value holding variable-length data becomes an object element (the
// encodings of object_read.h's ObjectType), the way h5py reads it:
//
//   vlen string              top level: str (tessera's string arrays, h5py's .asstr());
//                            inside anything else: bytes, as h5py gives them there
//   vlen sequence            a numpy array of its base: fixed-size bases in their numpy layout
//                            (a compound's structured dtype, an array type's trailing
//                            dimensions: shape (n, 3)); bases holding variable-length data as an
//                            object array of their values, or a structured array with object
//                            fields
//   compound / array holding variable-length members
//                            a record: numpy's structured (or subarray) dtype with object fields,
//                            laid out as HDF5 lays the type out in memory and h5py takes it:
//                            members sorted by offset, each vlen string 8 bytes (a pointer),
//                            each vlen sequence 16 (HDF5's hvl_t) instead of 16 stored bytes, the
//                            members after one moved by the size change, the record shrunk by the
//                            sum of them; fixed members converted as h5_datatype_numpy.h does
//
// A reference of count 0 (a null heap ID, a fill value never written) is an empty value: b'',
// an empty array. Only the heap objects of the values encoded are looked up.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/hdf5/h5_datatype.h"
#include "tessera/hdf5/h5_datatype_numpy.h"
#include "tessera/hdf5/h5_global_heap.h"
#include "tessera/read/object_read.h"

namespace tessera::hdf5 {

// Looks variable-length references up in a file's global heap, keeping the last collection
// found (the values of one chunk mostly point into one).
class HeapObjects {
 public:
  explicit HeapObjects(GlobalHeap& heap) : heap_(heap) {}
  // The count * base_bytes bytes of the heap object `stored` (a 16-byte reference) points at;
  // empty for a count of 0. Errors name `what`.
  Result<std::string> Data(ByteView stored, size_t base_bytes, const std::string& what, uint32_t* count);

 private:
  GlobalHeap& heap_;
  std::shared_ptr<const GlobalHeapCollection> collection_;
};

// The plan of one value's conversion, built once per dataset from its datatype.
class VlenValuePlan {
 public:
  // `type` must hold variable-length data (HoldsVariableLength). `top_level`: the dataset's
  // element (a vlen string reads as str there). kUnsupported for what has no numpy form
  // (references, time, references of another size than 16 bytes), naming `where`.
  static Result<std::unique_ptr<VlenValuePlan>> Make(const H5Type& type, bool top_level, const std::string& where);

  const ObjectType& object_type() const { return type_; }
  // Bytes of one stored value.
  uint32_t stored_bytes() const { return stored_bytes_; }
  // Appends the encoding of the value stored in `stored` (stored_bytes() bytes) to *out.
  Status Encode(ByteView stored, HeapObjects& heap, const std::string& what, std::string* out) const;

  ~VlenValuePlan();

 private:
  friend class VlenPlanBuilder;
  VlenValuePlan() = default;
  enum class Kind { kString, kSequence, kRecord };
  // A fixed-size part of a record: `size` stored bytes at `stored_offset` go to `offset` in the
  // record, converted there by the record's steps.
  struct Copy {
    uint32_t stored_offset = 0, offset = 0, size = 0;
  };
  // A variable-length member of a record: its reference at `stored_offset`, read by `plan`.
  struct Slot {
    uint32_t stored_offset = 0;
    const VlenValuePlan* plan = nullptr;
  };
  Kind kind_ = Kind::kString;
  ObjectType type_;
  uint32_t stored_bytes_ = 0;
  // kSequence: the base's stored bytes; its conversion (fixed base) or plan (a base holding
  // variable-length data, or one whose elements are objects).
  uint32_t base_bytes_ = 1;
  std::vector<ConvertStep> base_steps_;
  std::unique_ptr<VlenValuePlan> base_plan_;
  // kRecord:
  std::vector<Copy> copies_;
  std::vector<ConvertStep> steps_;
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<VlenValuePlan>> slot_plans_;  // owned; Slot::plan points into it
};

}  // namespace tessera::hdf5
