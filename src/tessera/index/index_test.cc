#include "tessera/index/index.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/index/strided_copy.h"

namespace tessera::index {
namespace {

TEST(IndexTest, RavelUnravelRoundTrip) {
  const int64_t shape[] = {3, 1, 4, 5, 2};
  int64_t coords[5];
  for (int64_t i = 0; i < Product(5, shape); ++i) {
    Unravel(5, shape, i, coords);
    EXPECT_EQ(Ravel(5, shape, coords), i);
  }
  const int64_t c[] = {2, 0, 3, 1, 1};
  EXPECT_EQ(Ravel(5, shape, c), ((2 * 1 + 0) * 4 + 3) * 10 + 1 * 2 + 1);
}

TEST(IndexTest, ShardPermutationHandTable) {
  // 2 x 3 tiles, 1 x 2 tiles per shard -> 2 x 2 shards of 2 slots each.
  const int64_t tiles[] = {2, 3}, tps[] = {1, 2};
  ShardPermutation p = MakeShardPermutation(2, tiles, tps);
  EXPECT_EQ(p.ShardCount(), 4);
  EXPECT_EQ(p.TilesPerShard(), 2);
  const int64_t expected[] = {0, 1, 2, 4, 5, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(p.Map(i), expected[i]) << i;
}

TEST(IndexTest, ShardPermutationThreeDims) {
  // 3 x 4 x 5 tiles, 2 x 2 x 3 per shard: check against direct lift-and-ravel.
  const int64_t tiles[] = {3, 4, 5}, tps[] = {2, 2, 3};
  ShardPermutation p = MakeShardPermutation(3, tiles, tps);
  const int64_t shard_shape[] = {2, 2, 2}, tps_shape[] = {2, 2, 3};
  std::vector<bool> seen(p.ShardCount() * p.TilesPerShard());
  for (int64_t i = 0; i < 60; ++i) {
    int64_t t[3];
    Unravel(3, tiles, i, t);
    int64_t s[3], w[3];
    for (int d = 0; d < 3; ++d) s[d] = t[d] / tps[d], w[d] = t[d] % tps[d];
    int64_t expected = Ravel(3, shard_shape, s) * 12 + Ravel(3, tps_shape, w);
    ASSERT_EQ(p.Map(i), expected);
    ASSERT_FALSE(seen[expected]);
    seen[expected] = true;
  }
}

TEST(IndexTest, TileScatterHandValues) {
  // A 4 x 6 block in 2 x 2 tiles of 2 x 3: element (1, 4) is in tile (0, 1), at (1, 1) inside.
  const int64_t tiles[] = {2, 2}, tile_shape[] = {2, 3};
  LiftedLayout L = MakeTileScatterLayout(2, tiles, tile_shape);
  const int64_t c[] = {1, 4};
  EXPECT_EQ(ScatterOffset(2, L, c), 1 * 6 + 1 * 3 + 1);
  // Map over the lifted index agrees with ScatterOffset for every element.
  for (int64_t t0 = 0; t0 < 2; ++t0)
    for (int64_t n0 = 0; n0 < 2; ++n0)
      for (int64_t t1 = 0; t1 < 2; ++t1)
        for (int64_t n1 = 0; n1 < 3; ++n1) {
          int64_t lifted = ((t0 * 2 + n0) * 2 + t1) * 3 + n1;
          int64_t xy[] = {t0 * 2 + n0, t1 * 3 + n1};
          EXPECT_EQ(L.Map(lifted), ScatterOffset(2, L, xy));
        }
}

// Scattering a block into its tile pool in runs of any length (splitting lines, tiles and
// elements' rows anywhere) puts every element where ScatterOffset says, for ranks 1-4 with edge
// tiles, and leaves the edge tiles' padding untouched.
TEST(IndexTest, ScatterRunToTilesMatchesScatterOffset) {
  std::mt19937_64 rng(7);
  const std::vector<std::vector<int64_t>> shapes = {{5}, {3, 7}, {2, 5, 6}, {4, 3, 2, 9}, {2, 1, 1, 1},
                                                    {3, 4, 5}, {2, 3, 4}, {2, 5, 2, 3}};
  const std::vector<std::vector<int64_t>> tiles = {{5}, {3, 3}, {2, 2, 4}, {4, 2, 2, 4}, {2, 1, 1, 1},
                                                   {2, 2, 5}, {2, 3, 4}, {2, 2, 2, 3}};
  for (size_t k = 0; k < shapes.size(); ++k) {
    const int rank = static_cast<int>(shapes[k].size());
    const int64_t* shape = shapes[k].data();
    int64_t tile_count[kMaxRank];
    for (int d = 0; d < rank; ++d) tile_count[d] = CeilDiv(shape[d], tiles[k][d]);
    const LiftedLayout L = MakeTileScatterLayout(rank, tile_count, tiles[k].data());
    const int64_t n = Product(rank, shape);
    const int64_t pool_elements = Product(rank, tile_count) * Product(rank, tiles[k].data());
    std::vector<uint16_t> src(n);
    for (int64_t i = 0; i < n; ++i) src[i] = static_cast<uint16_t>(i + 1);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<uint16_t> pool(pool_elements, 0xFFFF);
      for (int64_t first = 0; first < n;) {
        const int64_t count = std::min<int64_t>(n - first, 1 + rng() % (trial < 10 ? 4 : 40));
        ScatterRunToTiles(rank, shape, L, first, count, reinterpret_cast<const uint8_t*>(src.data() + first),
                          reinterpret_cast<uint8_t*>(pool.data()), sizeof(uint16_t), /*streaming_stores=*/trial % 2);
        first += count;
      }
      std::vector<bool> written(pool_elements, false);
      for (int64_t i = 0; i < n; ++i) {
        int64_t c[kMaxRank];
        Unravel(rank, shape, i, c);
        const int64_t off = ScatterOffset(rank, L, c);
        ASSERT_EQ(pool[off], src[i]) << "shape " << k << " element " << i;
        written[off] = true;
      }
      for (int64_t off = 0; off < pool_elements; ++off)
        if (!written[off]) ASSERT_EQ(pool[off], 0xFFFF) << "padding overwritten at " << off;
    }
  }
}

// Input whose dimensions arrive in another order (arriving dimension i is stored dimension
// order[i]) scattered in runs of any length through PermuteScatterLayout lands where the stored
// coordinates' ScatterOffset says, for every permutation of ranks 1-4, edge tiles included, every
// element size (lines copied one at a time and in groups), and leaves the padding untouched.
TEST(IndexTest, PermutedScatterPlacesArrivingElementsAtTheirStoredOffsets) {
  std::mt19937_64 rng(11);
  const std::vector<std::vector<int64_t>> shapes = {{5}, {3, 7}, {2, 5, 6}, {4, 3, 2, 9}, {3, 4, 5}, {2, 3, 4},
                                                    {3, 37, 50}, {1, 70, 9, 33}};
  const std::vector<std::vector<int64_t>> tiles = {{2}, {2, 3}, {2, 2, 4}, {4, 2, 2, 4}, {2, 4, 5}, {2, 3, 4},
                                                   {2, 16, 20}, {1, 64, 4, 16}};
  for (size_t k = 0; k < shapes.size(); ++k) {
    const int rank = static_cast<int>(shapes[k].size());
    const int64_t* shape = shapes[k].data();
    int64_t tile_count[kMaxRank];
    for (int d = 0; d < rank; ++d) tile_count[d] = CeilDiv(shape[d], tiles[k][d]);
    const LiftedLayout stored = MakeTileScatterLayout(rank, tile_count, tiles[k].data());
    const int64_t n = Product(rank, shape);
    const int64_t pool_elements = Product(rank, tile_count) * Product(rank, tiles[k].data());
    std::vector<int64_t> order(rank);
    for (int d = 0; d < rank; ++d) order[d] = d;
    int permutation = 0;
    do {
      const LiftedLayout arriving = PermuteScatterLayout(stored, rank, order.data());
      int64_t arriving_shape[kMaxRank];
      for (int i = 0; i < rank; ++i) arriving_shape[i] = shape[order[i]];
      const size_t item = std::vector<size_t>{1, 2, 4, 8, 16, 3}[permutation++ % 6];
      std::vector<uint8_t> src(n * item);
      for (size_t b = 0; b < src.size(); ++b) src[b] = static_cast<uint8_t>(b * 7 + b / item + 1);
      for (int trial = 0; trial < 3; ++trial) {
        std::vector<uint8_t> pool(pool_elements * item, 0xAB);
        for (int64_t first = 0; first < n;) {
          // Short runs, runs of several lines, and the rest at once.
          const int64_t most = trial == 0 ? 5 : trial == 1 ? 400 : n;
          const int64_t count = std::min<int64_t>(n - first, 1 + rng() % most);
          ScatterRunToTiles(rank, arriving_shape, arriving, first, count, src.data() + first * item, pool.data(), item,
                            /*streaming_stores=*/trial % 2);
          first += count;
        }
        std::vector<bool> written(pool_elements, false);
        for (int64_t i = 0; i < n; ++i) {
          int64_t a[kMaxRank], c[kMaxRank];
          Unravel(rank, arriving_shape, i, a);
          for (int j = 0; j < rank; ++j) c[order[j]] = a[j];
          const int64_t off = ScatterOffset(rank, stored, c);
          ASSERT_EQ(0, std::memcmp(pool.data() + off * item, src.data() + i * item, item))
              << "shape " << k << " element " << i << " item " << item;
          written[off] = true;
        }
        for (int64_t off = 0; off < pool_elements; ++off)
          if (!written[off])
            for (size_t b = 0; b < item; ++b) ASSERT_EQ(pool[off * item + b], 0xAB) << "padding overwritten at " << off;
      }
    } while (std::next_permutation(order.begin(), order.end()));
  }
}

// Non-temporal copies give memcpy's bytes at every alignment and length, and touch nothing else.
TEST(IndexTest, StreamingCopyMatchesMemcpy) {
  std::vector<uint8_t> src(1000), dst(1100);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
  for (size_t dst_off : {0, 1, 5, 15, 16, 17, 33}) {
    for (size_t src_off : {0, 3, 16}) {
      for (size_t n : {0, 1, 15, 16, 17, 63, 64, 65, 200, 900}) {
        std::fill(dst.begin(), dst.end(), 0xEE);
        detail::StreamingCopy(dst.data() + dst_off, src.data() + src_off, n);
        detail::StoreFence();
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= dst_off && i < dst_off + n;
          ASSERT_EQ(dst[i], inside ? src[src_off + i - dst_off] : 0xEE) << dst_off << " " << src_off << " " << n;
        }
      }
    }
  }
}

// Python's slice semantics, written the slow way.
std::vector<int64_t> PySlice(int64_t n, bool hs, int64_t start, bool he, int64_t stop, int64_t step) {
  std::vector<int64_t> all, out;
  int64_t b, e;
  if (step > 0) {
    b = hs ? (start < 0 ? std::max<int64_t>(start + n, 0) : std::min(start, n)) : 0;
    e = he ? (stop < 0 ? std::max<int64_t>(stop + n, 0) : std::min(stop, n)) : n;
    for (int64_t i = b; i < e; i += step) out.push_back(i);
  } else {
    b = hs ? (start < 0 ? std::max<int64_t>(start + n, -1) : std::min(start, n - 1)) : n - 1;
    e = he ? (stop < 0 ? std::max<int64_t>(stop + n, -1) : std::min(stop, n - 1)) : -1;
    for (int64_t i = b; i > e; i += step) out.push_back(i);
  }
  return out;
}

TEST(IndexTest, NormalizeSliceMatchesPython) {
  for (int64_t n : {0, 1, 2, 7, 10}) {
    for (int64_t step : {-5, -2, -1, 1, 2, 3, 11}) {
      for (int hs = 0; hs < 2; ++hs)
        for (int he = 0; he < 2; ++he)
          for (int64_t a = -13; a <= 13; a += (hs ? 1 : 100))
            for (int64_t b = -13; b <= 13; b += (he ? 1 : 100)) {
              DimSlice s = NormalizeSlice(n, hs, a, he, b, step);
              auto ref = PySlice(n, hs, a, he, b, step);
              ASSERT_EQ(s.count, static_cast<int64_t>(ref.size()))
                  << n << " " << a << ":" << b << ":" << step;
              for (int64_t k = 0; k < s.count; ++k) ASSERT_EQ(s.start + k * s.step, ref[k]);
            }
    }
  }
}

TEST(IndexTest, ChunkProjectionsCoverSelectionExactlyOnce) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    int64_t n = rng() % 60;
    int64_t chunk = 1 + rng() % 9;
    int64_t step = (1 + rng() % 12) * ((rng() % 2) ? 1 : -1);
    int64_t a = static_cast<int64_t>(rng() % 80) - 40, b = static_cast<int64_t>(rng() % 80) - 40;
    DimSlice s = NormalizeSlice(n, rng() % 2, a, rng() % 2, b, step);
    std::vector<int64_t> got(s.count, -1);
    int64_t last_chunk = -1;
    ForEachChunkProjection(s, chunk, [&](const ChunkProjection& p) {
      ASSERT_GT(p.chunk, last_chunk);
      last_chunk = p.chunk;
      ASSERT_GT(p.count, 0);
      for (int64_t j = 0; j < p.count; ++j) {
        int64_t pos = p.chunk * chunk + p.in_first + j * p.in_step;
        ASSERT_LT(p.in_first + j * p.in_step, chunk);
        int64_t out = p.out_first + j * p.out_step;
        ASSERT_GE(out, 0);
        ASSERT_LT(out, s.count);
        ASSERT_EQ(got[out], -1);
        got[out] = pos;
      }
    });
    for (int64_t k = 0; k < s.count; ++k) ASSERT_EQ(got[k], s.start + k * s.step);
  }
}

