#include "tessera/precomputed/compresso.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"
#include "tessera/precomputed/compresso_format.h"

namespace tessera::precomputed {
namespace {

using Extent = std::array<int64_t, 3>;

Bytes Hex(const std::string& hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// Labels (C order [z][y][x], little endian) from values of any width.
Bytes Labels(DataType dtype, const std::vector<uint64_t>& values) {
  const size_t item = ItemSize(dtype);
  Bytes out(values.size() * item);
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t b = 0; b < item; ++b) out[item * i + b] = static_cast<uint8_t>(values[i] >> (8 * b));
  return out;
}

// The 36-byte header, field by field (see compresso.h).
Bytes HeaderBytes(uint8_t version, uint8_t width, Extent size, std::array<uint8_t, 3> step, uint64_t ids,
                  uint32_t values, uint64_t locations, uint8_t connectivity) {
  compresso::Header h;
  h.format_version = version;
  h.data_width = width;
  h.size_xyz = {static_cast<uint16_t>(size[0]), static_cast<uint16_t>(size[1]), static_cast<uint16_t>(size[2])};
  h.step_xyz = step;
  h.id_count = ids;
  h.window_value_count = values;
  h.location_count = locations;
  h.connectivity = connectivity;
  Bytes out;
  compresso::AppendHeader(h, &out);
  return out;
}

Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Streams the PyPI package made (compresso_test_streams.inc, scripts/make_compresso_test_streams.py)
// for volumes rebuilt here from the same recipe.

enum class CompressoPattern { kHash, kParity, kSpheres };

struct PackageStream {
  const char* name;
  Extent extent;
  DataType dtype;
  CompressoPattern pattern;
  std::array<uint64_t, 3> cell;
  uint64_t k;
  bool high;
  uint64_t seed;
  bool defaults;  // made by compress() with its defaults: our encoder must make the same bytes
  const char* hex;
};

const PackageStream kPackageStreams[] = {
#include "tessera/precomputed/compresso_test_streams.inc"
};

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  uint64_t z = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t Key(uint64_t seed, uint64_t tag, uint64_t rest) { return (seed << 48) | (tag << 44) | rest; }

// The generator script's volume() in C++.
Bytes RecipeVolume(const PackageStream& c) {
  const uint64_t sx = c.extent[0], sy = c.extent[1], sz = c.extent[2];
  const int item = static_cast<int>(ItemSize(c.dtype));
  const uint64_t mask = item == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * item)) - 1;
  std::vector<uint64_t> palette(c.k);
  for (uint64_t j = 0; j < c.k; ++j) palette[j] = c.high ? mask - j : SplitMix64(Key(c.seed, 1, j)) & mask;
  std::vector<uint64_t> index(sx * sy * sz, 0);
  for (uint64_t z = 0; z < sz; ++z)
    for (uint64_t y = 0; y < sy; ++y)
      for (uint64_t x = 0; x < sx; ++x) {
        const uint64_t cx = x / c.cell[0], cy = y / c.cell[1], cz = z / c.cell[2];
        uint64_t& j = index[x + sx * (y + sy * z)];
        if (c.pattern == CompressoPattern::kHash)
          j = SplitMix64(Key(c.seed, 2, 0) | cx | (cy << 16) | (cz << 32)) % c.k;
        else if (c.pattern == CompressoPattern::kParity)
          j = (cx + cy + cz) % c.k;
      }
  if (c.pattern == CompressoPattern::kSpheres) {
    const int64_t radius_limit = std::max({c.extent[0], c.extent[1], c.extent[2]}) / 3 + 1;
    for (uint64_t ball = 0; ball + 1 < c.k; ++ball) {
      int64_t center[3];
      for (int d = 0; d < 3; ++d)
        center[d] = static_cast<int64_t>(SplitMix64(Key(c.seed, 3, 4 * ball + d)) % static_cast<uint64_t>(c.extent[d]));
      const int64_t r = 1 + static_cast<int64_t>(SplitMix64(Key(c.seed, 3, 4 * ball + 3)) % radius_limit);
      for (int64_t z = 0; z < c.extent[2]; ++z)
        for (int64_t y = 0; y < c.extent[1]; ++y)
          for (int64_t x = 0; x < c.extent[0]; ++x) {
            const int64_t dx = x - center[0], dy = y - center[1], dz = z - center[2];
            uint64_t& j = index[x + sx * (y + sy * z)];
            if (j == 0 && dx * dx + dy * dy + dz * dz <= r * r) j = ball + 1;
          }
    }
  }
  std::vector<uint64_t> values(index.size());
  for (size_t i = 0; i < index.size(); ++i) values[i] = palette[index[i]];
  return Labels(c.dtype, values);
}

