// The compresso chunk encoding of Neuroglancer precomputed segmentation (one channel of
// uint8/16/32/64 labels), the stream format of seung-lab/compresso (format versions 0 and 1),
// pure: bytes in, voxels out.
//
// The idea. Labels change rarely, so the stream stores *where* they change and not what they are:
//   - a voxel is a boundary voxel when its label differs from its +x neighbour, or else from its
//     +y neighbour (or else, with connectivity 6, from its +z neighbour);
//   - the boundary bits are cut into windows of xstep*ystep*zstep voxels (4x4x1 by default, bit
//     x + xstep*(y + ystep*z) of a window), the distinct window patterns are listed once (sorted)
//     and each window names its pattern by index, those indices run-length coded;
//   - the non-boundary voxels fall into connected components (4-connected within each z slice, or
//     6-connected in 3D), numbered 1, 2, ... in the order their first voxel appears in a raster
//     scan (x fastest, then y, then z); the stream lists each component's label;
//   - a boundary voxel takes its -x neighbour's label when that is not a boundary voxel, else its
//     -y neighbour's (else, connectivity 6, its -z neighbour's); the rest, in raster order, read one
//     instruction each from the "locations" list: 0..5 = copy from the -x, +x, -y, +y, -z, +z
//     neighbour, 6 = the label is the next entry, v >= 7 = the label is v - 7.
//
// The stream (all integers little endian):
//   header     36 bytes: "cpso", u8 format_version (0, or 1 with the z index), u8 data_width (label
//              bytes: 1, 2, 4, 8), u16 sx, sy, sz, u8 xstep, ystep, zstep (product 1..64),
//              u64 id_size, u32 value_size, u64 location_size, u8 connectivity (4 or 6)
//   ids        id_size labels of data_width bytes: component k's label at index k - 1
//   values     value_size window patterns of W bytes, W the smallest of 1, 2, 4, 8 holding
//              xstep*ystep*zstep bits
//   locations  location_size entries of data_width bytes
//   windows    the rest (less the z index), W-byte codes over the nx*ny*nz windows in raster
//              order (x fastest): an even code 2i is one window with pattern i, an odd code 2n+1
//              is n windows with pattern 0
//   z index    version 1 only: sz per-slice component counts, then sz location counts shifted by
//              one slice (entry 0 is 0, entry z is how many location entries slice z - 1 used),
//              each I bytes, I the smallest of 1, 2, 4, 8 whose maximum exceeds 2*sx*sy
//
// Memory layout. compresso works on a Fortran-order numpy array of shape (sx, sy, sz): x varies
// fastest, i.e. voxel (x, y, z) at x + sx*(y + sy*z). That is tessera's C order [z][y][x] of the
// chunk, so voxels come out in the same order precomputed's raw encoding stores them.
//
// Label width. A stream whose data_width is narrower than the volume's dtype decodes with its
// labels zero-extended (what cloud-volume does when it copies the decoded array into the
// volume's dtype; no writer we know makes such streams, but widening loses nothing). A wider
// stream is kCorruptData: narrowing would silently change labels (cloud-volume wraps them,
// Neuroglancer rejects the chunk for its size).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/core/status.h"

namespace tessera::precomputed {

// Decodes one compresso chunk of `extent_xyz` voxels (x, y, z) into C order [z][y][x] little-endian
// labels of `dtype` (uint8/16/32/64; anything else is kInvalidArgument). Everything in the stream
// is checked before use: the magic, the format version, the header's sizes against `extent_xyz`
// and its data width against `dtype`, every section length, run, pattern index, instruction and
// the z index against what the decoding finds; any mismatch is kCorruptData naming `where` and
// the byte range or field at fault. Beyond what decoding needs, what compresso's encoder always
// makes consistent is required too (the reference decoder is laxer): exactly one id per
// component, every location entry used, runs covering exactly the windows (none of length 0), a
// copy instruction naming a neighbour that is no boundary voxel, no z index with connectivity 6.
// Work and memory are bounded by the extent and the stream length. Chunks of 2^32 voxels and
// more are kUnsupported.
Result<Bytes> DecodeCompresso(ByteView stored, const std::array<int64_t, 3>& extent_xyz, DataType dtype,
                              const std::string& where);

// Encodes `voxels` (C order [z][y][x] labels of `dtype`, `extent_xyz` each at most 65535) as
// compresso.compress(labels) of the PyPI package does with its defaults, byte for byte: steps
// 4x4x1 (8x8x1 when there are more than 32768 distinct 4x4 patterns), connectivity 4, format
// version 1 with the z index; an empty extent gives the bare header (format version 0).
Result<Bytes> EncodeCompresso(ByteView voxels, const std::array<int64_t, 3>& extent_xyz, DataType dtype);

}  // namespace tessera::precomputed
