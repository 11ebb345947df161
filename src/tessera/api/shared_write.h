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
// rewrites the same shards with the same bytes).
Result<int> WriteRegion(const std::string& location, const ArraySpec& spec, const StreamOptions& options,
                        const Region& region, ByteView bytes, bool write_own_level = true);

// Publishes what only the whole array may: the OME-Zarr group of an image (zarr3 with a pyramid or
// ome.image). Nothing else to do for other arrays.
Status FinishSharedArray(const std::string& location, const ArraySpec& spec, const StreamOptions& options);

// Removes the metadata CreateSharedArray wrote (and the group), so that an array whose writing
// failed does not look valid. Shards already written stay, unreferenced.
Status AbandonSharedArray(const std::string& location, const ArraySpec& spec, const StreamOptions& options);

}  // namespace tessera