Bytes StreamOf(const PackageStream& c) {
  std::string hex = c.hex;
  return Hex(hex);
}

TEST(CompressoTest, HandCheckedOneVoxel) {
  // One uint8 voxel of label 0xef: one component (its label is the only id), one window with the
  // empty pattern, one run covering it, no location entries; z index: 1 component, 0 entries.
  const Bytes stream = Concat({HeaderBytes(1, 1, {1, 1, 1}, {4, 4, 1}, 1, 1, 0, 4),
                               {0xef},        // ids
                               {0x00, 0x00},  // window pattern 0: no boundary (u16)
                               {0x03, 0x00},  // windows: a run (odd) of 1
                               {0x01, 0x00}});
  EXPECT_EQ(stream, Hex(kPackageStreams[0].hex));  // what the package wrote for this volume
  auto decoded = DecodeCompresso(stream, {1, 1, 1}, DataType::kUInt8, "c");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, Bytes({0xef}));
  auto widened = DecodeCompresso(stream, {1, 1, 1}, DataType::kUInt32, "c");
  ASSERT_TRUE(widened.ok()) << widened.status().ToString();
  EXPECT_EQ(*widened, Labels(DataType::kUInt32, {0xef}));
  auto encoded = EncodeCompresso(Bytes({0xef}), {1, 1, 1}, DataType::kUInt8);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, stream);
}

// 4x4x2 uint8, two labels. Slice z=0: label 0 for x < 2, 5 for x >= 2. Slice z=1: 5 at (0, 0), 0
// elsewhere.
std::vector<uint64_t> TwoLabelVolume() {
  std::vector<uint64_t> v(32, 0);
  for (int y = 0; y < 4; ++y)
    for (int x = 2; x < 4; ++x) v[x + 4 * y] = 5;
  v[16] = 5;
  return v;
}

TEST(CompressoTest, HandCheckedTwoLabels) {
  // Boundaries: slice 0, x = 1 of every row (0 != 5 to its right): bits 1, 5, 9, 13 = 0x2222;
  // slice 1, (0, 0) only: 0x0001. Components: slice 0 {x < 2} = 0 and {x >= 2} = 5; slice 1
  // everything but (0, 0) = 0. Slice 0's boundary voxels copy their -x neighbour; slice 1's (0, 0)
  // has no -x or -y neighbour, its +x and +y neighbours hold 0, so its entry is 5 + 7 = 12.
  const Bytes stream = Concat({HeaderBytes(1, 1, {4, 4, 2}, {4, 4, 1}, 3, 2, 1, 4),
                               {0, 5, 0},                // ids
                               {0x01, 0x00, 0x22, 0x22},  // patterns 0x0001, 0x2222 (sorted)
                               {12},                     // location entries
                               {0x02, 0x00, 0x03, 0x00},  // window 0: pattern 1 (2*1); window 1: a run of 1
                               {2, 1, 0, 0}});           // z index: components 2, 1; entries 0, 0
  const Bytes labels = Labels(DataType::kUInt8, TwoLabelVolume());
  auto decoded = DecodeCompresso(stream, {4, 4, 2}, DataType::kUInt8, "c");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, labels);
  auto encoded = EncodeCompresso(labels, {4, 4, 2}, DataType::kUInt8);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, stream);
  // compress(random_access_z_index=False): format version 0, no z index.
  Bytes version0(stream.begin(), stream.end() - 4);
  version0[4] = 0;
  auto decoded0 = DecodeCompresso(version0, {4, 4, 2}, DataType::kUInt8, "c");
  ASSERT_TRUE(decoded0.ok()) << decoded0.status().ToString();
  EXPECT_EQ(*decoded0, labels);
}

