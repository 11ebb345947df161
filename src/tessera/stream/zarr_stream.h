// Wiring for the common case: a StreamWriter writing a Zarr v3 array on a store.
#pragma once

#include <memory>

#include "tessera/stream/stream_writer.h"
#include "tessera/stream/zarr_sink.h"
#include "tessera/zarr/array_options.h"

namespace tessera::stream {

// A Zarr sink plus the writer that feeds it. Close() finalises; a failed stream should be
// Abandon()ed so the store does not look like a valid array.
struct ZarrStream {
  std::unique_ptr<ZarrShardSink> sink;
  std::unique_ptr<StreamWriter> writer;
};

// Plans the layout for `options` (shape[0] == 0: unbounded) without touching a store.
Result<StreamLayout> PlanZarrStream(const zarr::ArrayOptions& options, int threads);

// Creates the array at `path` (zarr.json published with dimension 0 at 0) and the writer.
Result<ZarrStream> OpenZarrStream(std::shared_ptr<Store> store, const std::string& path,
                                  const zarr::ArrayOptions& options, const StreamWriterOptions& writer_options);

}  // namespace tessera::stream
