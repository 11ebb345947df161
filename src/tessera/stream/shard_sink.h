// Where the streaming writer's complete shards go: one implementation per format.
//
// The writer hands each sink a format-neutral shard: its grid coordinates and its slots (one
// encoded tile or an empty slot per position of the tiles_per_shard box). What a shard becomes on
// disk (a Zarr shard with its index, one object per chunk, precomputed shard files, HDF5 chunks)
// is the sink's business alone.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "tessera/core/status.h"
#include "tessera/stream/encoded_tile.h"

namespace tessera::stream {

// A complete shard. Views into the writer's buffers: valid only during the WriteShard call.
struct EncodedShard {
  // The shard's grid coordinates, one per array dimension (dimension 0: the shard row).
  std::span<const int64_t> coords;
  // One entry per slot, row-major over the layout's tiles_per_shard (dimension 0 slowest). An
  // absent slot (present == false) holds only the fill value and is not stored.
  std::span<const EncodedTile> slots;
  // Sum of the present slots' byte sizes.
  int64_t stored_bytes = 0;

  // True when no slot is present (the shard is all fill value).
  bool empty() const {
    for (const EncodedTile& t : slots)
      if (t.present) return false;
    return true;
  }
};

// One shard stored as its tiles are encoded (ShardSink::BeginShard), so that each encoding is
// written while it is still in the CPU's cache instead of all of them when the shard completes.
// Nothing of it is visible until Finish; destroyed unfinished, it leaves nothing behind (a crash
// leaves at most a hidden temporary file, as any atomic write does).
class ShardWriter {
 public:
  virtual ~ShardWriter() = default;
  // Stores the shard's next `slots`, in slot order (an absent slot takes no bytes). Not called
  // concurrently for one shard; the slots' encodings are only borrowed for the call.
  virtual Status Append(std::span<const EncodedTile> slots) = 0;
  // Every slot has been appended: stores the rest (an index) and publishes the shard atomically,
  // exactly as WriteShard would have stored the same slots. A shard with no present slot is
  // removed instead, as by WriteShard.
  virtual Status Finish() = 0;
};

class ShardSink {
 public:
  virtual ~ShardSink() = default;
  // A sink that stores a shard's slots as they are encoded (a file written in place) returns a
  // writer for the shard at `coords`; the writer then uses it for every complete shard and
  // WriteShard only for the partial versions a flush stores. Null (the default): whole shards
  // only. The writer asks once per shard, before its first slot is encoded.
  virtual Result<std::unique_ptr<ShardWriter>> BeginShard(std::span<const int64_t> coords) {
    static_cast<void>(coords);
    return std::unique_ptr<ShardWriter>();
  }
  // Stores `shard`. A shard with no present slot may still be passed (it replaces an earlier,
  // flushed partial version); the sink then removes what it stored for it.
  // Called concurrently for different shards; must store each shard atomically.
  virtual Status WriteShard(const EncodedShard& shard) = 0;
  // All rows [0, rows) of dimension 0 are durably stored: the sink may publish that extent.
  virtual Status PublishRows(int64_t rows) = 0;
};

}  // namespace tessera::stream
