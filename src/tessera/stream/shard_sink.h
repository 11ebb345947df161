// Where the streaming writer's complete shards go: one implementation per format.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tessera/codec/sharding_codec.h"
#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera::stream {

class ShardSink {
 public:
  virtual ~ShardSink() = default;
  // Stores shard `shard_coords` (one coordinate per array dimension). `chunks` holds the encoded
  // inner chunks that are present, in slot order; `index` gives, per slot (row-major over
  // tiles_per_shard), the (offset, nbytes) of that slot's bytes relative to the start of the
  // concatenated `chunks`, or empty. A shard with no chunks at all may still be called (it
  // replaces an earlier partial version); the sink then removes the object.
  // Called concurrently for different shards; must store each shard atomically.
  virtual Status WriteShard(const std::vector<int64_t>& shard_coords, std::span<const ByteView> chunks,
                            const ShardIndex& index) = 0;
  // All rows [0, rows) of dimension 0 are durably stored: the sink may publish that extent.
  virtual Status PublishRows(int64_t rows) = 0;
};

}  // namespace tessera::stream
