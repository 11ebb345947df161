// Reading a selection of an array whose elements have no fixed size (variable-length strings,
// byte strings, sequences): the object counterpart of the hyperslab engine (selection_read.h).
//
// The selection is projected onto the chunk grid per dimension exactly as for fixed-size arrays;
// only the chunks it touches are read, each once, and their selected elements are copied into
// the output, one std::string per element, C order over the selection's output shape. A chunk
// that is not stored reads as the fill value.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/status.h"
#include "tessera/read/selection_read.h"

namespace tessera {

// What one element of an object array is, and so what a reader makes of its bytes.
enum class ObjectKind {
  kString,    // UTF-8 (or ASCII) text: Python str
  kBytes,     // arbitrary bytes: Python bytes
  kSequence,  // a run of values (HDF5 vlen sequence): a numpy array
  kRecord,    // a fixed-size record with object fields (an HDF5 compound or array holding
              // variable-length members): a numpy structured (or subarray) element
};

// An element's bytes, by kind (object_value_encoding.h reads and writes the nested forms):
//   kString, kBytes   the text or bytes themselves
//   kSequence         sequence_dtype set: the values in numpy's layout (little-endian), back to
//                     back; sequence_of set: u64 LE count, then per value u64 LE length + the
//                     value's bytes (as sequence_of.front() says)
//   kRecord           record_bytes bytes of the record in numpy's layout with every object slot
//                     zero, then per slot, in slot order, u64 LE length + the slot's value
// An empty kSequence is a sequence of no values, whichever form.
struct ObjectType {
  ObjectKind kind = ObjectKind::kString;
  // kSequence of fixed-size values: numpy's dtype of one value, as a name ("<i4") or, for
  // structured and subarray values, its JSON form (core/element_type.h's `numpy`) as text. An
  // element's bytes are a whole number of values, little-endian. Empty otherwise.
  std::string sequence_dtype;
  // How `tessera info` shows the type: "string (vlen-utf8)", "vlen sequence of int32".
  std::string name;
  // kSequence of values that are objects themselves (variable-length data, records with object
  // fields): one ObjectType, the values'. Empty otherwise.
  std::vector<ObjectType> sequence_of;
  // kRecord: numpy's dtype of the record as JSON text (object fields "|O"), its itemsize, and
  // where its object fields are: slot_offsets[i] bytes into the record (a PyObject* there, as
  // numpy keeps object fields), whose value is of type slot_types[slot_type[i]].
  std::string record_dtype;
  uint32_t record_bytes = 0;
  std::vector<uint32_t> slot_offsets;
  std::vector<uint32_t> slot_type;
  std::vector<ObjectType> slot_types;
};

// Where decoded chunks of an object array come from. Implementations must be thread-safe.
class ObjectChunkSource {
 public:
  virtual ~ObjectChunkSource() = default;
  virtual const std::vector<int64_t>& shape() const = 0;
  virtual const std::vector<int64_t>& read_chunk_shape() const = 0;
  virtual const ObjectType& object_type() const = 0;
  // What an element of a chunk that is not stored reads as.
  virtual const std::string& fill_value() const = 0;
  // Decodes chunk `coords` into *out: one element per position of the whole chunk (edge chunks
  // included, as stored), C order. Returns false when the chunk is not stored.
  virtual Result<bool> ReadChunk(std::span<const int64_t> coords, std::vector<std::string>* out) const = 0;
  // How many chunk reads to keep in flight (0: as many as there are cores).
  virtual int io_concurrency() const { return 0; }
};

// Reads `selection` (checked first, as CheckSelection does) into *out: selection.NumElements()
// elements, C order over selection.OutputShape().
Status ReadObjectHyperslab(const ObjectChunkSource& source, const Hyperslab& selection, std::vector<std::string>* out,
                           const ReadOptions& options = {});

// A fixed-size ChunkSource standing in for an object array where only fixed-size reads exist (the
// raw-bytes read, convert, copies): its shape and chunks are the object array's, its dtype uint8,
// and every chunk read is refused (kUnsupported naming `where` and the element type).
std::unique_ptr<ChunkSource> ObjectArrayPlaceholder(std::shared_ptr<const ObjectChunkSource> objects, std::string where);

}  // namespace tessera
