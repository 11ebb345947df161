// The header messages that describe a dataset: dataspace, datatype, fill value, filter pipeline
// and data layout, decoded into what the reader needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/hdf5/filters.h"
#include "tessera/hdf5/h5_datatype.h"
#include "tessera/hdf5/h5_datatype_numpy.h"
#include "tessera/hdf5/h5_object_header.h"

namespace tessera::hdf5 {

struct Dataspace {
  std::vector<uint64_t> dims;
  std::vector<uint64_t> max_dims;  // kUnlimited for unlimited dimensions; == dims when absent
  bool is_null = false;            // no elements at all (H5S_NULL)
};

// A dataset's (or attribute's) element type: the file's datatype and what it reads as.
struct Datatype {
  H5Type type;           // as the file describes it (a committed type resolved)
  NumpyElement element;  // its numpy form and the conversion to it (h5_datatype_numpy.h)
  // What the hyperslab engine reads: the element's DataType, or kUInt8 with one hidden trailing
  // dimension of element.item_bytes when the element is no tessera DataType (a compound, ...).
  DataType dtype = DataType::kUInt8;
  size_t size = 1;          // bytes per element on disk (a top-level array's whole element)
  bool big_endian = false;  // the scalar's byte order (for `tessera info`; the conversion is element.steps)
  bool vax_order = false;   // a VAX-order float (2-byte words reversed; big_endian is set too)
  std::string description;  // "int16 (big-endian)", for `tessera info`

  // One tessera DataType per element and no trailing dimensions: an attribute's value reads as numbers.
  bool simple() const { return element.dtype.has_value() && element.trailing_dims.empty(); }
};

enum class LayoutClass { kCompact, kContiguous, kChunked, kVirtual };
enum class ChunkIndexType {
  kBTreeV1 = 0,  // layout v1-v3
  kSingleChunk = 1,
  kImplicit = 2,
  kFixedArray = 3,
  kExtensibleArray = 4,
  kBTreeV2 = 5,
};
std::string ChunkIndexName(ChunkIndexType t);

struct Layout {
  int version = 0;
  LayoutClass cls = LayoutClass::kContiguous;
  uint64_t address = kUndefinedAddress;  // contiguous data, or the chunk index
  uint64_t size = 0;                     // contiguous data size
  Bytes compact_data;
  // Chunked:
  std::vector<uint64_t> chunk_dims;  // dataset rank entries (the element-size entry dropped)
  uint32_t chunk_element_size = 0;
  ChunkIndexType index_type = ChunkIndexType::kBTreeV1;
  bool dont_filter_partial_edge_chunks = false;
  bool single_chunk_filtered = false;
  uint64_t single_chunk_size = 0;
  uint32_t single_chunk_filter_mask = 0;
  // Fixed array: page bits. Extensible array: see the layout message spec.
  uint8_t fa_page_bits = 0;
  uint8_t ea_max_bits = 0, ea_index_elements = 0, ea_min_pointers = 0, ea_min_elements = 0, ea_page_bits = 0;
  uint32_t bt2_node_size = 0;
};

// Each parser names the message (file and byte range) in its errors.
Result<Dataspace> ParseDataspace(const RawFile& file, const HeaderMessage& m);
// Shared (committed) datatype messages are followed to the committed type.
Result<Datatype> ParseDatatype(const RawFile& file, const HeaderMessage& m);
// The fill value as one whole element (type.size bytes) in numpy's layout (converted as reads
// convert); zero when undefined. Prefers the new message.
Result<FillValue> ParseFillValue(const RawFile& file, const ObjectHeader& oh, const Datatype& type);
Result<FilterPipeline> ParseFilterPipeline(const RawFile& file, const HeaderMessage& m);
Result<Layout> ParseLayout(const RawFile& file, const HeaderMessage& m, size_t rank);

// Reverses the byte order of each `component`-byte value in data[0, n).
void SwapComponents(uint8_t* data, size_t n, size_t component);

}  // namespace tessera::hdf5
