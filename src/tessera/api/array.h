// Reading and changing any array tessera understands through one type.
//
//   auto a = OpenArray("volume.zarr").value();            // Zarr v3, precomputed or an HDF5 dataset
//   auto sel = a->Select("5, 10:-10:3, ::-1").value();     // numpy basic indexing
//   std::vector<uint8_t> out(sel.NumElements() * a->item_size());
//   Status st = a->Read(sel, out.data());
//
//   OpenOptions rw;  rw.mode = Mode::kReadWrite;          // r+: write regions, resize
//   auto b = OpenArray("volume.zarr", rw).value();
//   st = b->Write(b->Select("0:10, ::2").value(), values); // C order over the selection's shape
//   Transaction t = b->BeginTransaction().value();         // many writes, each object rewritten once
//   t.Write(sel1, v1);  t.Write(sel2, v2);  st = t.Commit();
//
// Modes (core/mode.h): "r" (the default) reads only; "r+" also writes regions (Write, a
// Transaction) and resizes; the create modes (a, w, w-) belong to CreateStream, not OpenArray.
//
// Thread safety: any number of threads may call Read, Write, BeginTransaction and a
// Transaction's Commit on one Array at once. Two writes that touch one stored object (a shard)
// never lose each other's update: each object is rewritten conditionally on what was read, and
// a conflict reads it again and re-applies (write/region_write.h). Where two concurrent writes
// overlap, one of them wins per object. A read sees every write that finished before it began;
// reads and writes of one Array take turns (never a read while a write runs: a shard replaced
// between a read's index and chunk fetches would be torn). Writers in other processes are not
// held off: a Zarr read that meets a shard replaced after it read the index reads the index again
// and the chunk once more; a read racing them may still fail (kCorruptData) and can be retried.
// Resize waits for running reads and writes and holds later ones until it is done; the
// accessors (shape(), metadata(), ...) must not be called while Resize runs on another thread.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/driver/format_driver.h"
#include "tessera/read/selection_read.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"
#include "tessera/api/access_gate.h"
#include "tessera/api/transaction.h"
#include "tessera/write/region_write.h"

namespace tessera {
// OpenOptions (mode, and which level, scale or dataset to open): driver/format_driver.h.

class Array {
 public:
  // `target`: the array as a region-write target (mode r+); null for a read-only array.
  Array(Format format, Location location, OpenOptions options, driver::OpenedArray opened,
        std::unique_ptr<RegionTarget> target = nullptr);
  ~Array();

  Format format() const { return format_; }
  const Location& location() const { return location_; }
  Mode mode() const { return options_.mode; }
  bool writable() const { return target_ != nullptr; }
  const std::vector<int64_t>& shape() const { return shape_; }
  // The element type the engine reads: for an array with an element_type(), kUInt8 (its bytes).
  DataType dtype() const { return dtype_; }
  // Elements that are no DataType (HDF5 compounds, fixed strings, ...): what numpy makes of one
  // (core/element_type.h); null otherwise. Read gives element_type()->item_bytes per element,
  // numpy's layout; shape() and chunk_shape() are the elements', without their bytes.
  const ElementType* element_type() const { return element_type_.get(); }
  // Bytes of one element as Read writes it.
  size_t item_size() const { return element_type_ ? element_type_->item_bytes : ItemSize(dtype_); }
  int rank() const { return static_cast<int>(shape_.size()); }
  // The grid reads are done on: the chunk shape (the inner chunk shape for sharded Zarr).
  const std::vector<int64_t>& chunk_shape() const { return chunk_shape_; }
  // Zarr sharded arrays: the shard shape in elements; empty otherwise.
  const std::vector<int64_t>& shard_shape() const { return shard_shape_; }
  // One element (item_size() bytes).
  const FillValue& fill_value() const { return fill_value_; }
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
  // each inside the array (CheckSelection: kOutOfRange otherwise). Sees every write (and
  // committed transaction) through this Array that finished before the read began.
  Status Read(const Hyperslab& selection, void* out, const ReadOptions& options = {}) const;

