// A sink for a writer that continues an existing array along dimension 0 (mode a): the writer
// streams from the array's row `first_row` (a shard-row boundary, so its shards line up with the
// array's); this sink moves each shard to the array's shard grid and publishes the array's rows,
// never fewer than the `stored_rows` it already had, so the array only grows while it resumes
// (the rows re-fed between first_row and stored_rows are the stored values, stored again).
#pragma once

#include <algorithm>
#include <vector>

#include "tessera/stream/shard_sink.h"

namespace tessera::stream {

class ResumedShardSink final : public ShardSink {
 public:
  // `first_shard_row`: first_row in shard rows (first_row / rows per shard).
  ResumedShardSink(ShardSink* array_sink, int64_t first_shard_row, int64_t first_row, int64_t stored_rows)
      : sink_(array_sink), first_shard_row_(first_shard_row), first_row_(first_row), stored_rows_(stored_rows) {}

  Status WriteShard(const EncodedShard& shard) override {
    std::vector<int64_t> coords(shard.coords.begin(), shard.coords.end());
    if (!coords.empty()) coords[0] += first_shard_row_;
    EncodedShard moved = shard;
    moved.coords = coords;
    return sink_->WriteShard(moved);
  }
  Result<std::unique_ptr<ShardWriter>> BeginShard(std::span<const int64_t> coords) override {
    std::vector<int64_t> moved(coords.begin(), coords.end());
    if (!moved.empty()) moved[0] += first_shard_row_;
    return sink_->BeginShard(moved);
  }
  Status PublishRows(int64_t rows) override { return sink_->PublishRows(std::max(stored_rows_, first_row_ + rows)); }

 private:
  ShardSink* sink_;
  const int64_t first_shard_row_;
  const int64_t first_row_;
  const int64_t stored_rows_;
};

}  // namespace tessera::stream