TEST(CompressoTest, DecodesThePackagesStreams) {
  ASSERT_GE(std::size(kPackageStreams), 20u);
  for (const PackageStream& c : kPackageStreams) {
    SCOPED_TRACE(c.name);
    const Bytes expected = RecipeVolume(c);
    auto decoded = DecodeCompresso(StreamOf(c), c.extent, c.dtype, c.name);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_TRUE(*decoded == expected);
    // The same labels into uint64: zero-extended.
    if (c.dtype != DataType::kUInt64) {
      const size_t item = ItemSize(c.dtype);
      std::vector<uint64_t> values(expected.size() / item, 0);
      for (size_t i = 0; i < values.size(); ++i) std::memcpy(&values[i], expected.data() + item * i, item);
      auto wide = DecodeCompresso(StreamOf(c), c.extent, DataType::kUInt64, c.name);
      ASSERT_TRUE(wide.ok()) << wide.status().ToString();
      EXPECT_TRUE(*wide == Labels(DataType::kUInt64, values));
    }
  }
}

TEST(CompressoTest, EncodesAsThePackageDoes) {
  int compared = 0;
  for (const PackageStream& c : kPackageStreams) {
    if (!c.defaults) continue;
    SCOPED_TRACE(c.name);
    auto encoded = EncodeCompresso(RecipeVolume(c), c.extent, c.dtype);
    ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
    EXPECT_TRUE(*encoded == StreamOf(c));
    ++compared;
  }
  EXPECT_GE(compared, 20);
}

TEST(CompressoTest, EmptyChunkIsTheBareHeader) {
  // compresso.compress(np.zeros((0, 3, 2), np.uint16)): version 0, sizes, steps 4x4x1, connectivity 4.
  const Bytes stream = Hex("6370736f0002000003000200040401000000000000000000000000000000000000000004");
  auto encoded = EncodeCompresso(Bytes(), {0, 3, 2}, DataType::kUInt16);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, stream);
  auto decoded = DecodeCompresso(stream, {0, 3, 2}, DataType::kUInt16, "c");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(decoded->empty());
  Bytes longer = stream;
  longer.push_back(0);
  EXPECT_ERROR(DecodeCompresso(longer, {0, 3, 2}, DataType::kUInt16, "c"), ErrorKind::kCorruptData, "c:",
               "empty chunk");
}

TEST(CompressoTest, RandomVolumesRoundTrip) {
  std::mt19937_64 rng(11);
  const DataType dtypes[] = {DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64};
  for (int trial = 0; trial < 200; ++trial) {
    const DataType dtype = dtypes[trial % 4];
    const Extent extent = {1 + static_cast<int64_t>(rng() % 19), 1 + static_cast<int64_t>(rng() % 19),
                           1 + static_cast<int64_t>(rng() % 7)};
    const uint64_t distinct = 1 + rng() % 12;
    const uint64_t cell = 1 + rng() % 4;
    std::vector<uint64_t> palette(distinct);
    for (uint64_t& p : palette) p = rng() % 3 == 0 ? ~uint64_t{0} - rng() % 9 : rng();  // near the top too
    std::vector<uint64_t> values(extent[0] * extent[1] * extent[2]);
    for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) {
      const int64_t x = i % extent[0], y = (i / extent[0]) % extent[1];
      values[i] = rng() % 4 == 0 ? palette[rng() % distinct] : palette[((x / cell) * 7 + (y / cell)) % distinct];
    }
    const Bytes labels = Labels(dtype, values);
    auto encoded = EncodeCompresso(labels, extent, dtype);
    ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
    auto decoded = DecodeCompresso(*encoded, extent, dtype, "trial");
    ASSERT_TRUE(decoded.ok()) << "trial " << trial << ": " << decoded.status().ToString();
    EXPECT_TRUE(*decoded == labels) << "trial " << trial;
  }
}

