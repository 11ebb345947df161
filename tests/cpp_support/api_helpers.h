// Helpers shared by the façade's tests (test-only; not part of the library).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tessera/spec/array_spec.h"

namespace tessera::api_test {

// A uint16 array spec: shape (shape[0] = 0: unbounded), chunk shape, chunks per shard (empty: unsharded).
inline ArraySpec Uint16(std::vector<int64_t> shape, std::vector<int64_t> chunks, std::vector<int64_t> shards = {}) {
  ArraySpec s;
  s.dtype = DataType::kUInt16;
  s.shape = std::move(shape);
  s.chunk_shape = std::move(chunks);
  s.shard_chunks = std::move(shards);
  return s;
}

}  // namespace tessera::api_test
