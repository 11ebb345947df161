// The per-format half of CreateStream: turns a resolved ArraySpec into each format's own writer
// options and opens that format's sink and StreamWriter. Internal to the façade.
#pragma once

#include <functional>
#include <memory>

#include "tessera/api/array_spec.h"
#include "tessera/api/location.h"
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
  std::shared_ptr<void> keep_alive;
};

// Ok while `state` is kOpen; else the error a call named `call` gets on a closed or aborted stream.
inline Status CheckStreamOpen(StreamState state, const char* call) {
  if (state == StreamState::kOpen) return Status::Ok();
  return FailedPrecondition(std::string(call) + (state == StreamState::kClosed
                                                     ? ": the stream is closed"
                                                     : ": the stream was aborted (after an error or Abort)"));
}

// The stream layout of `spec` (resolved for `format`), touching no storage.
Result<stream::StreamLayout> PlanFormat(Format format, const ArraySpec& spec, int threads);

// Creates the array at `location` and its writer. `threads` is resolved (> 0).
Result<FormatWriter> OpenFormatWriter(Format format, const ArraySpec& spec, const Location& location,
                                      const StreamOptions& options, int threads);

}  // namespace tessera::api_internal
