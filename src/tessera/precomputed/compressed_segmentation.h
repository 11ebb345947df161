// Neuroglancer's compressed_segmentation chunk encoding for uint32 / uint64 labels (pure, no I/O).
//
//   file     = num_channels x u32le channel offsets (in 32-bit words from the file start; the
//              first is num_channels), then each channel's data
//   channel  = gx*gy*gz block headers of 8 bytes, block (x, y, z) at 8 * (x + gx * (y + gy * z)),
//              then per block its packed values and its lookup table (tables may be shared)
//   header   = lookupTableOffset (24 bits) | encodedBits (8 bits) << 24, encodedValuesOffset (32
//              bits); offsets in 32-bit words from the start of the channel's data
//   values   = encodedBits bits per position, position (x, y, z) of a block at bit
//              encodedBits * (x + bx * (y + by * z)), packed little endian into u32 words
// encodedBits is the smallest of 0, 1, 2, 4, 8, 16, 32 that indexes the block's distinct values.
// Blocks past the volume's upper bound are padded (padding positions use lookup index 0).
//
// Arrays here are tessera C order [channel, z, y, x]; sizes are given (x, y, z) as in the format.
#pragma once

#include <array>
#include <cstdint>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"

namespace tessera::precomputed {

struct SegmentationGeometry {
  std::array<int64_t, 3> volume_xyz{};  // chunk extent (x, y, z)
  std::array<int64_t, 3> block_xyz{};   // compression block size (x, y, z)
  int64_t num_channels = 1;
  int label_bytes = 4;                  // 4 (uint32) or 8 (uint64)
};

// `labels` holds num_channels * z * y * x little-endian labels.
Result<Bytes> EncodeCompressedSegmentation(const SegmentationGeometry& g, ByteView labels);
// Decodes into *labels (resized). kCorruptData naming `where` and the offending byte range for
// offsets outside the data, bad bit widths or a short file.
Status DecodeCompressedSegmentation(const SegmentationGeometry& g, ByteView encoded, Bytes* labels,
                                    const std::string& where);

}  // namespace tessera::precomputed
