// Reading any array tessera understands through one type.
//
//   auto a = OpenArray("volume.zarr").value();            // Zarr v3, precomputed or an HDF5 dataset
//   auto sel = a->Select("5, 10:-10:3, ::-1").value();     // numpy basic indexing
//   std::vector<uint8_t> out(sel.NumElements() * ItemSize(a->dtype()));
//   Status st = a->Read(sel, out.data());
//
// Thread safety: an Array is immutable once open; any number of threads may call Read (and every
// accessor) on one Array at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/driver/format_driver.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"
#include "tessera/read/selection_read.h"

namespace tessera {
// OpenOptions (which level, scale or dataset to open): driver/format_driver.h.

class Array {
 public:
  Array(Format format, Location location, driver::OpenedArray opened);

  Format format() const { return format_; }
  const Location& location() const { return location_; }
  const std::vector<int64_t>& shape() const { return source_->shape(); }
  DataType dtype() const { return source_->dtype(); }
  int rank() const { return static_cast<int>(source_->shape().size()); }
  // The grid reads are done on: the chunk shape (the inner chunk shape for sharded Zarr).
  const std::vector<int64_t>& chunk_shape() const { return source_->read_chunk_shape(); }
  // Zarr sharded arrays: the shard shape in elements; empty otherwise.
  const std::vector<int64_t>& shard_shape() const { return shard_shape_; }
  const FillValue& fill_value() const { return source_->fill_value(); }
  // The format's own metadata document: zarr.json, the precomputed info, or a description of the
  // HDF5 dataset (datatype, layout, filters, attributes).
  const nlohmann::json& metadata() const { return metadata_; }
  // A short format-specific summary (codecs, sharding, scale) for `tessera info`.
  const nlohmann::json& description() const { return description_; }
  // The levels of the multiscale image this array is one of (an OME-Zarr image's datasets, a
  // precomputed volume's scales; 1 for anything else) and which one it is (OpenOptions::level).
  int level_count() const { return level_count_; }
  int level() const { return level_; }

  // Parses numpy basic indexing against this array's shape (see ParseSliceExpression).
  Result<Hyperslab> Select(std::string_view expression) const;
  // Reads `selection` into `out`: selection.NumElements() elements, C order over
  // selection.OutputShape(), little-endian. The selection must have one entry per dimension,
  // each inside the array (CheckSelection: kOutOfRange otherwise).
  Status Read(const Hyperslab& selection, void* out, const ReadOptions& options = {}) const;

  const ChunkSource& source() const { return *source_; }

 private:
  Format format_;
  Location location_;
  std::unique_ptr<ChunkSource> source_;
  std::vector<int64_t> shard_shape_;
  nlohmann::json metadata_;
  nlohmann::json description_;
  int level_ = 0;
  int level_count_ = 1;
};

Result<std::unique_ptr<Array>> OpenArray(const std::string& location, const OpenOptions& options = {});

}  // namespace tessera
