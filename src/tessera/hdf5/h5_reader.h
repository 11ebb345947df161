// The HDF5 reader: opens a file, finds datasets by path, and presents each dataset to the generic
// hyperslab engine as a ChunkSource (little-endian, C order).
//
//   Chunked datasets read on their own chunk grid (chunk index loaded lazily, once).
//   Contiguous and compact datasets read on a virtual grid of whole rows along dimension 0
//   (~1 MiB per virtual chunk), so a read touches only the byte ranges it needs. So do datasets
//   whose raw data lies in external files (h5_external.h) and virtual datasets (h5_virtual.h),
//   each row block filled from the source datasets their mappings name; the files either pulls in
//   are limited by the file's LinkedFilePolicy (h5_linked_files.h).
//
// Supported: superblock v0-v3 (8-byte offsets/lengths), object header v1/v2, symbol-table,
// compact and dense groups, the fixed-size datatypes h5py reads (h5_datatype_numpy.h: numbers of
// either byte order and any bit padding, enums, compounds, fixed strings, opaque, arrays,
// complex; committed types too), deflate, shuffle and fletcher32, and every chunk index (see
// h5_chunk_index.h).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/hdf5/h5_chunk_index.h"
#include "tessera/hdf5/h5_dataset_messages.h"
#include "tessera/hdf5/h5_linked_files.h"
#include "tessera/hdf5/h5_superblock.h"
#include "tessera/read/selection_read.h"
#include "tessera/store/location.h"

namespace tessera::hdf5 {

// True when `path` is a regular file with the HDF5 signature at 0, 512, 1024, ...
bool LooksLikeHdf5(const std::string& path);
// The same for an opened file (of a store, say).
bool LooksLikeHdf5(const RawFile& file);

class Hdf5Dataset;
class ExternalStorage;
class VirtualStorage;

// An object met walking a file's groups (Hdf5File::WalkDatasets): a dataset (error ok), or an
// object whose header, or a group whose links, cannot be read (error says why).
struct WalkedObject {
  std::string path;  // absolute: "/grp/data"
  Status error;
};

class Hdf5File {
 public:
  static Result<std::shared_ptr<Hdf5File>> Open(const std::string& path);
  static Result<std::shared_ptr<Hdf5File>> Open(std::shared_ptr<RawFile> file);
  // The file a location names: a local path, or an object of a store (S3, ...) read through it.
  static Result<std::shared_ptr<Hdf5File>> Open(const Location& location);

  const std::string& path() const { return file_->path(); }
  const Superblock& superblock() const { return superblock_; }
  // The root group's attributes, as ReadAttributes gives them.
  Result<nlohmann::json> RootAttributes() const;
  // The attributes of the group or dataset at `path` ("" or "/": the root group), as
  // ReadAttributes gives them. kNotFound when nothing is there.
  Result<nlohmann::json> Attributes(const std::string& path) const;

  // Every dataset reachable from the root through hard links, as absolute paths ("/grp/data"),
  // sorted; each object once (the first path found). Fails on the first object WalkDatasets
  // could not read.
  Result<std::vector<std::string>> ListDatasets() const;
  // The same walk, going on past what cannot be read: every dataset, and every object whose
  // header or group whose links cannot be read (corrupt, a message flagged "fail if unknown",
  // groups nested too deep) with its error, in walk order. Only the root group's own header or
  // links, or more than a million objects, fail the whole walk.
  Result<std::vector<WalkedObject>> WalkDatasets() const;
  // Opens the dataset at `path` ("/a/b" or "a/b"). kNotFound when absent, kInvalidArgument when
  // the path names a group.
  Result<std::unique_ptr<Hdf5Dataset>> OpenDataset(const std::string& path) const;

  // Which other files the datasets opened from now on may read (virtual dataset sources, external
  // storage); by default only files in this file's own directory tree (h5_linked_files.h).
  void set_linked_file_policy(LinkedFilePolicy policy) { linked_files_ = std::move(policy); }

 private:
  Hdf5File(std::shared_ptr<RawFile> file, Superblock sb) : file_(std::move(file)), superblock_(sb) {}
  std::shared_ptr<RawFile> file_;
  Superblock superblock_;
  LinkedFilePolicy linked_files_;
};

class Hdf5Dataset final : public ChunkSource {
 public:
  const std::string& name() const { return name_; }
  // The file the dataset is in (variable-length data resolves through its global heap).
  const std::shared_ptr<RawFile>& raw_file() const { return file_; }
  const Datatype& datatype() const { return datatype_; }
  const Layout& layout() const { return layout_; }
  const FilterPipeline& filters() const { return filters_; }
  const Dataspace& dataspace() const { return dataspace_; }
  // "chunked (extensible array)", "contiguous", "compact"
  std::string LayoutText() const;
  // Details for `tessera info` (dataset, layout, chunk index, filters, byte order, max shape,
  // attributes).
  nlohmann::json Describe() const;

  // ChunkSource
  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_shape_; }
  DataType dtype() const override { return datatype_.dtype; }
  const FillValue& fill_value() const override { return fill_; }
  std::shared_ptr<const ElementType> element_type() const override { return element_type_; }
  Result<bool> ReadChunk(std::span<const int64_t> coords, Bytes* out) const override;
  int io_concurrency() const override { return file_->io_concurrency(); }

 private:
  friend class Hdf5File;
  Hdf5Dataset() = default;
  static Result<std::unique_ptr<Hdf5Dataset>> Open(std::shared_ptr<RawFile> file, const ObjectHeader& oh,
                                                   const std::string& name, const LinkedFilePolicy& linked_files);
  Result<bool> ReadStoredChunk(std::span<const int64_t> coords, Bytes* out) const;
  Result<bool> ReadRows(std::span<const int64_t> coords, Bytes* out) const;
  // The element fill repeated over one whole read chunk.
  void FillChunk(Bytes* out) const;
  Status EnsureIndex() const;
  std::string What() const;  // "dataset /a/b"
  nlohmann::json attributes_;

  std::shared_ptr<RawFile> file_;
  std::string name_;
  Dataspace dataspace_;
  Datatype datatype_;
  Layout layout_;
  FilterPipeline filters_;
  FillValue fill_;                 // the engine's: one ItemSize(dtype()) value
  FillValue element_fill_;         // one whole HDF5 element (datatype_.size bytes), numpy's layout
  // Chunks not stored are filled here with element_fill_ (rather than by the engine with fill_),
  // which one engine value cannot express: elements of several values (trailing dimensions, bytes).
  bool fills_absent_chunks_ = false;
  std::shared_ptr<const ElementType> element_type_;  // elements that are no DataType; else null
  // The dataspace's shape, then a top-level array type's dimensions, then (element_type_) the
  // element's bytes: what the engine sees.
  std::vector<int64_t> shape_;
  std::vector<int64_t> chunk_shape_;
  uint64_t chunk_bytes_ = 0;  // one whole read chunk
  H5ChunkGrid chunk_grid_;    // over the current extent (contiguous/compact: virtual, of whole rows)
  uint64_t row_bytes_ = 0;    // contiguous/compact: bytes of one index along dimension 0
  std::shared_ptr<const ExternalStorage> external_;  // contiguous data in other files
  std::shared_ptr<const VirtualStorage> virtual_;    // a virtual dataset's mappings

  mutable std::mutex index_mu_;
  mutable bool index_loaded_ = false;
  mutable Status index_status_;
  mutable ChunkMap index_;
};

}  // namespace tessera::hdf5
