// The input of the image chunk targets (jpeg, png, jxl): 5 header bytes, then the stored chunk.
// Bytes 0-2 choose the chunk's extent x, y, z (1..32), byte 3 how much longer along z the scale's
// chunk is (0..3: a continuation's edge chunk), byte 4 what the target reads from it (channels,
// sample width). fuzz/make_seeds.py writes this header before each seed chunk.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "tessera/core/bytes.h"
#include "tessera/precomputed/info.h"

namespace tessera::fuzz {

struct ImageChunkInput {
  precomputed::ScaleInfo scale;
  std::array<int64_t, 3> extent{};
  uint8_t kind = 0;  // header byte 4
  Bytes stored;
};

inline std::optional<ImageChunkInput> ParseImageChunkInput(const uint8_t* data, size_t size,
                                                           precomputed::ChunkEncoding encoding) {
  if (size < 5) return std::nullopt;
  ImageChunkInput in;
  in.scale.encoding = encoding;
  in.extent = {1 + data[0] % 32, 1 + data[1] % 32, 1 + data[2] % 32};
  in.scale.chunk_size = {in.extent[0], in.extent[1], in.extent[2] + data[3] % 4};
  in.kind = data[4];
  in.stored.assign(data + 5, data + size);
  return in;
}

}  // namespace tessera::fuzz