// Labels whose boundaries are close to a random field: each voxel, with probability 2/5, is joined
// with its +x and +y neighbours (so it is no boundary voxel), and every slice's joined sets get
// labels of their own.
std::vector<uint64_t> NearlyRandomBoundaries(uint64_t sx, uint64_t sy, uint64_t sz, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> parent(sx * sy * sz);
  for (uint64_t i = 0; i < parent.size(); ++i) parent[i] = i;
  const auto root = [&](uint64_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const auto join = [&](uint64_t a, uint64_t b) { parent[root(a)] = root(b); };
  for (uint64_t z = 0; z < sz; ++z)
    for (uint64_t y = 0; y < sy; ++y)
      for (uint64_t x = 0; x < sx; ++x) {
        if (rng() % 5 < 3) continue;
        const uint64_t i = x + sx * (y + sy * z);
        if (x + 1 < sx) join(i, i + 1);
        if (y + 1 < sy) join(i, i + sx);
      }
  std::vector<uint64_t> labels(parent.size());
  for (uint64_t i = 0; i < labels.size(); ++i) labels[i] = 1 + root(i);
  return labels;
}

TEST(CompressoTest, ManyWindowPatternsFallBackTo8x8Windows) {
  // More than 32768 distinct 4x4 boundary patterns do not fit the 16-bit window codes: the package
  // (and so the encoder) switch to 8x8x1 windows with 64-bit codes.
  const Extent extent = {1024, 1024, 2};
  const Bytes labels = Labels(DataType::kUInt32, NearlyRandomBoundaries(1024, 1024, 2, 3));
  auto encoded = EncodeCompresso(labels, extent, DataType::kUInt32);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(Bytes(encoded->begin() + 12, encoded->begin() + 15), Bytes({8, 8, 1}));
  auto decoded = DecodeCompresso(*encoded, extent, DataType::kUInt32, "c");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(*decoded == labels);
}

TEST(CompressoTest, LongRunsOfEmptyWindowsSplitAtTheCodesMaximum) {
  // 1024x512 voxels of one label: 32768 windows of pattern 0, a run of at most 32767 per 16-bit code.
  auto encoded = EncodeCompresso(Bytes(1024 * 512, 7), {1024, 512, 1}, DataType::kUInt8);
  ASSERT_TRUE(encoded.ok());
  // Runs of 32767 and 1, then the z index (4-byte entries: 2 * 1024 * 512 needs more than 16 bits).
  const Bytes tail(encoded->end() - 12, encoded->end());
  EXPECT_EQ(tail, Bytes({0xff, 0xff, 0x03, 0x00, 1, 0, 0, 0, 0, 0, 0, 0}));
  auto decoded = DecodeCompresso(*encoded, {1024, 512, 1}, DataType::kUInt8, "c");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(*decoded == Bytes(1024 * 512, 7));
}

TEST(CompressoTest, BadArgumentsAreInvalid) {
  const Bytes stream = Hex(kPackageStreams[0].hex);
  EXPECT_ERROR(DecodeCompresso(stream, {1, 1, 1}, DataType::kInt32, "c"), ErrorKind::kInvalidArgument, "int32");
  EXPECT_ERROR(DecodeCompresso(stream, {1, -1, 1}, DataType::kUInt8, "c"), ErrorKind::kInvalidArgument, "y");
  EXPECT_ERROR(EncodeCompresso(Bytes(2), {1, 1, 1}, DataType::kUInt8), ErrorKind::kInvalidArgument, "2 bytes");
  EXPECT_ERROR(EncodeCompresso(Bytes(4), {1, 1, 1}, DataType::kFloat32), ErrorKind::kInvalidArgument, "float32");
  EXPECT_ERROR(EncodeCompresso(Bytes(), {70000, 0, 1}, DataType::kUInt8), ErrorKind::kInvalidArgument, "70000");
}

TEST(CompressoTest, HeaderFieldsAreChecked) {
  const Bytes good = Hex(kPackageStreams[1].hex);  // random_7x5x3_u8
  const Extent extent = {7, 5, 3};
  ASSERT_TRUE(DecodeCompresso(good, extent, DataType::kUInt8, "c").ok());
  auto with = [&](size_t at, uint8_t value) {
    Bytes b = good;
    b[at] = value;
    return b;
  };
  const std::string where = "0-7_0-5_0-3";
  auto expect = [&](const Bytes& b, const char* needle, Extent e = {7, 5, 3}, DataType dtype = DataType::kUInt8) {
    EXPECT_ERROR(DecodeCompresso(b, e, dtype, where), ErrorKind::kCorruptData, where, needle);
  };
  expect(with(0, 'C'), "magic");
  expect(with(4, 2), "format version 2");
  expect(with(5, 3), "data width 3");
  expect(with(5, 2), "labels of 2 bytes do not fit the volume's uint8");
  expect(good, "sx 7 differs from the chunk's extent 8", {8, 5, 3});
  expect(good, "sy 5 differs from the chunk's extent 4", {7, 4, 3});
  expect(good, "sz 3 differs from the chunk's extent 1", {7, 5, 1});
  expect(with(12, 0), "window steps 0x4x1");
  expect(with(14, 5), "window steps 4x4x5");
  expect(with(35, 5), "connectivity 5");
  expect(with(35, 6), "connectivity 6");
  expect(Bytes(good.begin(), good.begin() + 20), "header is truncated");
  // Wider labels than the volume's dtype would be narrowed: refused.
  const PackageStream& u64 = kPackageStreams[4];  // distinct_7x5x3_u64
  expect(Hex(u64.hex), "labels of 8 bytes do not fit the volume's uint32", extent, DataType::kUInt32);
  // A stream header of 2^32 voxels and more is refused before anything is allocated.
  const Bytes huge = HeaderBytes(0, 1, {65535, 65535, 2}, {4, 4, 1}, 0, 0, 0, 4);
  EXPECT_ERROR(DecodeCompresso(huge, {65535, 65535, 2}, DataType::kUInt8, where), ErrorKind::kUnsupported, where);
}

// A stream built from its sections, for corrupting one at a time: 4x4x2 two labels as above.
struct Sections {
  Bytes ids{0, 5, 0}, patterns{0x01, 0x00, 0x22, 0x22}, locations{12}, windows{0x02, 0x00, 0x03, 0x00},
      z_index{2, 1, 0, 0};
  uint64_t id_count = 3, pattern_count = 2, location_count = 1;
  uint8_t version = 1, connectivity = 4;
  Bytes Build() const {
    return Concat({HeaderBytes(version, 1, {4, 4, 2}, {4, 4, 1}, id_count, static_cast<uint32_t>(pattern_count),
                               location_count, connectivity),
                   ids, patterns, locations, windows, z_index});
  }
};

TEST(CompressoTest, SectionsAreChecked) {
  auto expect = [](const Sections& s, const char* needle) {
    EXPECT_ERROR(DecodeCompresso(s.Build(), {4, 4, 2}, DataType::kUInt8, "key"), ErrorKind::kCorruptData, "key:",
                 needle);
  };
  ASSERT_TRUE(DecodeCompresso(Sections().Build(), {4, 4, 2}, DataType::kUInt8, "key").ok());
  Sections s;
  s.id_count = 1ull << 62;
  expect(s, "id_size 4611686018427387904");
  s = Sections();
  s.location_count = ~0ull;
  expect(s, "location_size");
  s = Sections();
  s.pattern_count = 0xFFFFFFFF;
  expect(s, "value_size 4294967295");
  s = Sections();
  s.ids = {0, 5, 0, 9};
  s.id_count = 4;
  expect(s, "id_size 4 differs from the 3 components");
  s = Sections();
  s.ids = {0, 5};
  s.id_count = 2;
  s.locations = {12, 0};  // keeps the length
  s.location_count = 2;
  expect(s, "id_size 2 differs from the 3 components");
  s = Sections();
  s.patterns = {};
  s.pattern_count = 0;
  expect(s, "value_size is 0");
  s = Sections();
  s.windows = {0x04, 0x00, 0x03, 0x00};  // pattern 2 of 2
  expect(s, "window pattern 2 of 2");
  s = Sections();
  s.windows = {0x02, 0x00, 0x05, 0x00};  // a run of 2 from the second window
  expect(s, "run of 2 windows");
  s = Sections();
  s.windows = {0x02, 0x00};
  expect(s, "cover 1 of 2 windows");
  s = Sections();
  s.windows = {0x02, 0x00, 0x03, 0x00, 0x00, 0x00};
  expect(s, "window code after the last window");
  s = Sections();
  s.windows = {0x02, 0x00, 0x03, 0x00, 0x00};
  expect(s, "whole number of 2-byte codes");
  s = Sections();
  s.locations = {};
  s.location_count = 0;
  expect(s, "run out at voxel (x 0, y 0, z 1)");
  s = Sections();
  s.locations = {12, 12};
  s.location_count = 2;
  expect(s, "only 1 of 2 location entries");
  s = Sections();
  s.locations = {0};  // -x of x = 0
  expect(s, "location entry 0 at voxel (x 0, y 0, z 1) names a neighbour outside the chunk");
  s = Sections();
  s.locations = {5};  // +z of the last slice
  expect(s, "location entry 5 at voxel (x 0, y 0, z 1) names a neighbour outside the chunk");
  s = Sections();
  s.locations = {6};
  expect(s, "entry 6 (a label follows) is the last entry");
  s = Sections();
  s.z_index = {2, 2, 0, 0};
  expect(s, "z index gives slice 1 2 components, it has 1");
  s = Sections();
  s.z_index = {2, 1, 1, 0};
  expect(s, "z index gives 1 location entries before slice 0");
  s = Sections();
  s.z_index = {2, 1, 0};
  expect(s, "whole number of 2-byte codes");  // the windows' last byte is taken for the z index
  s = Sections();
  s.connectivity = 6;
  expect(s, "format version 1 (z index) with connectivity 6");
  // Version 0 with connectivity 6: slice 1's one component touches both of slice 0's: 1 in all.
  s = Sections();
  s.version = 0;
  s.connectivity = 6;
  s.z_index = {};
  expect(s, "id_size 3 differs from the 1 components");
  // Entry 6 then a label decodes.
  s = Sections();
  s.locations = {6, 5};
  s.location_count = 2;
  s.z_index = {2, 1, 0, 0};
  auto decoded = DecodeCompresso(s.Build(), {4, 4, 2}, DataType::kUInt8, "key");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, Labels(DataType::kUInt8, TwoLabelVolume()));
  // Entry 3: (0, 1) below holds 0.
  s = Sections();
  s.locations = {3};
  decoded = DecodeCompresso(s.Build(), {4, 4, 2}, DataType::kUInt8, "key");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ((*decoded)[16], 0);
}

