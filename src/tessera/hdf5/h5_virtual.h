// Virtual datasets (layout class 3): the dataset's elements come from other datasets (in the same
// file or in others), each mapping a selection of a source dataset onto a selection of the virtual
// one; elements no mapping covers hold the fill value.
//
// The layout message (version 4) holds the global heap ID of the mapping list:
//   version (u8) = 4 | layout class (u8) = 3 | collection address (O) | object index (u32)
// The heap object (all little-endian; L = size of lengths):
//   encoding version (u8) = 0 or 1 | entry count (L) | entries | lookup3 checksum (u32) of all before
//   entry, version 0: source file name (NUL-terminated; "." = this file) | source dataset name
//                     (NUL-terminated) | source selection | virtual selection
//   entry, version 1: flags (u8) | the same, where flag 0x04 (the source is this file) omits the
//                     file name
// Selections are encoded as h5_selection_encoding.h describes.
//
// Element k of the virtual selection (in HDF5's iteration order: C order over the selected
// positions of a hyperslab, the stored order of a point list) takes element k of the source
// selection. Two paths read a mapping:
//   - per dimension, when both selections are regular hyperslabs of the same shape once unit
//     dimensions are dropped (what h5py's VirtualLayout writes: a source, or a strided/blocked
//     slice of it, onto a slice of the virtual dataset): whole strided boxes of the source are read;
//   - by element order otherwise (irregular hyperslabs, point lists, selections of one element
//     count but different shapes): the virtual runs inside the box are paired with source runs
//     through OrderedSelection and copied chunk by chunk, each source chunk decoded once per batch.
// Unlimited selections are clipped to the source's current extent (whole blocks), and the virtual
// side sized to match; they must be regular and of one shape (as the HDF5 library requires).
// A source of another integer or float type is converted as HDF5 converts (h5_numeric_conversion.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/hdf5/h5_global_heap.h"
#include "tessera/hdf5/h5_linked_files.h"
#include "tessera/hdf5/h5_object_header.h"
#include "tessera/hdf5/h5_selection_encoding.h"
#include "tessera/hdf5/h5_selection_order.h"

namespace tessera::hdf5 {

class Hdf5Dataset;
class Hdf5File;

struct VirtualMapping {
  std::string source_file;  // "." is the virtual dataset's own file ("%%" already read as "%")
  std::string source_dataset;
  // printf-style names: source_file / source_dataset are patterns as stored, where "%b" is the block
  // number along the one unlimited dimension of the virtual selection (a source per block) and "%%"
  // a "%". VirtualStorage::Open expands such a mapping into one per existing source.
  bool printf_names = false;
  DecodedSelection source;
  DecodedSelection virtual_selection;
};

// True when the layout message is a version 3+ message of class 3.
bool IsVirtualLayout(const HeaderMessage& m);
// The global heap ID of the mapping list of a virtual layout message.
Result<GlobalHeapId> ParseVirtualLayout(const RawFile& file, const HeaderMessage& m);
// Decodes the mapping list (pure). kCorruptData naming `what` for malformed bytes or a checksum
// mismatch, kUnsupported for selections or flags tessera does not read.
Result<std::vector<VirtualMapping>> DecodeVirtualMappings(ByteView block, const std::string& what);

class VirtualStorage {
 public:
  // `what`: "dataset /v". Resolves every source file through `policy` now (refusals surface when
  // the dataset is opened); source files are opened on first read.
  static Result<std::shared_ptr<VirtualStorage>> Open(std::shared_ptr<RawFile> file, GlobalHeapId id,
                                                      const std::vector<uint64_t>& dims, const std::vector<uint64_t>& max_dims,
                                                      DataType dtype, size_t item_bytes,
                                                      const LinkedFilePolicy& policy, std::string what);
  ~VirtualStorage();

  // Fills the box [origin, origin + extent) of the virtual dataset, C order, item_bytes per
  // element, from every mapping that intersects it; elements no mapping covers are left as they
  // are (the caller fills them with the fill value first). Thread-safe.
  Status ReadBox(std::span<const uint64_t> origin, std::span<const uint64_t> extent, uint8_t* out) const;

  const std::vector<VirtualMapping>& mappings() const { return mappings_; }
  // The dataset's extent: the stored one, except that with unlimited mappings each unlimited
  // dimension reaches as far as the mappings do, clipped to their sources' current extents (as
  // the HDF5 library shows it by default).
  const std::vector<uint64_t>& dims() const { return dims_; }

 private:
  struct Source;
  Result<std::shared_ptr<const Source>> OpenSource(size_t mapping) const;
  Status ReadMapping(const Source& source, size_t mapping, std::span<const uint64_t> origin,
                     std::span<const uint64_t> extent, uint8_t* out) const;
  Status ReadByElementOrder(const Source& source, std::span<const uint64_t> origin, std::span<const uint64_t> extent,
                            uint8_t* out) const;

  std::shared_ptr<RawFile> file_;
  std::string what_;
  std::vector<uint64_t> dims_;
  DataType dtype_ = DataType::kUInt8;
  size_t item_bytes_ = 0;
  LinkedFilePolicy policy_;
  std::vector<VirtualMapping> mappings_;
  std::vector<std::string> resolved_;  // per mapping: the source file's real path or store key ("" = this file)
  // Per mapping: the virtual selection in element order, for mappings that are not regular (null
  // for regular ones); its bounds skip mappings that miss a read.
  std::vector<std::shared_ptr<const OrderedSelection>> virtual_orders_;
  mutable std::mutex mu_;
  mutable std::vector<std::shared_ptr<const Source>> sources_;  // per mapping, on first read
  // Source datasets by "resolved file\ndataset", shared by the mappings naming the same one (null:
  // missing). Many mappings of one source dataset open it once.
  mutable std::map<std::string, std::shared_ptr<Hdf5Dataset>> datasets_;
};

}  // namespace tessera::hdf5
