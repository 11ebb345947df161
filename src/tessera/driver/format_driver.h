// The seam between the façade and the formats: one FormatDriver per on-disk format (its own
// folder: zarr/, precomputed/, hdf5/), found by name in the registry (api/driver_registry.h).
// tensorstore's driver registry is the model: the façade keeps the lifecycle, pyramids, convert
// and shared writes, and asks the driver for everything that depends on the format — detecting
// it, resolving its part of a spec, opening an array to read, planning and opening a stream's
// sink, describing an existing array as a spec. A new format is a new folder with a driver plus
// one registry line; nothing above this header switches on the format.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/mode.h"
#include "tessera/core/status.h"
#include "tessera/core/worker_pool.h"
#include "tessera/read/object_read.h"
#include "tessera/read/selection_read.h"
#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"
#include "tessera/stream/layout.h"
#include "tessera/stream/stream_writer.h"
#include "tessera/write/region_write.h"

namespace tessera {

// Which array of a stored multiscale image or multi-dataset file to open.
struct OpenOptions {
  std::optional<Format> format;  // unset: detected from what is stored
  std::string dataset;           // HDF5: the dataset's path; empty: the file's only dataset
  int scale = 0;                 // precomputed: which scale (index into the info's scales)
  // A pyramid's level: OME-Zarr: the index into multiscales' datasets; precomputed: the scale.
  int level = 0;
  // r (read only) or r+ (Array::Write, Resize, transactions too); core/mode.h.
  Mode mode = Mode::kRead;
  // How to reach an object store (endpoint, region, profile, retry budget) instead of the
  // environment; empty: the environment's (store/store_options.h).
  StoreOptions storage;
  // HDF5: directories (or files) beyond the file's own directory tree that virtual dataset sources
  // and external raw data files may be read from. A file names the files it pulls in; by default
  // only those inside its own directory tree (on an object store: its own prefix) are followed.
  std::vector<std::string> hdf5_allowed_paths;
};

namespace driver {

// An array a driver opened for reading: its chunks, and what it says of itself.
struct OpenedArray {
  std::unique_ptr<ChunkSource> source;
  // Arrays of variable-length elements (strings, sequences): their elements; `source` is then a
  // placeholder of their shape that refuses fixed-size reads (read/object_read.h). Else null.
  std::shared_ptr<const ObjectChunkSource> objects;
  std::vector<int64_t> shard_shape;  // sharded Zarr: the shard shape in elements; else empty
  nlohmann::json metadata;           // the format's own document (zarr.json, info, dataset description)
  nlohmann::json description;        // a short format-specific summary (`tessera info`)
  int level = 0;                     // which level of its multiscale image it is
  int level_count = 1;               // the levels of that image (1: a plain array)
};

// A new array a copy writes object by object (api/region_copy.h): a region-write target over its
// objects, usable before the array's metadata says it has them, and how that metadata is published.
struct CopyTarget {
  std::unique_ptr<RegionTarget> target;
  // Publishes the first `rows` rows along dimension 0, every object holding them stored: 0 first,
  // then growing, the whole shape last (a format of a fixed shape published it when opened).
  std::function<Status(int64_t rows)> publish_rows;
};

// What ConversionSpec reads of an opened array to describe it as a spec.
struct StoredArray {
  const nlohmann::json& metadata;
  const nlohmann::json& description;
  const std::vector<int64_t>& chunk_shape;
  const std::vector<int64_t>& shard_shape;
  int level = 0;
};

// How a stream's writer runs: resolved threads (> 0), the backend, and whether it stores anything.
struct WriterSettings {
  int threads = 1;
  stream::Backend backend = stream::Backend::kCpu;
  bool discard = false;  // run the whole pipeline, store nothing (benchmarks)
  std::shared_ptr<WorkerPool> pool;  // compression threads shared with other writers (null: `threads` of its own)
  int input_buffers = 2;             // the CPU backend's epoch buffers (StreamWriterOptions)
};

// A format's running writer and what to do when the stream ends. `writer` points into
// `keep_alive`, which owns the sink (and the store or file) and outlives nothing else.
struct FormatWriter {
  stream::StreamWriter* writer = nullptr;
  std::function<Status()> finish;   // after the writer's successful Close: publish what remains
  std::function<void()> abandon;    // after a failure: stop; keep what was published, remove what no reader sees
  std::function<Status()> sync;     // after the writer's Flush: what it stored is durable (null: already)
  // Replaces the array's attributes and publishes them (null: the format takes none while it streams).
  std::function<Status(const nlohmann::json&)> set_attributes;
  int64_t upload_queue_bytes = 0;   // the write-behind queue to an object store (0: none)
  std::shared_ptr<void> keep_alive;
};

// Several arrays written side by side into one stored object (a file) that is written whole when
// it closes: what a format stored as one object gives an acquisition of many arrays
// (api/acquisition.h). One thread (the producer) calls these; the writers' threads store
// concurrently. Destroyed without Close, it writes nothing.
class MultiArrayFile {
 public:
  virtual ~MultiArrayFile() = default;
  // The writer of a new array at `path` ("/cam1", "/plate/A/1/0"; groups on the way made as
  // needed) of `resolved` (one level: a pyramid is kUnsupported). Its input is in stored order
  // (the caller applies the spec's arrival order, as for OpenWriter).
  virtual Result<FormatWriter> OpenArray(const ArraySpec& resolved, const std::string& path,
                                         const WriterSettings& settings) = 0;
  // Replaces the attributes of the group or array at `path` ("/": the file's root), written at Close.
  virtual Status SetAttributes(const std::string& path, const nlohmann::json& attributes) = 0;
  // Writes the file, every array's writer closed and finished.
  virtual Status Close() = 0;
  // Leaves the target as it was. Safe to repeat.
  virtual void Abandon() = 0;
};

// What a location holds, as far as one driver can tell.
enum class Detection {
  kAbsent,       // nothing this driver recognises, and nothing in the way
  kDetected,     // an array of this format
  kOtherObject,  // an object (a file) is there, but not of this format
};

class FormatDriver {
 public:
  virtual ~FormatDriver() = default;

