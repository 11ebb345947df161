// Writing any format through one lifecycle.
//
//   ArraySpec spec;                       // dtype, shape (shape[0] = 0: unbounded), chunks, codec...
//   auto s = CreateStream("out.zarr", spec, {.format = Format::kZarr3}).value();
//   Status st = s->Append(frames);        // any byte count, row-major; blocks for backpressure
//   st = s->Close();                      // stores the rest and publishes the array
//
// Create -> Append / AppendFrom* [Flush]* -> Close, or Abort at any point. A stream that fails
// (an error from any call) or is aborted, or destroyed without Close, leaves what a crash at that
// moment would: its last published state. Zarr keeps zarr.json with the rows published so far
// (Flush publishes; before any, a valid empty array) and the shards stored; precomputed keeps its
// info and the chunk or shard files stored (staged murmurhash parts are removed); HDF5 writes its
// file once at Close (temporary file renamed, or one upload), so an aborted HDF5 stream leaves no
// file. Pending uploads and multipart uploads are cancelled. Memory is bounded by the plan
// whatever the stream's length. Not thread-safe: one producer thread drives a Stream.
//
// CreateStream's mode (StreamOptions::mode): w- (the default) refuses a location where anything
// exists (kAlreadyExists naming it); w removes the array there wholly first; a continues it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"
#include "tessera/core/bytes.h"
#include "tessera/core/mode.h"
#include "tessera/stream/stream_writer.h"

namespace tessera {

struct StreamOptions {
  std::optional<Format> format;  // unset: from the location's name (FormatFromName)
  int threads = 0;               // compression threads; 0 = hardware threads
  stream::Backend backend = stream::Backend::kCpu;
  // Runs the whole pipeline but stores nothing (benchmarks). Zarr and precomputed only.
  bool discard = false;
  // w- (an error naming what exists, if anything does), w (replace it) or a (continue an existing
  // array along dimension 0, or create it); core/mode.h.
  Mode mode = Mode::kCreate;
  // Compression threads shared with other streams (an Acquisition's arrays); set, it replaces
  // `threads`.
  std::shared_ptr<WorkerPool> pool;
  // The CPU backend's epoch buffers: 2 (one filling while the other is encoded) or 1 (less
  // memory; the producer waits for the encoding before refilling); stream::StreamWriterOptions.
  int input_buffers = 2;
  // How to reach an object store instead of the environment; empty: the environment's
  // (store/store_options.h).
  StoreOptions storage;
};

struct StreamStatistics {
  int64_t bytes_in = 0;        // bytes appended
  int64_t bytes_out = 0;       // encoded bytes handed to storage
  int64_t rows_published = 0;  // rows of dimension 0 durably stored and visible to readers
  int64_t shards_written = 0;
  double seconds = 0;          // since the stream was created
  double GigabytesPerSecond() const { return seconds > 0 ? bytes_in / 1e9 / seconds : 0.0; }
};

enum class StreamState { kOpen, kClosed, kAborted };

class Stream {
 public:
  virtual ~Stream() = default;  // a stream destroyed without Close is aborted

  // Appends row-major little-endian bytes (any count; rows may be split across calls).
  virtual Status Append(ByteView bytes) = 0;
  // Lets the stream ask for its input: read(dst) fills free space the stream offers (its epoch
  // buffer on the CUDA backend, a small staging buffer scattered into tiles on the CPU); see
  // StreamWriter::AppendFrom. Returns the number of bytes taken.
  virtual Result<int64_t> AppendFrom(const stream::StreamWriter::ReadFn& read) = 0;
  // Stores and publishes everything appended so far; appending may continue.
  virtual Status Flush() = 0;
  // Stores the rest, publishes the array and ends the stream. A bounded array must have received
  // exactly shape[0] rows. After a failed Close the stream is aborted.
  virtual Status Close() = 0;
  // Ends the stream without storing anything more; what it published stays (see the top).
  virtual void Abort() = 0;
  // Replaces the attributes the caller gave the array (an OME-Zarr image's: its group's, beside
  // `ome`); they are published at the next Flush and at Close. kUnsupported where the format has
  // no attributes to change while it streams (precomputed, a continued array).
  virtual Status SetAttributes(nlohmann::json attributes) = 0;

  // kOpen until Close succeeds (kClosed) or the stream fails or is aborted (kAborted). Safe to
  // call from any thread, also while another call runs.
  virtual StreamState state() const = 0;
  virtual StreamStatistics stats() const = 0;
  virtual Format format() const = 0;
  virtual const ArraySpec& spec() const = 0;  // resolved: format defaults filled in
  // Elements of one row (one index along dimension 0) and their bytes.
  virtual int64_t row_bytes() const = 0;
  // The layout and memory plan, as `tessera stream --plan` prints it.
  virtual std::string DescribePlan() const = 0;
};

// Validates `spec` for the format, creates the array at `location` (published empty, or with its
// declared shape growing as rows complete) and returns its stream.
Result<std::unique_ptr<Stream>> CreateStream(const std::string& location, const ArraySpec& spec,
                                             const StreamOptions& options = {});

// The plan CreateStream would execute, touching no storage (the GPU backend's plan needs a device).
Result<std::string> PlanStream(const std::string& location, const ArraySpec& spec, const StreamOptions& options = {});

}  // namespace tessera
