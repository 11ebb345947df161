// The compresso stream's fixed parts, shared by its decoder and encoder (see compresso.h for the
// format): the 36-byte header, the widths of windows and z-index entries, little-endian integers
// of a width chosen at run time, and the connected components of the non-boundary voxels.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tessera/core/bytes.h"

namespace tessera::precomputed::compresso {

inline constexpr size_t kHeaderBytes = 36;
inline constexpr uint8_t kMagic[4] = {'c', 'p', 's', 'o'};

// Header fields as stored; nothing here is validated.
struct Header {
  uint8_t format_version = 0;
  uint8_t data_width = 0;                   // label bytes
  std::array<uint16_t, 3> size_xyz{};       // sx, sy, sz
  std::array<uint8_t, 3> step_xyz{};        // xstep, ystep, zstep
  uint64_t id_count = 0;                    // id_size
  uint32_t window_value_count = 0;          // value_size
  uint64_t location_count = 0;              // location_size
  uint8_t connectivity = 0;                 // 4 or 6
};

// `stored` holds at least kHeaderBytes; magic not checked.
Header ReadHeader(const uint8_t* stored);
// Appends the 36 header bytes (with the magic) to *out.
void AppendHeader(const Header& header, Bytes* out);

// Bytes of one window pattern for `window_voxels` = xstep*ystep*zstep bits (1..64): 1, 2, 4 or 8.
int WindowBytes(int window_voxels);
// Bytes of one z-index entry: the smallest width whose maximum exceeds 2*sx*sy.
int ZIndexBytes(uint64_t sx, uint64_t sy);

// `width` (1, 2, 4, 8) little-endian bytes at p.
inline uint64_t LoadLE(const uint8_t* p, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline void AppendLE(uint64_t v, int width, Bytes* out) {
  for (int i = 0; i < width; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// The connected components of the voxels where boundary[i] == 0, over a volume of sx*sy*sz voxels
// (x fastest, fewer than 2^32): 4-connected within each z slice (across_slices false) or
// 6-connected (true). component[i] is 0 on boundary voxels, else the component's number, numbered
// from 1 in the order each component's first voxel comes in the raster scan.
struct Components {
  std::vector<uint32_t> component;         // one per voxel
  uint64_t count = 0;
  std::vector<uint64_t> count_per_slice;   // components whose first voxel lies in slice z
};
Components LabelComponents(const std::vector<uint8_t>& boundary, const std::array<uint64_t, 3>& size_xyz,
                           bool across_slices);

}  // namespace tessera::precomputed::compresso
