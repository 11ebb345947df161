// The one interface through which the streaming writer's CPU pipeline encodes a tile (inner
// chunk). Implementations:
//   CodecChainTileEncoder   a Zarr codec chain over the padded tile (Zarr, HDF5 without filters);
//                           when the chain is the identity (little-endian bytes, nothing else)
//                           it gathers in place: the gathered tile is its own encoding
//   PrecomputedTileEncoder  (precomputed/) crops the tile to the volume, raw or
//                           compressed_segmentation, then gzip
//   FilterTileEncoder       (hdf5/) the dataset's filter pipeline
// The CUDA backend encodes whole epochs (EpochEncoder) instead; it takes its codec description
// from a CodecChainTileEncoder's chain() and supports no other encoder.
#pragma once

#include <cstdint>
#include <memory>

#include "tessera/codec/codec.h"
#include "tessera/core/bytes.h"
#include "tessera/core/status.h"
#include "tessera/stream/layout.h"

namespace tessera::stream {

// Thread-safe: Encode is called concurrently from the writer's threads, on different tiles.
class TileEncoder {
 public:
  virtual ~TileEncoder() = default;
  // Replaces *out with the encoding of `tile`: the full tile, C order, padded with the fill value
  // past the array. `tile_coords`: the tile's grid coordinates (rank entries; dimension 0 counts
  // tiles along dimension 0 from the start of the stream). Never called for a tile that holds only
  // the fill value (it is stored as an empty slot) or when gathers_in_place() is true.
  virtual Status Encode(const int64_t* tile_coords, ByteView tile, Bytes* out) const = 0;
  // True when every tile's encoding is the padded tile itself. The writer then gathers each tile
  // straight into its output buffer and does not call Encode (no copy: the throughput path for
  // uncompressed streams); Encode must still give that result if called.
  virtual bool gathers_in_place() const { return false; }
  // The codec chain this encoder applies to every tile, for backends that implement the chain
  // themselves (MakeCudaEpochEncoder); null when the encoding depends on more than the chain
  // (precomputed crops edge tiles first), which keeps such streams on the CPU.
  virtual const CodecChain* codec_chain() const { return nullptr; }
};

// A codec chain applied to each tile of `tile_spec` (the tile shape, dtype and fill value).
class CodecChainTileEncoder final : public TileEncoder {
 public:
  CodecChainTileEncoder(CodecChain chain, ChunkSpec tile_spec);

  Status Encode(const int64_t* tile_coords, ByteView tile, Bytes* out) const override;
  // True for an identity chain: no array->array or bytes->bytes codecs and a bytes codec in this
  // (little-endian) host's byte order (or a 1-byte type).
  bool gathers_in_place() const override { return identity_; }

  const CodecChain* codec_chain() const override { return &chain_; }
  const ChunkSpec& tile_spec() const { return tile_spec_; }

 private:
  const CodecChain chain_;
  const ChunkSpec tile_spec_;
  const bool identity_;
};

// The codec-chain encoder for the tiles of `layout` (its dtype and tile shape) with `fill`.
std::shared_ptr<const CodecChainTileEncoder> MakeTileEncoder(CodecChain chain, const StreamLayout& layout,
                                                             FillValue fill);

}  // namespace tessera::stream