TEST(IndexTest, CopyStridedReversesAndCoalesces) {
  // 3 x 4 source, copy reversed along dim 1 into a 3 x 4 destination.
  std::vector<uint16_t> src(12), dst(12, 0);
  for (int i = 0; i < 12; ++i) src[i] = static_cast<uint16_t>(i);
  const int64_t count[] = {3, 4};
  const int64_t ss[] = {8, 2};
  const int64_t ds[] = {8, -2};
  CopyStrided(2, count, reinterpret_cast<uint8_t*>(src.data()), ss,
              reinterpret_cast<uint8_t*>(dst.data()) + 6, ds, 2);
  EXPECT_EQ(dst, (std::vector<uint16_t>{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}));
  std::vector<uint16_t> copy(12, 0);
  const int64_t cs[] = {8, 2};
  CopyStrided(2, count, reinterpret_cast<uint8_t*>(src.data()), cs,
              reinterpret_cast<uint8_t*>(copy.data()), cs, 2);
  EXPECT_EQ(copy, src);
}

TEST(IndexTest, ContiguousRuns) {
  const int64_t shape[] = {4, 5, 6};
  using Run = std::pair<int64_t, int64_t>;
  std::vector<Run> runs;
  const int64_t origin[] = {1, 0, 2}, extent[] = {2, 5, 3};
  ForEachContiguousRun(3, shape, origin, extent, [&](int64_t off, int64_t len) { runs.push_back({off, len}); });
  ASSERT_EQ(runs.size(), 10u);
  EXPECT_EQ(runs[0], Run(30 + 2, 3));
  EXPECT_EQ(runs[1], Run(30 + 6 + 2, 3));
  runs.clear();
  const int64_t origin2[] = {1, 0, 0}, extent2[] = {2, 5, 6};
  ForEachContiguousRun(3, shape, origin2, extent2, [&](int64_t off, int64_t len) { runs.push_back({off, len}); });
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0], Run(30, 60));
}

}  // namespace
}  // namespace tessera::index
