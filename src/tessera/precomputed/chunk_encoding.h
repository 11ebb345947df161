// One precomputed chunk's bytes <-> its voxels, shared by the volume reader and the stream
// writer: the scale's chunk encoding (any of info.h's kChunkEncodings) over a chunk that may be
// truncated at the volume's upper bound, plus the copy between a truncated chunk and the full,
// padded chunk the hyperslab engine and the stream pipeline work with.
#pragma once

#include <array>
#include <string>

#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/core/status.h"
#include "tessera/precomputed/info.h"

namespace tessera::precomputed {

// `voxels`: C order [channels, z, y, x] of `extent_xyz`. Raw encoding returns the bytes as they are;
// jpeg and png make one image (image_codecs.h), the label encodings their streams.
Result<Bytes> EncodeChunk(const ScaleInfo& scale, int64_t channels, DataType dtype,
                          const std::array<int64_t, 3>& extent_xyz, Bytes voxels);
// The inverse; kCorruptData naming `where` when the decoded size does not match the extent.
// A chunk cut by the volume's end along z (extent z below the scale's chunk z) may hold more rows
// than the extent, up to a whole chunk: the chunk a continued scale (mode a) stores just before
// its info gives the larger size, which a crash in between leaves. Its first rows are the
// extent's, returned as such.
Result<Bytes> DecodeChunk(const ScaleInfo& scale, int64_t channels, DataType dtype,
                          const std::array<int64_t, 3>& extent_xyz, Bytes stored, const std::string& where);

// Copies the [channels, extent z, y, x] corner between a dense `extent_xyz` box and a full chunk of
// `chunk_xyz` (both C order [c, z, y, x], `item` bytes per voxel). to_full = false crops.
void CopyChunkCorner(const std::array<int64_t, 3>& extent_xyz, const std::array<int64_t, 3>& chunk_xyz,
                     int64_t channels, int64_t item, const uint8_t* src, uint8_t* dst, bool to_full);

}  // namespace tessera::precomputed
