#include "tessera/precomputed/compresso_format.h"

#include <algorithm>
#include <limits>

namespace tessera::precomputed::compresso {

//   0 "cpso" | 4 u8 format_version | 5 u8 data_width | 6 u16 sx | 8 u16 sy | 10 u16 sz |
//   12 u8 xstep | 13 u8 ystep | 14 u8 zstep | 15 u64 id_size | 23 u32 value_size |
//   27 u64 location_size | 35 u8 connectivity
Header ReadHeader(const uint8_t* stored) {
  Header h;
  h.format_version = stored[4];
  h.data_width = stored[5];
  for (int d = 0; d < 3; ++d) {
    h.size_xyz[d] = static_cast<uint16_t>(LoadLE(stored + 6 + 2 * d, 2));
    h.step_xyz[d] = stored[12 + d];
  }
  h.id_count = LoadLE(stored + 15, 8);
  h.window_value_count = static_cast<uint32_t>(LoadLE(stored + 23, 4));
  h.location_count = LoadLE(stored + 27, 8);
  h.connectivity = stored[35];
  return h;
}

void AppendHeader(const Header& h, Bytes* out) {
  out->insert(out->end(), kMagic, kMagic + 4);
  out->push_back(h.format_version);
  out->push_back(h.data_width);
  for (int d = 0; d < 3; ++d) AppendLE(h.size_xyz[d], 2, out);
  for (int d = 0; d < 3; ++d) out->push_back(h.step_xyz[d]);
  AppendLE(h.id_count, 8, out);
  AppendLE(h.window_value_count, 4, out);
  AppendLE(h.location_count, 8, out);
  out->push_back(h.connectivity);
}

int WindowBytes(int window_voxels) {
  if (window_voxels <= 8) return 1;
  if (window_voxels <= 16) return 2;
  if (window_voxels <= 32) return 4;
  return 8;
}

int ZIndexBytes(uint64_t sx, uint64_t sy) {
  const uint64_t worst_case = 2 * sx * sy;  // location entries one slice can use
  if (worst_case < std::numeric_limits<uint8_t>::max()) return 1;
  if (worst_case < std::numeric_limits<uint16_t>::max()) return 2;
  if (worst_case < std::numeric_limits<uint32_t>::max()) return 4;
  return 8;
}

namespace {

// Union-find over provisional labels; a set's root is its smallest label, the one made first.
class ProvisionalLabels {
 public:
  ProvisionalLabels() : parent_(1, 0) {}  // label 0 is "none"
  uint32_t Make() {
    parent_.push_back(static_cast<uint32_t>(parent_.size()));
    return static_cast<uint32_t>(parent_.size() - 1);
  }
  uint32_t Root(uint32_t label) {
    while (parent_[label] != label) {
      parent_[label] = parent_[parent_[label]];  // path halving
      label = parent_[label];
    }
    return label;
  }
  void Join(uint32_t a, uint32_t b) {
    a = Root(a);
    b = Root(b);
    if (a < b) parent_[b] = a;
    else if (b < a) parent_[a] = b;
  }
  uint32_t size() const { return static_cast<uint32_t>(parent_.size()); }

 private:
  std::vector<uint32_t> parent_;
};

}  // namespace

Components LabelComponents(const std::vector<uint8_t>& boundary, const std::array<uint64_t, 3>& size_xyz,
                           bool across_slices) {
  const uint64_t sx = size_xyz[0], sy = size_xyz[1], sz = size_xyz[2], sxy = sx * sy;
  Components out;
  out.component.assign(sxy * sz, 0);
  out.count_per_slice.assign(sz, 0);
  ProvisionalLabels labels;
  std::vector<uint32_t> first_label_of_slice(sz + 1, 1);
  // Pass 1: a provisional label per run of non-boundary voxels along x, joined with the labels of
  // the runs it touches in the row before (-y) and, when 6-connected, the slice before (-z).
  // Labels are made in raster order.
  uint32_t* component = out.component.data();
  for (uint64_t z = 0; z < sz; ++z) {
    first_label_of_slice[z] = labels.size();
    for (uint64_t y = 0; y < sy; ++y) {
      const uint64_t row = sx * (y + sy * z);
      const uint8_t* b = boundary.data() + row;
      for (uint64_t x = 0; x < sx;) {
        if (b[x]) {
          ++x;
          continue;
        }
        const uint64_t run_begin = x;
        while (x < sx && !b[x]) ++x;
        uint32_t label = 0;
        // Every run of non-boundary voxels of `neighbour_row` overlapping [run_begin, x): one
        // label each (a run shares its label), met at the run's first voxel in the overlap.
        const auto meet_row = [&](uint64_t neighbour_row) {
          const uint8_t* nb = boundary.data() + neighbour_row;
          const uint32_t* nc = component + neighbour_row;
          for (uint64_t i = run_begin; i < x; ++i) {
            if (nb[i] || (i > run_begin && !nb[i - 1])) continue;
            if (label == 0) label = nc[i];
            else if (nc[i] != label) labels.Join(label, nc[i]);
          }
        };
        if (y > 0) meet_row(row - sx);
        if (across_slices && z > 0) meet_row(row - sxy);
        if (label == 0) label = labels.Make();
        std::fill(component + row + run_begin, component + row + x, label);
      }
    }
  }
  first_label_of_slice[sz] = labels.size();
  // Pass 2: number the sets in the order of their roots (their first voxels), then relabel.
  std::vector<uint32_t> final_number(labels.size(), 0);
  uint32_t next = 0;
  for (uint64_t z = 0; z < sz; ++z) {
    for (uint32_t label = first_label_of_slice[z]; label < first_label_of_slice[z + 1]; ++label) {
      const uint32_t root = labels.Root(label);
      if (root == label) {
        final_number[label] = ++next;
        ++out.count_per_slice[z];
      } else {
        final_number[label] = final_number[root];
      }
    }
  }
  out.count = next;
  for (uint32_t& c : out.component) c = final_number[c];
  return out;
}

}  // namespace tessera::precomputed::compresso
