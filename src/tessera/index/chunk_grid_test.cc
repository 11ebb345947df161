#include "tessera/index/chunk_grid.h"

#include <vector>

#include <gtest/gtest.h>

namespace tessera::index {
namespace {

TEST(ChunkGridTest, ShapeNotDivisibleByTheChunk) {
  // 10 x 7 in 4 x 3 chunks: 3 x 3 chunks, the last row 2 high, the last column 1 wide.
  const ChunkGrid g({10, 7}, {4, 3});
  EXPECT_EQ(g.rank, 2);
  EXPECT_EQ(g.chunk_count[0], 3);
  EXPECT_EQ(g.chunk_count[1], 3);
  EXPECT_EQ(g.ChunkCount(), 9);
  EXPECT_EQ(g.PaddedExtent(0), 12);
  EXPECT_EQ(g.PaddedExtent(1), 9);

  const int64_t inner[] = {1, 1}, corner[] = {2, 2};
  int64_t origin[2], extent[2];
  g.ChunkBox(inner, origin, extent);
  EXPECT_EQ(origin[0], 4);
  EXPECT_EQ(origin[1], 3);
  EXPECT_EQ(extent[0], 4);
  EXPECT_EQ(extent[1], 3);
  g.ChunkBox(corner, origin, extent);
  EXPECT_EQ(origin[0], 8);
  EXPECT_EQ(origin[1], 6);
  EXPECT_EQ(extent[0], 2);
  EXPECT_EQ(extent[1], 1);

  EXPECT_FALSE(g.IsEdgeChunk(0, 1));
  EXPECT_TRUE(g.IsEdgeChunk(0, 2));
  EXPECT_TRUE(g.IsEdgeChunk(1, 2));
  EXPECT_TRUE(g.IsEdgeChunk(1, 3));  // past the end counts as cut
}

TEST(ChunkGridTest, RavelIsRowMajorAndUnravelInvertsIt) {
  const ChunkGrid g({10, 7}, {4, 3});
  const int64_t c[] = {2, 1};
  EXPECT_EQ(g.Ravel(c), 2 * 3 + 1);
  int64_t back[2];
  for (int64_t i = 0; i < g.ChunkCount(); ++i) {
    g.Unravel(i, back);
    EXPECT_EQ(back[0], i / 3);
    EXPECT_EQ(back[1], i % 3);
    EXPECT_EQ(g.Ravel(back), i);
  }
}

TEST(ChunkGridTest, OneElementDimensions) {
  const ChunkGrid g({1, 5, 1}, {1, 2, 3});
  EXPECT_EQ(g.chunk_count[0], 1);
  EXPECT_EQ(g.chunk_count[1], 3);
  EXPECT_EQ(g.chunk_count[2], 1);
  EXPECT_EQ(g.ChunkCount(), 3);
  const int64_t last[] = {0, 2, 0};
  int64_t origin[3], extent[3];
  g.ChunkBox(last, origin, extent);
  EXPECT_EQ(origin[1], 4);
  EXPECT_EQ(extent[0], 1);
  EXPECT_EQ(extent[1], 1);
  EXPECT_EQ(extent[2], 1);  // a chunk of 3 clipped to the one element
  EXPECT_TRUE(g.IsEdgeChunk(2, 0));
  EXPECT_FALSE(g.IsEdgeChunk(0, 0));
}

TEST(ChunkGridTest, RankOne) {
  const ChunkGrid whole({7}, {7});
  EXPECT_EQ(whole.ChunkCount(), 1);
  EXPECT_EQ(whole.ChunkExtent(0, 0), 7);
  EXPECT_FALSE(whole.IsEdgeChunk(0, 0));

  const ChunkGrid cut({7}, {3});
  EXPECT_EQ(cut.ChunkCount(), 3);
  EXPECT_EQ(cut.ChunkOrigin(0, 2), 6);
  EXPECT_EQ(cut.ChunkExtent(0, 2), 1);
  int64_t c;
  cut.Unravel(2, &c);
  EXPECT_EQ(c, 2);

  // An unbounded dimension 0 (shape 0) has no chunks yet; its chunks still unravel.
  const ChunkGrid unbounded({0, 4}, {2, 2});
  EXPECT_EQ(unbounded.chunk_count[0], 0);
  EXPECT_EQ(unbounded.ChunkCount(), 0);
  int64_t far[2];
  unbounded.Unravel(7, far);
  EXPECT_EQ(far[0], 3);
  EXPECT_EQ(far[1], 1);
}

TEST(ChunkGridTest, RankFiveBoxesTileTheArray) {
  // Counts (2, 1, 2, 3, 1); every element lies in exactly one clipped box.
  const std::vector<int64_t> shape = {3, 1, 4, 5, 2};
  const ChunkGrid g(shape, {2, 1, 3, 2, 2});
  const int64_t counts[] = {2, 1, 2, 3, 1};
  for (int d = 0; d < 5; ++d) EXPECT_EQ(g.chunk_count[d], counts[d]) << d;
  ASSERT_EQ(g.ChunkCount(), 12);
  const int64_t c[] = {1, 0, 1, 2, 0};
  EXPECT_EQ(g.Ravel(c), ((1 * 2 + 1) * 3 + 2));

  std::vector<int> hits(3 * 1 * 4 * 5 * 2, 0);
  for (int64_t i = 0; i < g.ChunkCount(); ++i) {
    int64_t chunk[5], origin[5], extent[5];
    g.Unravel(i, chunk);
    g.ChunkBox(chunk, origin, extent);
    for (int d = 0; d < 5; ++d) {
      EXPECT_GT(extent[d], 0);
      EXPECT_LE(origin[d] + extent[d], shape[d]);
    }
    int64_t e[5];
    for (e[0] = origin[0]; e[0] < origin[0] + extent[0]; ++e[0])
      for (e[1] = origin[1]; e[1] < origin[1] + extent[1]; ++e[1])
        for (e[2] = origin[2]; e[2] < origin[2] + extent[2]; ++e[2])
          for (e[3] = origin[3]; e[3] < origin[3] + extent[3]; ++e[3])
            for (e[4] = origin[4]; e[4] < origin[4] + extent[4]; ++e[4]) {
              ++hits[Ravel(5, shape.data(), e)];
              for (int d = 0; d < 5; ++d) EXPECT_EQ(g.ChunkOf(d, e[d]), chunk[d]);
            }
  }
  for (int h : hits) EXPECT_EQ(h, 1);
}

TEST(ChunkGridTest, ChunkOfSplitsACoordinate) {
  const ChunkGrid g({100}, {7});
  EXPECT_EQ(g.ChunkOf(0, int64_t{0}), 0);
  EXPECT_EQ(g.ChunkOf(0, int64_t{6}), 0);
  EXPECT_EQ(g.ChunkOf(0, int64_t{7}), 1);
  uint32_t offset = 0;
  EXPECT_EQ(g.ChunkOf<uint32_t>(0, 50, &offset), 7u);  // the narrow path of the CUDA scatter
  EXPECT_EQ(offset, 1u);
}

TEST(ChunkGridTest, ChunksTouchingABox) {
  const ChunkGrid g({10, 10}, {4, 3});
  const int64_t origin[] = {3, 3}, extent[] = {6, 1};
  int64_t first[2], count[2];
  g.ChunksTouching(origin, extent, first, count);
  EXPECT_EQ(first[0], 0);  // rows 3..8: chunks 0, 1, 2
  EXPECT_EQ(count[0], 3);
  EXPECT_EQ(first[1], 1);  // column 3 alone: chunk 1
  EXPECT_EQ(count[1], 1);
}

TEST(ChunkGridTest, ShardOfChunk) {
  // 10 x 7 in 2 x 3 chunks (5 x 3), 2 x 2 chunks per shard: 3 x 2 shards, the last ones partial.
  const ChunkGrid g({10, 7}, {2, 3}, {2, 2});
  EXPECT_EQ(g.chunk_count[0], 5);
  EXPECT_EQ(g.chunk_count[1], 3);
  EXPECT_EQ(g.shard_count[0], 3);
  EXPECT_EQ(g.shard_count[1], 2);
  EXPECT_EQ(g.ShardCount(), 6);
  EXPECT_EQ(g.ChunksPerShard(), 4);

  const int64_t a[] = {3, 1}, b[] = {4, 2};
  int64_t shard[2], position[2];
  g.ShardAndPosition(a, shard, position);
  EXPECT_EQ(shard[0], 1);
  EXPECT_EQ(shard[1], 0);
  EXPECT_EQ(position[0], 1);
  EXPECT_EQ(position[1], 1);
  EXPECT_EQ(g.SlotInShard(position), 3);
  g.ShardAndPosition(b, shard, position);
  EXPECT_EQ(shard[0], 2);
  EXPECT_EQ(shard[1], 1);
  EXPECT_EQ(g.SlotInShard(position), 0);
  EXPECT_EQ(g.ChunkInShard(0, 2, 0), 4);
  EXPECT_EQ(g.ChunkInShard(1, 0, 1), 1);

  // Every chunk goes back to itself through (shard, position) and through its slot.
  for (int64_t i = 0; i < g.ChunkCount(); ++i) {
    int64_t c[2], again[2];
    g.Unravel(i, c);
    g.ShardAndPosition(c, shard, position);
    g.PositionOfSlot(g.SlotInShard(position), again);
    for (int d = 0; d < 2; ++d) {
      EXPECT_EQ(again[d], position[d]);
      EXPECT_EQ(g.ChunkInShard(d, shard[d], position[d]), c[d]);
    }
  }

  const ChunkGrid unsharded({10, 7}, {2, 3});
  EXPECT_EQ(unsharded.ChunksPerShard(), 1);
  EXPECT_EQ(unsharded.ShardCount(), unsharded.ChunkCount());
}

TEST(ChunkGridTest, UnsignedGridNearTheLimitAndBeyondKMaxRank) {
  // HDF5's unlimited maximum dimension (2^64 - 1) divides without overflowing.
  using H5Grid = BasicChunkGrid<uint64_t, 32>;
  const H5Grid g({UINT64_MAX, 10}, {1, 4});
  EXPECT_EQ(g.chunk_count[0], UINT64_MAX);
  EXPECT_EQ(g.chunk_count[1], 3u);
  const H5Grid h({UINT64_MAX}, {10});
  EXPECT_EQ(h.chunk_count[0], UINT64_MAX / 10 + 1);

  const H5Grid wide(std::vector<uint64_t>(20, 3), std::vector<uint64_t>(20, 2));
  EXPECT_EQ(wide.rank, 20);
  EXPECT_EQ(wide.chunk_count[19], 2u);
  EXPECT_EQ(wide.ChunkCount(), uint64_t{1} << 20);
}

TEST(CeilDivTest, ExactNearTheLimit) {
  EXPECT_EQ(CeilDiv(int64_t{0}, int64_t{3}), 0);
  EXPECT_EQ(CeilDiv(int64_t{7}, int64_t{3}), 3);
  EXPECT_EQ(CeilDiv(int64_t{9}, int64_t{3}), 3);
  EXPECT_EQ(CeilDiv(INT64_MAX, int64_t{2}), int64_t{1} << 62);
  EXPECT_EQ(CeilDiv(UINT64_MAX, uint64_t{1}), UINT64_MAX);
}

}  // namespace
}  // namespace tessera::index
