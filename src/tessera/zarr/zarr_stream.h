// Wiring for the common case: a StreamWriter writing a Zarr v3 array on a store.
#pragma once

#include <memory>

#include "tessera/stream/offset_shard_sink.h"
#include "tessera/stream/resumed_shard_sink.h"
#include "tessera/stream/stream_writer.h"
#include "tessera/zarr/zarr_sink.h"
#include "tessera/zarr/array_options.h"

namespace tessera::zarr {

// A Zarr sink plus the writer that feeds it. Close() finalises; a failed stream keeps what it
// published (the sink's DiscardUnpublished).
struct ZarrSinkAndWriter {
  std::unique_ptr<ZarrShardSink> sink;
  std::unique_ptr<stream::ShardSink> region_sink;  // a region's writer feeds this (see OpenZarrRegionStream)
  std::unique_ptr<stream::StreamWriter> writer;
};

// Plans the layout for `options` (shape[0] == 0: unbounded) without touching a store.
Result<stream::StreamLayout> PlanZarrStream(const zarr::ArrayOptions& options, int threads);

// Creates the array at `path` (zarr.json published with dimension 0 at 0) and the writer.
Result<ZarrSinkAndWriter> OpenZarrStream(std::shared_ptr<Store> store, const std::string& path,
                                  const zarr::ArrayOptions& options, const stream::StreamWriterOptions& writer_options);

// The writer that continues the array at `path` (mode a): `options` its spec, unbounded along
// dimension 0, which must give the stored zarr.json's chunk grid, codecs and fill value (else
// kUnsupported naming the file: the stream would store other bytes). The writer's row 0 is the
// array's row `first_row` (a shard-row boundary); the array's published rows only grow from
// `stored_rows` (see stream/resumed_shard_sink.h).
Result<ZarrSinkAndWriter> OpenZarrAppendStream(std::shared_ptr<Store> store, const std::string& path,
                                               const zarr::ArrayOptions& options, int64_t first_row,
                                               int64_t stored_rows, const stream::StreamWriterOptions& writer_options);

// A writer of one region of an existing array (scale-out; see offset_shard_sink.h): `region` is
// `array` with the region's shape; `shard_offset` the region's first shard in the array's grid.
// Stores whole shards only; zarr.json is neither read nor written (the sink's RemoveMetadata must not
// be called).
Result<ZarrSinkAndWriter> OpenZarrRegionStream(std::shared_ptr<Store> store, const std::string& path,
                                        const zarr::ArrayOptions& array, const zarr::ArrayOptions& region,
                                        std::vector<int64_t> shard_offset, const stream::StreamWriterOptions& writer_options);

}  // namespace tessera::zarr
