#include "tessera/stream/tile_encoder.h"

#include <bit>
#include <utility>
#include <vector>

#include "tessera/codec/bytes_codec.h"

namespace tessera::stream {
namespace {

bool IsIdentityChain(const CodecChain& chain, DataType dtype) {
  static_assert(std::endian::native == std::endian::little, "tessera assumes a little-endian host");
  if (!chain.array_to_array.empty() || !chain.bytes_to_bytes.empty()) return false;
  const auto* bytes = dynamic_cast<const BytesCodec*>(chain.array_to_bytes.get());
  if (!bytes) return false;
  return ItemSize(dtype) == 1 || bytes->endian().value_or(Endian::kLittle) == Endian::kLittle;
}

}  // namespace

CodecChainTileEncoder::CodecChainTileEncoder(CodecChain chain, ChunkSpec tile_spec)
    : chain_(std::move(chain)), tile_spec_(std::move(tile_spec)), identity_(IsIdentityChain(chain_, tile_spec_.dtype)) {}

Status CodecChainTileEncoder::Encode(const int64_t*, ByteView tile, Bytes* out) const {
  return chain_.Encode(tile_spec_, tile, out);
}

std::shared_ptr<const CodecChainTileEncoder> MakeTileEncoder(CodecChain chain, const StreamLayout& layout,
                                                             FillValue fill) {
  ChunkSpec spec{layout.dtype, std::vector<int64_t>(layout.tile_shape, layout.tile_shape + layout.rank), std::move(fill)};
  return std::make_shared<const CodecChainTileEncoder>(std::move(chain), std::move(spec));
}

}  // namespace tessera::stream
