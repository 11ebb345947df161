// One encoded tile (inner chunk), as the encoders produce it and the sinks receive it.
#pragma once

#include "tessera/core/bytes.h"

namespace tessera::stream {

// `present` false: the tile holds only the fill value (or was not written yet) and is stored as
// an empty slot; `bytes` is then meaningless. A present tile's bytes are its full encoding (in
// practice never empty: every encoding of at least one element has at least one byte, but a
// sink must go by `present`, not by the size). Writers recycle these buffers (swap, mark
// absent) instead of freeing them.
struct EncodedTile {
  Bytes bytes;
  bool present = false;
};

}  // namespace tessera::stream
