// A sink for a writer that streams one region of an array (scale-out: many processes, each its own
// shard-aligned region): the writer sees the region as a whole array; this sink moves each of its
// shards to the array's shard grid and hands it to the array's sink. Rows are not published: the
// array's metadata is not the region's to change.
#pragma once

#include <vector>

#include "tessera/stream/shard_sink.h"

namespace tessera::stream {

class OffsetShardSink final : public ShardSink {
 public:
  // `shard_offset`: the region's first shard in the array's shard grid, per dimension.
  OffsetShardSink(ShardSink* array_sink, std::vector<int64_t> shard_offset)
      : sink_(array_sink), offset_(std::move(shard_offset)) {}

  Status WriteShard(const EncodedShard& shard) override {
    std::vector<int64_t> coords(shard.coords.begin(), shard.coords.end());
    for (size_t d = 0; d < coords.size() && d < offset_.size(); ++d) coords[d] += offset_[d];
    EncodedShard moved = shard;
    moved.coords = coords;
    return sink_->WriteShard(moved);
  }
  Result<std::unique_ptr<ShardWriter>> BeginShard(std::span<const int64_t> coords) override {
    std::vector<int64_t> moved(coords.begin(), coords.end());
    for (size_t d = 0; d < moved.size() && d < offset_.size(); ++d) moved[d] += offset_[d];
    return sink_->BeginShard(moved);
  }
  Status PublishRows(int64_t) override { return Status::Ok(); }

 private:
  ShardSink* sink_;
  std::vector<int64_t> offset_;
};

}  // namespace tessera::stream
