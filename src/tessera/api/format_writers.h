// The per-format half of CreateStream: turns a resolved ArraySpec into each format's own writer
// options and opens that format's sink and StreamWriter; and the lifecycle every stream of the
// façade shares. Internal to the façade.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "tessera/spec/array_spec.h"
#include "tessera/store/location.h"
#include "tessera/api/stream.h"
#include "tessera/stream/layout.h"
#include "tessera/stream/stream_writer.h"

namespace tessera::api_internal {

// A format's running writer and what to do when the stream ends. `writer` points into
// `keep_alive`, which owns the sink (and, for HDF5, the file) and outlives nothing else.
struct FormatWriter {
  stream::StreamWriter* writer = nullptr;
  std::function<Status()> finish;   // after the writer's successful Close: publish what remains
  std::function<void()> abandon;    // after a failure: leave nothing that looks like a valid array
  std::function<Status()> sync;     // after the writer's Flush: what it stored is durable (null: already)
  int64_t upload_queue_bytes = 0;   // the write-behind queue to an object store (0: none)
  std::shared_ptr<void> keep_alive;
};

// What every façade stream shares: its format and resolved spec, and the lifecycle. A stream is
// open until Close succeeds; any error aborts it, and aborting abandons what it wrote so that
// nothing is left looking like a valid array.
class LifecycleStream : public Stream {
 public:
  LifecycleStream(Format format, ArraySpec spec) : format_(format), spec_(std::move(spec)) {}

  void Abort() final {
    if (state_ != StreamState::kOpen) return;
    state_ = StreamState::kAborted;
    Abandon();
  }
  StreamState state() const final { return state_; }
  Format format() const final { return format_; }
  const ArraySpec& spec() const final { return spec_; }

 protected:
  // Stops every writer (no worker stores or publishes anything afterwards) and removes what
  // would make the stream's output look valid. Called once, by Abort.
  virtual void Abandon() = 0;
  // Ok while open; else the error a call named `call` gets on a closed or aborted stream.
  Status CheckOpen(const char* call) const {
    const StreamState state = state_;
    if (state == StreamState::kOpen) return Status::Ok();
    return FailedPrecondition(std::string(call) + (state == StreamState::kClosed
                                                       ? ": the stream is closed"
                                                       : ": the stream was aborted (after an error or Abort)"));
  }
  // Any error ends the stream.
  Status FailOnError(Status st) {
    if (!st.ok()) Abort();
    return st;
  }
  void MarkClosed() { state_ = StreamState::kClosed; }

 private:
  const Format format_;
  const ArraySpec spec_;
  std::atomic<StreamState> state_{StreamState::kOpen};
};

// What CreateStream makes of its arguments: the location, the format (named, or from the
// location's name), the resolved spec and the thread count; the backend and discard checked.
struct Resolved {
  Location location;
  Format format;
  ArraySpec spec;
  int threads;
};
Result<Resolved> Resolve(const std::string& location, const ArraySpec& spec, const StreamOptions& options);

// The stream layout of `spec` (resolved for `format`), touching no storage.
Result<stream::StreamLayout> PlanFormat(Format format, const ArraySpec& spec, int threads);

// The write-behind upload queue of a stream to an object store: one shard row's raw bytes,
// 16..256 MiB.
int64_t UploadQueueBytes(const stream::StreamLayout& layout);

// Creates the array at `location` and its writer. `threads` is resolved (> 0).
Result<FormatWriter> OpenFormatWriter(Format format, const ArraySpec& spec, const Location& location,
                                      const StreamOptions& options, int threads);

// The writer of one region of an existing array (scale-out): `array` is the array's spec
// (resolved), `region` the same with the region's shape, `shard_offset` the region's first shard
// in the array's shard grid. Stores whole shards only: no metadata, and abandoning it removes
// nothing. zarr3 and precomputed (identity hash) only.
Result<FormatWriter> OpenRegionFormatWriter(Format format, const ArraySpec& array, const ArraySpec& region,
                                            const Location& location, const StreamOptions& options, int threads,
                                            std::vector<int64_t> shard_offset);

// Writes the metadata of an array of `spec` (resolved, one level) at `location`, with its whole
// shape, as a stream of it leaves it when closed: zarr.json, or the scale in the precomputed info.
Status CreateArrayMetadata(Format format, const ArraySpec& spec, const Location& location);

// The Stream of a FormatWriter (the one implementation every façade stream of one level uses).
std::unique_ptr<Stream> MakeFormatStream(Format format, const ArraySpec& spec, int threads, FormatWriter writer);

}  // namespace tessera::api_internal
