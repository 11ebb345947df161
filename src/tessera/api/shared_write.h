// Writing one array from many processes (Dask tasks, one per region; see python/tessera/dask.py).
//
// Shards are the unit of independence: every process writes whole shards of its own shard-aligned
// region, each shard exactly once, so no shard is read back and no lock is needed.
//
//   client:   CreateSharedArray(location, spec, options);       // every level's metadata, no data
//   workers:  WriteRegion(location, spec, options, region, bytes);  // each its own region; returns the
//                                                                   // last level it completed
//   client:   levels no region covered whole: regions of the last complete level m (RegionsFor),
//             each read back and written with region.level = m and write_own_level = false
//   client:   FinishSharedArray(location, spec, options);       // the OME-Zarr group: the image is done
//   (on failure: AbandonSharedArray removes the metadata, so nothing is left looking valid)
//
// A region's shards are encoded exactly as a stream of the whole array encodes them, so the result
// is byte-identical to CreateStream + Append of the same values. Zarr v3 and precomputed (identity
// hash); an HDF5 file cannot be written by many processes at once.
#pragma once

#include <string>
#include <vector>

#include "tessera/api/array.h"
#include "tessera/spec/array_spec.h"
#include "tessera/api/stream.h"
#include "tessera/core/bytes.h"

namespace tessera {

// A box of one level of an array: origin and shape per dimension, in that level's elements.
struct Region {
  int level = 0;
  std::vector<int64_t> origin;
  std::vector<int64_t> shape;
};

// The shard shape (in elements) of `level` of `resolved` (unsharded: the chunk shape): regions
// start at multiples of it and end at multiples of it or at the level's edge.
Result<std::vector<int64_t>> LevelShardShape(const ArraySpec& resolved, Format format, int level);

// The highest level whose shards a region covers whole (levels above region.level are
// downsampled from the region's data): region.level when it covers none above its own.
Result<int> LastCoveredLevel(const ArraySpec& resolved, Format format, const Region& region);

// The regions of level `level` that together cover it and from which level + 1 can be written:
// blocks of level + 1's shard shape times the downsample factors (clipped at the edge).
Result<std::vector<Region>> RegionsFor(const ArraySpec& resolved, Format format, int level);

// Where a wave reads level `level` of the array back before the OME-Zarr group exists: the location
// to open (a Zarr image's level array, else the array itself) and the OpenOptions::level to open it
// with (a precomputed scale).
struct LevelToRead {
  std::string location;
  int open_level = 0;
};
Result<LevelToRead> LevelReadBack(const std::string& location, const ArraySpec& resolved, Format format, int level);

// Resolves `spec` (as CreateStream does) and writes the metadata of every level with its whole
// shape (zarr.json of each array; the precomputed info with every scale); stores no data. The
// shape must be bounded. Returns the resolved spec.
Result<ArraySpec> CreateSharedArray(const std::string& location, const ArraySpec& spec, const StreamOptions& options);

// Writes `bytes` (C order over region.shape, little-endian) as whole shards of region.level
// (unless !write_own_level: the level is already stored and the data only feeds the levels above)
// and of every level above it the region covers (LastCoveredLevel), which it returns. The region
// must be shard-aligned (LevelShardShape) and inside the level. Safe to repeat (a retried task
// rewrites the same shards with the same bytes). With a `job_token` (a job of PrepareSharedJob):
// CheckSharedJob first, and each shard stored only while the marker still holds the token.
Result<int> WriteRegion(const std::string& location, const ArraySpec& spec, const StreamOptions& options,
                        const Region& region, ByteView bytes, bool write_own_level = true,
                        const std::string& job_token = "");

// Publishes what only the whole array may: the OME-Zarr group of an image (zarr3 with a pyramid or
// ome.image). Nothing else to do for other arrays.
Status FinishSharedArray(const std::string& location, const ArraySpec& spec, const StreamOptions& options);

// Removes the metadata CreateSharedArray or PublishSharedJob wrote (and the group) and the job
// marker, so that an array whose writing failed does not look valid and its tasks stop writing.
// Shards already written stay, unreferenced (CleanupSharedLocation). With a `job_token`: only while
// the marker holds it (a job that another replaced, mode w, leaves that one's marker and metadata).
Status AbandonSharedArray(const std::string& location, const ArraySpec& spec, const StreamOptions& options,
                          const std::string& job_token = "");

// ---- a job that publishes last (tessera.dask)
//
// Nothing of the job looks like an array until every region is written: the tasks store shards only
// and the client publishes the metadata at the end, so a job that fails or is killed at any moment
// leaves at most unreferenced shards (and its marker), which CleanupSharedLocation or the next
// mode-w job removes.
//
//   client:   PrepareSharedJob(location, spec, options, token);   // what is there refused (w-) or
//                                                                 // removed (w); the job marker; no metadata
//   workers:  WriteRegion(..., job_token = token)                  // shards only, each while the marker holds token
//   waves:    OpenUnpublishedLevel(location, spec, options, m)     // level m read back by its spec
//   client:   PublishSharedJob(location, spec, options, token);   // the OME group, every level's metadata
//                                                                 // (the order a stream writes them); marker removed
//   failure:  AbandonSharedArray (marker and any metadata removed; running tasks stop at their next shard)

// Resolves `spec`, prepares the location as CreateStream does for options.mode (w- refuses what is
// there, a marker of another job included; w removes an array, or a failed job's leftovers) and
// stores the job marker holding `token` (api/shared_job.h). Writes no metadata. Returns the
// resolved spec.
Result<ArraySpec> PrepareSharedJob(const std::string& location, const ArraySpec& spec, const StreamOptions& options,
                                   const std::string& token);

// Whether a task of the job `token` may write at `location`: Ok while the marker holds the token;
// kFailedPrecondition otherwise, saying the job was cancelled or (a local path that does not show
// the marker at all) that the location is not shared with the client.
Status CheckSharedJob(const std::string& location, const StreamOptions& options, const std::string& token);

// Level `level` of the array PrepareSharedJob prepared, opened for reading from its spec (the
// metadata is not stored yet) as OpenArray opens it once published.
Result<std::unique_ptr<Array>> OpenUnpublishedLevel(const std::string& location, const ArraySpec& spec,
                                                    const StreamOptions& options, int level);

// After every region of the job `token` is written: publishes the OME-Zarr group (an image) and
// every level's metadata in the order a stream of the whole array writes them, then removes the
// marker. kFailedPrecondition (publishing nothing) when the marker no longer holds `token`.
Status PublishSharedJob(const std::string& location, const ArraySpec& spec, const StreamOptions& options,
                        const std::string& token);

// Removes what a failed job left at `location` (a zarr3 or precomputed location, options.format or
// from its name): every shard or chunk object, any metadata a killed client published part of,
// and the marker. A location that holds a published array and no marker is refused (nothing is
// removed); so is one holding a key no such job writes (named), so that a wrong location loses
// nothing. Nothing there: Ok.
Status CleanupSharedLocation(const std::string& location, const StreamOptions& options);

}  // namespace tessera