  // ---- identity and storage
  virtual Format format() const = 0;
  virtual std::string_view name() const = 0;                   // "zarr3": what ParseFormat takes
  virtual std::vector<std::string_view> aliases() const { return {}; }  // other spellings ("zarr")
  // Stored as one object (a file) rather than as keys under a prefix (a directory).
  virtual bool single_object() const = 0;
  // Whether a new array whose location ends in `extension` (lower case, with the dot) is of this
  // format when the caller names none.
  virtual bool ClaimsExtension(std::string_view extension) const { return false; }
  // What it looks like when stored, for "no ... here" messages: "Zarr array (zarr.json, ...)".
  virtual std::string_view stored_as() const = 0;
  // Whether `location` holds an array of this format.
  virtual Result<Detection> Detect(const Location& location) const = 0;
  // What is stored at `location` (where Detect found this format), for "exists here" errors:
  // "a Zarr array (zarr.json)", "an OME-Zarr image of 3 level(s) (...)". Default: stored_as().
  virtual Result<std::string> DescribeStored(const Location& location) const;
  // Whether the array a stream of `resolved` writes is already stored at `location` (where Detect
  // found this format), or the stream would add it beside what is there: precomputed, a scale of
  // another key in the volume's info (mode a adds it). Default: the location is the array.
  virtual Result<bool> HoldsArray(const Location& location, const ArraySpec& resolved) const { return true; }

  // ---- specs
  // Before the common checks: the format's own spellings and limits of common fields
  // (precomputed: a fixed shape; a multi-channel volume's chunks given as z, y, x).
  virtual Status PrepareSpec(ArraySpec* spec) const { return Status::Ok(); }
  // Checks the format's part of `spec` (common fields already checked) and fills in its
  // defaults (codec, chunk shape). Errors name the field (spec/spec_error.h).
  virtual Status ResolveSpec(ArraySpec* spec) const = 0;
  // An error naming the first of this format's own options `spec` sets (to other than its
  // default), which `writing` (another format) cannot honour; Ok when none is set.
  virtual Status CheckOptionsUnset(const ArraySpec& spec, std::string_view writing) const = 0;
  // Resets this format's own options in `spec` to their defaults.
  virtual void ClearOptions(ArraySpec* spec) const = 0;
  // Resolves the multiscale part of `spec` (pyramid with levels != 1, or ome): rejects what the
  // format cannot store, fills the OME image and the default downsample factors, and the method
  // when the format's default is not mean (ResolvePyramidLevels's).
  virtual Status ResolveMultiscale(ArraySpec* spec) const = 0;
  // Level `level` (> 0) of a resolved spec: the format's own fields that change with the level
  // (precomputed: resolution, voxel offset, scale key). Shape and chunks are already done.
  virtual void ScaleLevelSpec(const ArraySpec& resolved, int level, ArraySpec* level_spec) const {}
  // Where level `level` of a multiscale array at `root` is stored (a Zarr image: root/<level>).
  virtual Location LevelLocation(const Location& root, int level) const { return root; }
  // Whether a multiscale array has root metadata of its own, written before its levels (an
  // OME-Zarr group) by CreateMultiscaleRoot into the root's store and removed again by
  // AbandonMultiscaleRoot.
  virtual bool HasMultiscaleRoot() const { return false; }
  virtual Status CreateMultiscaleRoot(const ArraySpec& resolved, const Location& root, Store& store) const {
    return Status::Ok();
  }
  virtual Status AbandonMultiscaleRoot(Store& store) const { return Status::Ok(); }
  // The opening level of level `level` of a multiscale array, for OpenOptions::level when it is
  // read back from its LevelLocation (precomputed: the scale; a Zarr level array: 0).
  virtual int OpenLevelOf(int level) const { return 0; }
  // Removes what makes the array at `root` (written by many processes) look valid.
  virtual Status AbandonShared(const ArraySpec& resolved, Store& root) const = 0;
  // The chunk shape a conversion into this format falls back to when the source's is refused:
  // about 1 MiB, proportional to the shape.
  virtual std::vector<int64_t> FallbackChunkShape(const ArraySpec& spec) const;
  // The spec fields of the stored array that its format records beyond the chunk grid (codec,
  // sharding, per-format options).
  virtual void DescribeSpec(const StoredArray& array, ArraySpec* spec) const = 0;

