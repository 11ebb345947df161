// One encoded tile (inner chunk), as the encoders produce it and the sinks receive it.
#pragma once

#include <cstdint>
#include <span>

#include "tessera/core/bytes.h"

namespace tessera::stream {

// `present` false: the tile holds only the fill value (or was not written yet) and is stored as
// an empty slot; its encoding is then meaningless. A present tile's encoding() is its full
// encoding (in practice never empty: every encoding of at least one element has at least one
// byte, but a sink must go by `present`, not by the size). The encoding is either owned (`bytes`)
// or borrowed: the identity encoding of a tile that still sits in the writer's epoch buffer, or
// an encoding the writer copied over its tile's input there, valid until the shard holding the
// tile has been handed to the sink (sinks that keep data longer copy it). Writers recycle the
// owned buffers (swap, mark absent) instead of freeing them.
struct EncodedTile {
  Bytes bytes;
  bool present = false;
  ByteView borrowed;  // when non-empty, the encoding instead of `bytes`

  ByteView encoding() const { return borrowed.empty() ? ByteView(bytes) : borrowed; }
};

// The bytes the present tiles of `tiles` store.
inline int64_t StoredBytes(std::span<const EncodedTile> tiles) {
  int64_t n = 0;
  for (const EncodedTile& t : tiles)
    if (t.present) n += static_cast<int64_t>(t.encoding().size());
  return n;
}

}  // namespace tessera::stream