  // Arrays of variable-length elements (Zarr `string`, v2 object arrays with vlen-utf8 /
  // vlen-bytes; HDF5 variable-length strings and sequences): what an element is. Null for arrays
  // of fixed-size elements. For these arrays dtype() is meaningless and Read refuses
  // (kUnsupported): ReadObjects reads them.
  const ObjectType* object_type() const { return objects_ ? &objects_->object_type() : nullptr; }
  // What an element that is not stored reads as (object_type() must not be null).
  const std::string& object_fill_value() const { return objects_->fill_value(); }
  // Reads `selection` of an array of variable-length elements into *out: selection.NumElements()
  // elements, C order over selection.OutputShape(), each the element's bytes (UTF-8 text for
  // kString). kFailedPrecondition for an array of fixed-size elements.
  Status ReadObjects(const Hyperslab& selection, std::vector<std::string>* out, const ReadOptions& options = {}) const;

  // Writes `values` (over selection.OutputShape(): strides may be 0 or negative) into
  // `selection`. kFailedPrecondition on an array opened read-only; kOutOfRange, naming the
  // selection and the shape, for a selection outside the array (nothing is written then).
  Status Write(const Hyperslab& selection, const SourceView& values, const WriteOptions& options = {});
  // Likewise, with values C order over selection.OutputShape() (selection.NumElements() of them).
  Status Write(const Hyperslab& selection, const void* c_order_values, const WriteOptions& options = {});
  // Changes the shape (the rank stays): elements outside the new shape are cleared, so growing
  // again shows the fill value. Afterwards shape(), metadata() and reads show the new shape.
  Status Resize(std::vector<int64_t> shape);
  // A batch of writes, buffered until Commit (api/transaction.h). kFailedPrecondition on an array
  // opened read-only. The Array must outlive the transaction.
  Result<Transaction> BeginTransaction();

  // The chunks reads come from now (a write through this Array replaces it on the next read).
  std::shared_ptr<const ChunkSource> source() const;

 private:
  friend class Transaction;
  // kFailedPrecondition unless the array was opened r+ ("writing" names the operation).
  Status RequireWritable(std::string_view writing) const;
  // Every write of a Write or a Transaction's Commit goes through here: one engine call.
  Status WriteAll(std::span<const PendingWrite> writes, const WriteOptions& options);
  // Opens the array again as source_ (source_mu_ held): after writes, since a source may cache
  // what a write changed (a Zarr shard index); after a resize, for the new shape and metadata.
  Result<driver::OpenedArray> OpenSourceAgain() const;

  Format format_;
  Location location_;
  OpenOptions options_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> chunk_shape_;
  std::vector<int64_t> shard_shape_;
  DataType dtype_;
  std::shared_ptr<const ElementType> element_type_;
  FillValue fill_value_;
  nlohmann::json metadata_;
  nlohmann::json description_;
  int level_ = 0;
  int level_count_ = 1;

  std::unique_ptr<RegionTarget> target_;
  // Reads and writes hold it shared; Resize holds it alone.
  mutable std::shared_mutex resize_mu_;
  // Reads run together and writes run together, never a read during a write (access_gate.h).
  mutable AccessGate gate_;
  // The reading source, replaced (under source_mu_) by a read that finds source_stale_ set: a
  // write since the source was opened may have changed what it caches.
  mutable std::mutex source_mu_;
  mutable std::shared_ptr<const ChunkSource> source_;  // OpenedArray's unique_ptr, shared
  mutable std::atomic<bool> source_stale_{false};
  // Arrays of variable-length elements: their elements (read only; never replaced). Else null.
  std::shared_ptr<const ObjectChunkSource> objects_;
};

// Opens the array at `location`. options.mode: r (read) or r+ (read and write: kUnsupported,
// naming the format, where the format has no region writes, e.g. HDF5); a, w and w- create
// arrays and are refused here (kInvalidArgument).
Result<std::unique_ptr<Array>> OpenArray(const std::string& location, const OpenOptions& options = {});

}  // namespace tessera
