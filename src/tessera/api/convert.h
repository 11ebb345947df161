// Converting an array from one format (or store, or chunking) into another, on one machine with
// bounded memory.
//
//   auto src = OpenArray("acquisition.h5").value();
//   ArraySpec spec = ConversionSpec(*src, Format::kZarr3).value();  // the source's chunking, codec...
//   spec.pyramid.levels = 0;                                        // ...changed where wanted
//   StreamStatistics st = Convert(*src, "s3://lab/volume.zarr", spec).value();
//
// Its output is byte for byte what `tessera stream` writes from the same array with the same spec.
// Into a one-level Zarr v3 or precomputed array it is copied region by region (api/region_copy.h:
// whole destination shards on worker threads, memory a few shards per worker; chunks copied as
// stored where the grid and codecs match). Otherwise it is a stream (CreateStream) fed with the
// source's rows, read in slabs along dimension 0 (whole source chunk rows, at least one
// destination shard row), the next slab while the current one is encoded; memory is two slabs plus
// the stream's plan.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "tessera/api/array.h"
#include "tessera/spec/array_spec.h"
#include "tessera/api/stream.h"

namespace tessera {

// The spec an array converted into `format` gets by default: its dtype and shape, and, where the
// format takes them, its chunk shape, chunks per shard, codec and level, fill value, dimension
// names and attributes (and the options of its own format when it is converted into that format:
// a precomputed volume's resolution and chunk encoding, an HDF5 dataset's path and filters). What
// else the format cannot take is dropped for the format's default (chunks that do not fit become
// the format's default ~1 MiB chunks), except the source's compression: a codec, level or chunk
// encoding the format does not write (a zstd Zarr array into HDF5, a jpeg volume into Zarr) is a
// kUnsupported error naming it, unless `codec_chosen` (the caller replaces the codec anyway: then
// it is dropped for the default like the rest). An error also where no spec can hold the array (a
// rank-5 array as a precomputed volume, say).
Result<ArraySpec> ConversionSpec(const Array& source, Format format, bool codec_chosen = false);

struct CopyProgress {
  int64_t bytes_done = 0;
  int64_t bytes_total = 0;
  double seconds = 0;  // since the copy began
};
using CopyProgressFn = std::function<void(const CopyProgress&)>;

struct CopyOptions {
  int read_threads = 0;       // decode threads of the source's reads (0: hardware threads)
  CopyProgressFn progress;    // called on the calling thread after each slab (may be empty)
};

// The rows of `source` read per slab when copied into `stream`: a whole number of the source's
// chunk rows, at least one of the destination's shard rows, at most ~256 MiB (but one row).
int64_t CopySlabRows(const Array& source, const ArraySpec& destination);

// Appends every row of `source` to `stream` (which must take the source's dtype and row shape,
// and as many rows as the source has or be unbounded). Does not close the stream; an error leaves
// it aborted (any stream error aborts it).
Status CopyArray(const Array& source, Stream& stream, const CopyOptions& options = {});

// Creates the array of `spec` at `location` and copies `source` into it. Into a bounded,
// one-level Zarr v3 or precomputed array (not precomputed murmurhash3 shards, not the GPU
// backend) region by region, whole destination shards at a time on stream_options.threads
// workers, in memory bounded by shards (api/region_copy.h); else CreateStream, CopyArray, Close.
// Either way the output is byte-identical to a stream of the same values.
Result<StreamStatistics> Convert(const Array& source, const std::string& location, const ArraySpec& spec,
                                 const StreamOptions& stream_options = {}, const CopyOptions& copy_options = {});

// What Convert would do, as `tessera convert --plan` prints it: the regions and their memory, or
// the slabs and the stream's plan.
Result<std::string> PlanConversion(const Array& source, const std::string& location, const ArraySpec& spec,
                                   const StreamOptions& stream_options = {});

}  // namespace tessera