  // ---- reading
  virtual Result<OpenedArray> Open(const Location& location, const OpenOptions& options) const = 0;

  // ---- writing
  // Whether its streams can run on `backend`, and store nothing (`discard`); else the error.
  virtual Status CheckWriterSettings(const WriterSettings& settings) const { return Status::Ok(); }
  // Whether many processes may write disjoint shard-aligned regions of one array (scale-out).
  virtual Status CheckSharedWriting() const { return Status::Ok(); }
  // The stream layout of a resolved spec, touching no storage.
  virtual Result<stream::StreamLayout> Plan(const ArraySpec& spec, int threads) const = 0;
  // Whether a stream to `location` stores through a write-behind upload queue (an object store
  // with whole-shard objects), whose size PlanStream reports.
  virtual bool UsesUploadQueue(const Location& location) const { return !location.is_file(); }
  // Creates the array at `location` and its writer.
  virtual Result<FormatWriter> OpenWriter(const ArraySpec& spec, const Location& location,
                                          const WriterSettings& settings) const = 0;
  // The writer of one region of an existing array (scale-out): `array` the array's resolved spec,
  // `region` the same with the region's shape, `shard_offset` the region's first shard in the
  // array's shard grid. Stores whole shards only: no metadata; abandoning it removes nothing.
  virtual Result<FormatWriter> OpenRegionWriter(const ArraySpec& array, const ArraySpec& region,
                                                const Location& location, const WriterSettings& settings,
                                                std::vector<int64_t> shard_offset) const = 0;
  // The pyramid of the multiscale image at `location` (levels, downsample method and factors), as
  // a stream of it would be asked for (one level: no method or factors; the method unset where the
  // format does not record it, as precomputed); kNotFound when a plain array is there rather than
  // an image; kUnsupported where the format has no pyramids or the stored levels are not one.
  virtual Result<PyramidSpec> StoredPyramid(const Location& location) const;
  // Whether the array of `stored` spec at `location` can be continued along dimension 0 at all
  // (mode a), checked before its continued spec is resolved: kUnsupported saying why not (a
  // precomputed multi-channel volume's dimension 0 is its channel). Ok by default.
  virtual Status CheckContinuable(const ArraySpec& stored, const Location& location) const { return Status::Ok(); }
  // The writer that continues the array at `location` along dimension 0 (mode a): `spec` its
  // stored spec, resolved, with the rows the array ends with (shape[0]; 0: unbounded). The
  // writer's row 0 is the array's row `first_row` (a shard-row boundary), so it takes
  // shape[0] - first_row rows; the array keeps at least `stored_rows` rows readable and only
  // grows. kUnsupported, naming the format, where it has none.
  virtual Result<FormatWriter> OpenAppendWriter(const ArraySpec& spec, const Location& location,
                                                const WriterSettings& settings, int64_t first_row,
                                                int64_t stored_rows) const;
  // Writes the metadata of an array of `spec` (one level, whole shape) as a closed stream leaves it.
  virtual Status CreateMetadata(const ArraySpec& spec, const Location& location) const = 0;
  // A new file of many arrays at `location` (which the caller prepared), for a format stored as
  // one object; null where the format stores each array under keys of its own (an acquisition's
  // arrays are then streams of their own, under the root's prefix). Default: null.
  virtual Result<std::unique_ptr<MultiArrayFile>> CreateMultiArrayFile(const Location& location) const;

  // ---- changing a stored array (mode r+) and replacing one (mode w)
  // The array at `location` (as Open would open it with `options`) as a region-write target
  // (write/region_write.h). kUnsupported, naming the format, where it has none.
  virtual Result<std::unique_ptr<RegionTarget>> OpenRegionTarget(const Location& location,
                                                                 const OpenOptions& options) const;
  // The codecs each chunk of a stored array is encoded with, from its metadata document (Zarr v3:
  // the inner chain of a sharded array, else its codecs); null where the format's chunks are not
  // copied as stored.
  virtual nlohmann::json ChunkCodecs(const nlohmann::json& metadata) const { return nullptr; }
  // The same for a new array of `spec` (resolved): a source of this format whose chunk grid and
  // chunk codecs are these has its chunks copied into it as stored.
  virtual nlohmann::json ChunkCodecsOfSpec(const ArraySpec& spec) const { return nullptr; }
  // The array of `spec` (resolved, one level, bounded) at `location`, which the caller prepared
  // (create_mode.h), as a copy writes it: objects first, metadata as they complete (CopyTarget).
  // Its objects are byte-identical to a stream's of the same values. kUnsupported where the
  // format has none (HDF5 writes whole files).
  virtual Result<CopyTarget> OpenCopyTarget(const ArraySpec& spec, const Location& location) const;
  // Removes the array (or multiscale image) at `location` wholly: its metadata first, so nothing
  // half-removed looks valid, then every chunk, shard and level of it; nothing outside it.
  virtual Status Remove(const Location& location) const;
};

}  // namespace driver
}  // namespace tessera
