// Decoding a compresso stream (format in compresso.h). Every field is checked before it is used,
// and everything the encoder always makes consistent is checked too (section lengths, runs that
// cover exactly the windows, one label per component, every location entry used, the z index),
// so a damaged stream is an error rather than wrong labels.
#include "tessera/precomputed/compresso.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "tessera/precomputed/compresso_format.h"

namespace tessera::precomputed {
namespace {

using compresso::Header;
using compresso::LoadLE;

// The stream being decoded and where it came from, for messages.
struct Stream {
  ByteView bytes;
  const std::string& where;

  Status Corrupt(const std::string& what) const {
    return CorruptData(where + ": compresso " + what + " (stream is " + std::to_string(bytes.size()) + " bytes)");
  }
  Status Corrupt(const std::string& what, uint64_t begin, uint64_t end) const {
    return Corrupt(what + " at " + ByteRangeText(begin, end));
  }
};

// Byte offsets of the stream's sections: [ids, values) ids, [values, locations) window patterns,
// [locations, windows) location entries, [windows, z_index) window codes, [z_index, end) z index.
struct Sections {
  uint64_t ids = compresso::kHeaderBytes, values = 0, locations = 0, windows = 0, z_index = 0, end = 0;
  int window_bytes = 0;   // bytes of one window pattern or code
  int z_index_bytes = 0;  // bytes of one z-index entry (format version 1)
};

struct Volume {
  uint64_t sx, sy, sz, sxy, voxels;
};

Status CheckArguments(const std::array<int64_t, 3>& extent_xyz, DataType dtype) {
  if (dtype != DataType::kUInt8 && dtype != DataType::kUInt16 && dtype != DataType::kUInt32 &&
      dtype != DataType::kUInt64)
    return InvalidArgument("compresso: labels are uint8, uint16, uint32 or uint64, not " +
                           std::string(DataTypeName(dtype)));
  for (int d = 0; d < 3; ++d)
    if (extent_xyz[d] < 0)
      return InvalidArgument("compresso: chunk extent " + std::string(1, "xyz"[d]) + " is " +
                             std::to_string(extent_xyz[d]) + ", expected >= 0");
  return Status::Ok();
}

// The header's own fields and their agreement with the chunk the caller expects.
Status CheckHeader(const Stream& s, const Header& h, const std::array<int64_t, 3>& extent_xyz, DataType dtype) {
  if (std::memcmp(s.bytes.data(), compresso::kMagic, 4) != 0)
    return s.Corrupt("stream does not start with the magic \"cpso\"", 0, 4);
  if (h.format_version > 1)
    return s.Corrupt("format version " + std::to_string(h.format_version) + " (versions 0 and 1 exist)", 4, 5);
  if (h.data_width != 1 && h.data_width != 2 && h.data_width != 4 && h.data_width != 8)
    return s.Corrupt("data width " + std::to_string(h.data_width) + " (expected 1, 2, 4 or 8 bytes)", 5, 6);
  if (h.data_width > ItemSize(dtype))
    return s.Corrupt("labels of " + std::to_string(h.data_width) + " bytes do not fit the volume's " +
                         std::string(DataTypeName(dtype)),
                     5, 6);
  for (int d = 0; d < 3; ++d) {
    if (h.size_xyz[d] != extent_xyz[d])
      return s.Corrupt("header's s" + std::string(1, "xyz"[d]) + " " + std::to_string(h.size_xyz[d]) +
                           " differs from the chunk's extent " + std::to_string(extent_xyz[d]),
                       6 + 2 * d, 8 + 2 * d);
  }
  const int window_voxels = h.step_xyz[0] * h.step_xyz[1] * h.step_xyz[2];
  if (window_voxels < 1 || window_voxels > 64)
    return s.Corrupt("window steps " + std::to_string(h.step_xyz[0]) + "x" + std::to_string(h.step_xyz[1]) + "x" +
                         std::to_string(h.step_xyz[2]) + " (expected each >= 1, at most 64 voxels)",
                     12, 15);
  if (h.connectivity != 4 && h.connectivity != 6)
    return s.Corrupt("connectivity " + std::to_string(h.connectivity) + " (expected 4 or 6)", 35, 36);
  if (h.format_version == 1 && h.connectivity == 6)
    return s.Corrupt("format version 1 (z index) with connectivity 6, which has no z index", 4, 36);
  return Status::Ok();
}

// Places the sections after the header; each must fit in the stream, the windows take what is left.
Result<Sections> LocateSections(const Stream& s, const Header& h, const Volume& v) {
  Sections sec;
  sec.window_bytes = compresso::WindowBytes(h.step_xyz[0] * h.step_xyz[1] * h.step_xyz[2]);
  const uint64_t size = s.bytes.size();
  uint64_t at = compresso::kHeaderBytes;
  const auto take = [&](uint64_t count, uint64_t unit, const char* name, uint64_t* begin) -> Status {
    *begin = at;
    if (count > (size - at) / unit)
      return s.Corrupt(std::string(name) + " " + std::to_string(count) + " (x " + std::to_string(unit) +
                       " bytes) runs past the stream's end from byte " + std::to_string(at));
    at += count * unit;
    return Status::Ok();
  };
  TESSERA_RETURN_IF_ERROR(take(h.id_count, h.data_width, "id_size", &sec.ids));
  TESSERA_RETURN_IF_ERROR(take(h.window_value_count, sec.window_bytes, "value_size", &sec.values));
  TESSERA_RETURN_IF_ERROR(take(h.location_count, h.data_width, "location_size", &sec.locations));
  sec.windows = at;
  uint64_t z_index_entries = 0;
  if (h.format_version == 1) {
    sec.z_index_bytes = compresso::ZIndexBytes(v.sx, v.sy);
    z_index_entries = 2 * v.sz;
  }
  if (z_index_entries * sec.z_index_bytes > size - at)
    return s.Corrupt("z index of " + std::to_string(z_index_entries * sec.z_index_bytes) +
                     " bytes does not fit after the location entries", at, size);
  sec.z_index = size - z_index_entries * sec.z_index_bytes;
  sec.end = size;
  if ((sec.z_index - sec.windows) % sec.window_bytes != 0)
    return s.Corrupt("window codes are not a whole number of " + std::to_string(sec.window_bytes) + "-byte codes",
                     sec.windows, sec.z_index);
  return sec;
}

// Run-length decodes the window codes into each window's pattern (a bit per voxel).
Result<std::vector<uint64_t>> DecodeWindows(const Stream& s, const Header& h, const Sections& sec, uint64_t windows) {
  const int w = sec.window_bytes;
  std::vector<uint64_t> pattern_bits(h.window_value_count);
  for (uint64_t p = 0; p < pattern_bits.size(); ++p) pattern_bits[p] = LoadLE(s.bytes.data() + sec.values + w * p, w);
  std::vector<uint64_t> bits(windows, pattern_bits[0]);  // a run fills with pattern 0
  uint64_t filled = 0;
  for (uint64_t at = sec.windows; at < sec.z_index; at += w) {
    const uint64_t code = LoadLE(s.bytes.data() + at, w);
    if (code & 1) {
      const uint64_t run = code >> 1;
      if (run == 0) return s.Corrupt("run of 0 windows", at, at + w);  // never written; rejected
      if (run > windows - filled)
        return s.Corrupt("run of " + std::to_string(run) + " windows passes the last of " + std::to_string(windows) +
                             " windows",
                         at, at + w);
      filled += run;
      continue;
    }
    const uint64_t pattern = code >> 1;
    if (filled == windows) return s.Corrupt("window code after the last window", at, at + w);
    if (pattern >= pattern_bits.size())
      return s.Corrupt("window pattern " + std::to_string(pattern) + " of " + std::to_string(pattern_bits.size()),
                       at, at + w);
    bits[filled++] = pattern_bits[pattern];
  }
  if (filled != windows)
    return s.Corrupt("window codes cover " + std::to_string(filled) + " of " + std::to_string(windows) + " windows",
                     sec.windows, sec.z_index);
  return bits;
}

// One byte per voxel, 1 on boundary voxels, from the windows' patterns.
std::vector<uint8_t> ExpandBoundaries(const std::vector<uint64_t>& window_bits, const Header& h, const Volume& v) {
  const uint64_t xs = h.step_xyz[0], ys = h.step_xyz[1], zs = h.step_xyz[2];
  const uint64_t nx = (v.sx + xs - 1) / xs, ny = (v.sy + ys - 1) / ys;
  std::vector<uint8_t> boundary(v.voxels);
  uint8_t* out = boundary.data();
  for (uint64_t z = 0; z < v.sz; ++z) {
    for (uint64_t y = 0; y < v.sy; ++y) {
      const uint64_t* window = window_bits.data() + nx * (y / ys + ny * (z / zs));
      const uint64_t bit_row = xs * (y % ys + ys * (z % zs));
      for (uint64_t x0 = 0; x0 < v.sx; x0 += xs, ++window) {
        const uint64_t row_bits = *window >> bit_row;
        const uint64_t width = std::min(xs, v.sx - x0);
        for (uint64_t dx = 0; dx < width; ++dx) *out++ = static_cast<uint8_t>((row_bits >> dx) & 1);
      }
    }
  }
  return boundary;
}

std::string VoxelText(uint64_t x, uint64_t y, uint64_t z) {
  return "voxel (x " + std::to_string(x) + ", y " + std::to_string(y) + ", z " + std::to_string(z) + ")";
}

template <typename T>
void Store(uint8_t* out, uint64_t i, T label) { std::memcpy(out + sizeof(T) * i, &label, sizeof(T)); }
template <typename T>
T Load(const uint8_t* out, uint64_t i) {
  T label;
  std::memcpy(&label, out + sizeof(T) * i, sizeof(T));
  return label;
}

// Labels every voxel into `out` (T per voxel, host order = little endian): components from the
// ids, boundary voxels from a neighbour or the location entries. Records where each slice's
// location entries begin, for the z index.
template <typename T>
Status DecodeLabels(const Stream& s, const Header& h, const Sections& sec, const Volume& v,
                    const std::vector<uint8_t>& boundary, const compresso::Components& components, uint8_t* out,
                    std::vector<uint64_t>* slice_location_begin) {
  const uint8_t* data = s.bytes.data();
  const int dw = h.data_width;
  // Component c's label at label_of[c]; label_of[0] (boundary voxels) is overwritten below.
  std::vector<T> label_of(h.id_count + 1, 0);
  for (uint64_t c = 1; c <= h.id_count; ++c) label_of[c] = static_cast<T>(LoadLE(data + sec.ids + dw * (c - 1), dw));
  const uint32_t* component = components.component.data();
  for (uint64_t i = 0; i < v.voxels; ++i) Store<T>(out, i, label_of[component[i]]);
  const bool six = h.connectivity == 6;
  uint64_t next = 0;  // next location entry
  for (uint64_t z = 0; z < v.sz; ++z) {
    (*slice_location_begin)[z] = next;
    for (uint64_t y = 0; y < v.sy; ++y) {
      for (uint64_t x = 0; x < v.sx; ++x) {
        const uint64_t i = x + v.sx * (y + v.sy * z);
        if (!boundary[i]) continue;
        if (x > 0 && !boundary[i - 1]) {
          Store<T>(out, i, Load<T>(out, i - 1));
          continue;
        }
        if (y > 0 && !boundary[i - v.sx]) {
          Store<T>(out, i, Load<T>(out, i - v.sx));
          continue;
        }
        if (six && z > 0 && !boundary[i - v.sxy]) {
          Store<T>(out, i, Load<T>(out, i - v.sxy));
          continue;
        }
        const uint64_t entry_at = sec.locations + dw * next;
        if (next == h.location_count)
          return s.Corrupt("location entries (location_size " + std::to_string(h.location_count) + ") run out at " +
                           VoxelText(x, y, z));
        const uint64_t code = LoadLE(data + entry_at, dw);
        ++next;
        if (code >= 7) {
          Store<T>(out, i, static_cast<T>(code - 7));
          continue;
        }
        if (code == 6) {
          if (next == h.location_count)
            return s.Corrupt("location entry 6 (a label follows) is the last entry", entry_at, entry_at + dw);
          Store<T>(out, i, static_cast<T>(LoadLE(data + entry_at + dw, dw)));
          ++next;
          continue;
        }
        // 0..5: copy the -x, +x, -y, +y, -z, +z neighbour, which must be inside the chunk and not
        // a boundary voxel (the encoder only names those; a boundary voxel may not be decoded yet).
        const int axis = static_cast<int>(code / 2);
        const bool forward = code % 2 == 1;
        const uint64_t coord[3] = {x, y, z}, extent[3] = {v.sx, v.sy, v.sz}, stride[3] = {1, v.sx, v.sxy};
        const bool inside = forward ? coord[axis] + 1 < extent[axis] : coord[axis] > 0;
        const uint64_t neighbour = forward ? i + stride[axis] : i - stride[axis];
        if (!inside || boundary[neighbour])
          return s.Corrupt("location entry " + std::to_string(code) + " at " + VoxelText(x, y, z) + " names " +
                               (inside ? "a boundary voxel" : "a neighbour outside the chunk"),
                           entry_at, entry_at + dw);
        Store<T>(out, i, Load<T>(out, neighbour));
      }
    }
  }
  if (next != h.location_count)
    return s.Corrupt("only " + std::to_string(next) + " of " + std::to_string(h.location_count) +
                         " location entries are used",
                     sec.locations, sec.windows);
  return Status::Ok();
}

// Format version 1's z index must say what decoding the whole chunk found.
Status CheckZIndex(const Stream& s, const Sections& sec, const Volume& v, const compresso::Components& components,
                   const std::vector<uint64_t>& slice_location_begin) {
  const int w = sec.z_index_bytes;
  for (uint64_t z = 0; z < v.sz; ++z) {
    const uint64_t at = sec.z_index + w * z;
    const uint64_t stored = LoadLE(s.bytes.data() + at, w);
    if (stored != components.count_per_slice[z])
      return s.Corrupt("z index gives slice " + std::to_string(z) + " " + std::to_string(stored) +
                           " components, it has " + std::to_string(components.count_per_slice[z]),
                       at, at + w);
  }
  for (uint64_t z = 0; z < v.sz; ++z) {
    const uint64_t at = sec.z_index + w * (v.sz + z);
    const uint64_t stored = LoadLE(s.bytes.data() + at, w);
    const uint64_t want = z == 0 ? 0 : slice_location_begin[z] - slice_location_begin[z - 1];
    if (stored != want)
      return s.Corrupt("z index gives " + std::to_string(stored) + " location entries before slice " +
                           std::to_string(z) + " begins, decoding used " + std::to_string(want),
                       at, at + w);
  }
  return Status::Ok();
}

}  // namespace

Result<Bytes> DecodeCompresso(ByteView stored, const std::array<int64_t, 3>& extent_xyz, DataType dtype,
                              const std::string& where) {
  TESSERA_RETURN_IF_ERROR(CheckArguments(extent_xyz, dtype));
  const Stream s{stored, where};
  if (stored.size() < compresso::kHeaderBytes)
    return s.Corrupt("header is truncated (" + std::to_string(compresso::kHeaderBytes) + " bytes expected)", 0,
                     stored.size());
  const Header h = compresso::ReadHeader(stored.data());
  TESSERA_RETURN_IF_ERROR(CheckHeader(s, h, extent_xyz, dtype));
  Volume v;
  v.sx = h.size_xyz[0];
  v.sy = h.size_xyz[1];
  v.sz = h.size_xyz[2];
  v.sxy = v.sx * v.sy;
  v.voxels = v.sxy * v.sz;
  if (v.voxels == 0) {  // compresso writes the bare header for an empty array
    if (h.id_count != 0 || h.window_value_count != 0 || h.location_count != 0 ||
        stored.size() != compresso::kHeaderBytes)
      return s.Corrupt("stream of an empty chunk holds more than its header", 15, stored.size());
    return Bytes();
  }
  if (v.voxels > std::numeric_limits<uint32_t>::max())
    return Unsupported(where + ": compresso chunks of 2^32 voxels and more are not supported (" +
                       std::to_string(v.voxels) + " voxels)");
  TESSERA_ASSIGN_OR_RETURN(const Sections sec, LocateSections(s, h, v));
  if (h.window_value_count == 0) return s.Corrupt("value_size is 0 (every window needs a pattern)", 23, 27);

  const uint64_t windows = ((v.sx + h.step_xyz[0] - 1) / h.step_xyz[0]) *
                           ((v.sy + h.step_xyz[1] - 1) / h.step_xyz[1]) *
                           ((v.sz + h.step_xyz[2] - 1) / h.step_xyz[2]);
  TESSERA_ASSIGN_OR_RETURN(const std::vector<uint64_t> window_bits, DecodeWindows(s, h, sec, windows));
  const std::vector<uint8_t> boundary = ExpandBoundaries(window_bits, h, v);
  const compresso::Components components =
      compresso::LabelComponents(boundary, {v.sx, v.sy, v.sz}, /*across_slices=*/h.connectivity == 6);
  if (components.count != h.id_count)
    return s.Corrupt("id_size " + std::to_string(h.id_count) + " differs from the " +
                         std::to_string(components.count) + " components the boundaries make",
                     15, 23);

  Bytes out(v.voxels * ItemSize(dtype));
  std::vector<uint64_t> slice_location_begin(v.sz);
  Status st;
  switch (ItemSize(dtype)) {
    case 1: st = DecodeLabels<uint8_t>(s, h, sec, v, boundary, components, out.data(), &slice_location_begin); break;
    case 2: st = DecodeLabels<uint16_t>(s, h, sec, v, boundary, components, out.data(), &slice_location_begin); break;
    case 4: st = DecodeLabels<uint32_t>(s, h, sec, v, boundary, components, out.data(), &slice_location_begin); break;
    default: st = DecodeLabels<uint64_t>(s, h, sec, v, boundary, components, out.data(), &slice_location_begin); break;
  }
  TESSERA_RETURN_IF_ERROR(st);
  if (h.format_version == 1) TESSERA_RETURN_IF_ERROR(CheckZIndex(s, sec, v, components, slice_location_begin));
  return out;
}

}  // namespace tessera::precomputed
