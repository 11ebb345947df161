// The seam between the streaming writer and a compute backend that encodes a whole epoch at
// once (the CUDA backend). The CPU backend is fused into StreamWriter (gather + encode per tile
// through a TileEncoder, shard written as soon as its last tile is done) and does not go through
// this interface.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "tessera/codec/codec.h"
#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/core/status.h"
#include "tessera/stream/encoded_tile.h"
#include "tessera/stream/layout.h"

namespace tessera::stream {

class EpochEncoder {
 public:
  virtual ~EpochEncoder() = default;
  // Takes one epoch: `epoch` holds `rows` rows (1..epoch_rows) of the array, row-major, shape
  // (epoch_rows, shape[1..]); rows past `rows` are padding. The input has been copied when this
  // returns (the buffer may be refilled). An encoder may batch several epochs before encoding
  // them (more tiles per compression call): Ready() says when Collect would not need more input.
  virtual Status Submit(const uint8_t* epoch, int64_t rows) = 0;
  // True when the oldest submitted epoch that is not collected yet is encoded or being encoded.
  virtual bool Ready() const = 0;
  // Finishes the oldest submitted, uncollected epoch (encoding a partial batch if need be) and
  // fills tiles[i] (tile order, row-major over tile_count[1..]) exactly as the CPU backend would
  // decide presence: a tile whose every element equals the fill value is absent.
  virtual Status Collect(std::span<EncodedTile> tiles) = 0;
  // The backend's own memory plan (device and pinned host buffers), one line per buffer.
  virtual std::string DescribeMemoryPlan() const = 0;
  // The writer's epoch buffers (each `bytes` long), which Submit's `epoch` always points into:
  // a backend may pin them for direct DMA. They stay mapped until the encoder is destroyed.
  virtual void PinInputBuffer(uint8_t* data, size_t bytes) {}
};

enum class Backend { kCpu, kCuda };

Result<Backend> ParseBackend(const std::string& name);

// The CUDA backend for `layout` with `tile_codecs` (bytes little-endian, optionally followed by
// zstd or gzip). StreamWriter passes its tile encoder's codec_chain(): the GPU implements
// that description itself; an encoder without one has no GPU backend. kUnsupported with the
// reason when this build has no CUDA support, there is no device, or the codec has no GPU
// implementation.
// `threads`: host threads for the copy of encoded tiles out of the pinned download buffer.
Result<std::unique_ptr<EpochEncoder>> MakeCudaEpochEncoder(const StreamLayout& layout, const CodecChain& tile_codecs,
                                                           const FillValue& fill, int threads);

// Whether this build was compiled with the CUDA backend (nvcc and nvcomp found at configure time).
bool CudaBackendCompiled();

}  // namespace tessera::stream
