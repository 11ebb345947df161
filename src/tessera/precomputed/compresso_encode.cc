// Encoding labels as compresso.compress() of the PyPI package does with its defaults (format in
// compresso.h), byte for byte, so that a chunk tessera writes is the chunk cloud-volume writes.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "tessera/precomputed/compresso.h"
#include "tessera/precomputed/compresso_format.h"

namespace tessera::precomputed {
namespace {

using compresso::AppendLE;

struct Volume {
  uint64_t sx, sy, sz, sxy, voxels;
};

// The boundary section of the stream for one window shape.
struct EncodedWindows {
  std::array<uint8_t, 3> step_xyz{};
  int window_bytes = 0;
  std::vector<uint64_t> patterns;  // distinct window patterns, ascending
  std::vector<uint64_t> codes;     // run-length codes
};

// Cuts the boundary bits into windows of `step_xyz`, lists the distinct patterns and run-length
// codes each window's pattern index. compresso refuses (and the package falls back to larger
// windows) when an index does not fit a code of the window's width; then this gives nullopt.
std::optional<EncodedWindows> EncodeWindows(const std::vector<uint8_t>& boundary, const Volume& v,
                                            std::array<uint8_t, 3> step_xyz) {
  EncodedWindows out;
  out.step_xyz = step_xyz;
  const uint64_t xs = step_xyz[0], ys = step_xyz[1], zs = step_xyz[2];
  out.window_bytes = compresso::WindowBytes(static_cast<int>(xs * ys * zs));
  const uint64_t nx = (v.sx + xs - 1) / xs, ny = (v.sy + ys - 1) / ys, nz = (v.sz + zs - 1) / zs;
  std::vector<uint64_t> bits(nx * ny * nz, 0);
  for (uint64_t z = 0; z < v.sz; ++z)
    for (uint64_t y = 0; y < v.sy; ++y) {
      const uint64_t window_row = nx * (y / ys + ny * (z / zs));
      const uint64_t bit_row = xs * (y % ys + ys * (z % zs));
      const uint8_t* b = boundary.data() + v.sx * (y + v.sy * z);
      for (uint64_t x = 0; x < v.sx; ++x)
        if (b[x]) bits[window_row + x / xs] |= uint64_t{1} << (bit_row + x % xs);
    }
  out.patterns = bits;
  std::sort(out.patterns.begin(), out.patterns.end());
  out.patterns.erase(std::unique(out.patterns.begin(), out.patterns.end()), out.patterns.end());
  // Codes: 2i for one window of pattern i, 2n+1 for n windows of pattern 0; n at most max_run.
  const uint64_t max_run = (out.window_bytes == 8 ? std::numeric_limits<uint64_t>::max()
                                                  : (uint64_t{1} << (8 * out.window_bytes)) - 1) /
                           2;
  uint64_t zero_run = 0;
  for (uint64_t window_bits : bits) {
    const uint64_t index = static_cast<uint64_t>(
        std::lower_bound(out.patterns.begin(), out.patterns.end(), window_bits) - out.patterns.begin());
    if (index > max_run) return std::nullopt;
    if (index == 0) {
      if (++zero_run == max_run) {
        out.codes.push_back((zero_run << 1) | 1);
        zero_run = 0;
      }
      continue;
    }
    if (zero_run != 0) out.codes.push_back((zero_run << 1) | 1);
    zero_run = 0;
    out.codes.push_back(index << 1);
  }
  if (zero_run != 0) out.codes.push_back((zero_run << 1) | 1);
  return out;
}

template <typename T>
Bytes EncodeLabels(const uint8_t* voxels, const Volume& v) {
  const auto label = [voxels](uint64_t i) {
    T value;
    std::memcpy(&value, voxels + sizeof(T) * i, sizeof(T));
    return value;
  };
  // Boundary voxels: those differing from their +x neighbour or, else, their +y neighbour.
  std::vector<uint8_t> boundary(v.voxels, 0);
  for (uint64_t z = 0; z < v.sz; ++z)
    for (uint64_t y = 0; y < v.sy; ++y)
      for (uint64_t x = 0; x < v.sx; ++x) {
        const uint64_t i = x + v.sx * (y + v.sy * z);
        boundary[i] = (x + 1 < v.sx && label(i) != label(i + 1)) || (y + 1 < v.sy && label(i) != label(i + v.sx));
      }
  const compresso::Components components =
      compresso::LabelComponents(boundary, {v.sx, v.sy, v.sz}, /*across_slices=*/false);
  std::vector<T> ids(components.count);
  for (uint64_t i = 0; i < v.voxels; ++i)
    if (components.component[i] != 0) ids[components.component[i] - 1] = label(i);

  // Location entries for the boundary voxels whose -x and -y neighbours are boundary voxels too
  // (or absent). The -x and -y neighbours are then never candidates, and with the z index the -z
  // and +z neighbours are not used (each slice decodes alone), so entries 0, 2, 4, 5 never occur.
  std::vector<T> locations;
  std::vector<uint64_t> slice_location_begin(v.sz);
  for (uint64_t z = 0; z < v.sz; ++z) {
    slice_location_begin[z] = locations.size();
    for (uint64_t y = 0; y < v.sy; ++y)
      for (uint64_t x = 0; x < v.sx; ++x) {
        const uint64_t i = x + v.sx * (y + v.sy * z);
        if (!boundary[i] || (x > 0 && !boundary[i - 1]) || (y > 0 && !boundary[i - v.sx])) continue;
        const T value = label(i);
        if (x + 1 < v.sx && !boundary[i + 1] && label(i + 1) == value) {
          locations.push_back(1);
        } else if (y + 1 < v.sy && !boundary[i + v.sx] && label(i + v.sx) == value) {
          locations.push_back(3);
        } else if (value > std::numeric_limits<T>::max() - 7) {
          locations.push_back(6);
          locations.push_back(value);
        } else {
          locations.push_back(static_cast<T>(value + 7));
        }
      }
  }

  std::optional<EncodedWindows> windows = EncodeWindows(boundary, v, {4, 4, 1});
  if (!windows) windows = EncodeWindows(boundary, v, {8, 8, 1});  // 64-bit codes always fit

  compresso::Header h;
  h.format_version = 1;
  h.data_width = sizeof(T);
  h.size_xyz = {static_cast<uint16_t>(v.sx), static_cast<uint16_t>(v.sy), static_cast<uint16_t>(v.sz)};
  h.step_xyz = windows->step_xyz;
  h.id_count = ids.size();
  h.window_value_count = static_cast<uint32_t>(windows->patterns.size());
  h.location_count = locations.size();
  h.connectivity = 4;
  const int w = windows->window_bytes;
  const int zw = compresso::ZIndexBytes(v.sx, v.sy);
  Bytes out;
  out.reserve(compresso::kHeaderBytes + sizeof(T) * (ids.size() + locations.size()) +
              w * (windows->patterns.size() + windows->codes.size()) + 2 * zw * v.sz);
  compresso::AppendHeader(h, &out);
  for (T id : ids) AppendLE(id, sizeof(T), &out);
  for (uint64_t pattern : windows->patterns) AppendLE(pattern, w, &out);
  for (T entry : locations) AppendLE(entry, sizeof(T), &out);
  for (uint64_t code : windows->codes) AppendLE(code, w, &out);
  // z index: components per slice, then location entries used by the slice before (0 first).
  for (uint64_t count : components.count_per_slice) AppendLE(count, zw, &out);
  for (uint64_t z = 0; z < v.sz; ++z)
    AppendLE(z == 0 ? 0 : slice_location_begin[z] - slice_location_begin[z - 1], zw, &out);
  return out;
}

}  // namespace

Result<Bytes> EncodeCompresso(ByteView voxels, const std::array<int64_t, 3>& extent_xyz, DataType dtype) {
  if (dtype != DataType::kUInt8 && dtype != DataType::kUInt16 && dtype != DataType::kUInt32 &&
      dtype != DataType::kUInt64)
    return InvalidArgument("compresso: labels are uint8, uint16, uint32 or uint64, not " +
                           std::string(DataTypeName(dtype)));
  for (int d = 0; d < 3; ++d)
    if (extent_xyz[d] < 0 || extent_xyz[d] > std::numeric_limits<uint16_t>::max())
      return InvalidArgument("compresso: chunk extent " + std::string(1, "xyz"[d]) + " is " +
                             std::to_string(extent_xyz[d]) + ", expected 0..65535 (the header's u16)");
  Volume v;
  v.sx = static_cast<uint64_t>(extent_xyz[0]);
  v.sy = static_cast<uint64_t>(extent_xyz[1]);
  v.sz = static_cast<uint64_t>(extent_xyz[2]);
  v.sxy = v.sx * v.sy;
  v.voxels = v.sxy * v.sz;
  const size_t item = ItemSize(dtype);
  if (voxels.size() != v.voxels * item)
    return InvalidArgument("compresso: got " + std::to_string(voxels.size()) + " bytes of voxels, expected " +
                           std::to_string(v.voxels * item));
  if (v.voxels == 0) {  // the package writes a bare version-0 header for an empty array
    compresso::Header h;
    h.data_width = static_cast<uint8_t>(item);
    h.size_xyz = {static_cast<uint16_t>(v.sx), static_cast<uint16_t>(v.sy), static_cast<uint16_t>(v.sz)};
    h.step_xyz = {4, 4, 1};
    h.connectivity = 4;
    Bytes out;
    compresso::AppendHeader(h, &out);
    return out;
  }
  if (v.voxels > std::numeric_limits<uint32_t>::max())
    return Unsupported("compresso: chunks of 2^32 voxels and more are not supported (" + std::to_string(v.voxels) +
                       " voxels)");
  switch (item) {
    case 1: return EncodeLabels<uint8_t>(voxels.data(), v);
    case 2: return EncodeLabels<uint16_t>(voxels.data(), v);
    case 4: return EncodeLabels<uint32_t>(voxels.data(), v);
    default: return EncodeLabels<uint64_t>(voxels.data(), v);
  }
}

}  // namespace tessera::precomputed