// Every prefix of a stream is an error, and every damaged byte either still decodes (a changed
// label) or is kCorruptData naming the key: never a crash, a hang or a wrong-sized result.
TEST(CompressoTest, TruncatedAndDamagedStreamsAreErrors) {
  for (const PackageStream& c : kPackageStreams) {
    const Bytes good = StreamOf(c);
    if (good.size() > 2000) continue;
    SCOPED_TRACE(c.name);
    const size_t voxel_bytes = static_cast<size_t>(c.extent[0] * c.extent[1] * c.extent[2]) * ItemSize(c.dtype);
    for (size_t n = 0; n < good.size(); ++n) {
      const Bytes prefix(good.begin(), good.begin() + n);
      ASSERT_ERROR(DecodeCompresso(prefix, c.extent, c.dtype, "k"), ErrorKind::kCorruptData, "k:");
    }
    for (size_t at = 0; at < good.size(); ++at)
      for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
        Bytes bad = good;
        bad[at] ^= flip;
        auto decoded = DecodeCompresso(bad, c.extent, c.dtype, "k");
        if (decoded.ok()) {
          ASSERT_EQ(decoded->size(), voxel_bytes) << "byte " << at;
          ASSERT_GE(at, compresso::kHeaderBytes) << "a damaged header byte decoded";
        } else {
          ASSERT_ERROR(decoded, ErrorKind::kCorruptData, "k:");
        }
      }
  }
}

}  // namespace
}  // namespace tessera::precomputed
