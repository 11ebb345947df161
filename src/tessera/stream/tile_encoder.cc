#include "tessera/stream/tile_encoder.h"

#include <utility>
#include <vector>

namespace tessera::stream {

CodecChainTileEncoder::CodecChainTileEncoder(CodecChain chain, ChunkSpec tile_spec)
    : chain_(std::move(chain)), tile_spec_(std::move(tile_spec)), identity_(chain_.IsIdentity(tile_spec_.dtype)) {}

Status CodecChainTileEncoder::Encode(const int64_t*, ByteView tile, Bytes* out) const {
  return chain_.Encode(tile_spec_, tile, out);
}

std::shared_ptr<const CodecChainTileEncoder> MakeTileEncoder(CodecChain chain, const StreamLayout& layout,
                                                             FillValue fill) {
  ChunkSpec spec{layout.dtype, std::vector<int64_t>(layout.tile_shape, layout.tile_shape + layout.rank), std::move(fill)};
  return std::make_shared<const CodecChainTileEncoder>(std::move(chain), std::move(spec));
}

}  // namespace tessera::stream
