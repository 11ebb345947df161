#include "tessera/stream/layout.h"

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"

namespace tessera::stream {
namespace {

TEST(StreamLayoutTest, CameraFramesHandTable) {
  // 2048 x 2048 uint16 frames, 32 x 256 x 256 chunks, 1 x 4 x 4 chunks per shard.
  LayoutRequest r;
  r.dtype = DataType::kUInt16;
  r.shape = {0, 2048, 2048};
  r.tile_shape = {32, 256, 256};
  r.tiles_per_shard = {1, 4, 4};
  r.max_compressed_tile_bytes = 4 << 20;
  auto L = PlanStreamLayout(r);
  ASSERT_TRUE(L.ok()) << L.status().ToString();
  EXPECT_EQ(L->tile_count[1], 8);
  EXPECT_EQ(L->tiles_per_epoch, 64);
  EXPECT_EQ(L->shards_per_epoch, 4);
  EXPECT_EQ(L->tiles_per_shard_inner, 16);
  EXPECT_EQ(L->tiles_per_shard_total, 16);
  EXPECT_EQ(L->epoch_bytes, int64_t{32} * 2048 * 2048 * 2);
  EXPECT_EQ(L->tile_bytes, int64_t{32} * 256 * 256 * 2);
  EXPECT_EQ(L->epoch_count, 0);
  // Tile (t1, t2) = (1, 5): shard (0, 1), within (1, 1) -> position 1 * 16 + 1 * 4 + 1.
  EXPECT_EQ(L->permutation.Map(1 * 8 + 5), 16 + 5);
  EXPECT_EQ(L->ShardOfPosition(21), 1);
  EXPECT_EQ(L->SlotOfPosition(7, 21), 5);
}

TEST(StreamLayoutTest, EdgeShardsAndOuterShardRows) {
  // 10 x 5 x 7 uint8, tiles 4 x 2 x 3, 2 x 2 x 2 tiles per shard.
  LayoutRequest r;
  r.dtype = DataType::kUInt8;
  r.shape = {10, 5, 7};
  r.tile_shape = {4, 2, 3};
  r.tiles_per_shard = {2, 2, 2};
  auto L = PlanStreamLayout(r);
  ASSERT_TRUE(L.ok());
  EXPECT_EQ(L->tile_count[0], 3);
  EXPECT_EQ(L->tile_count[1], 3);
  EXPECT_EQ(L->tile_count[2], 3);
  EXPECT_EQ(L->shard_count[1], 2);
  EXPECT_EQ(L->shards_per_epoch, 4);
  EXPECT_EQ(L->tiles_per_epoch, 9);
  EXPECT_EQ(L->tiles_per_shard_total, 8);
  EXPECT_EQ(L->epoch_count, 3);
  EXPECT_EQ(L->epochs_per_shard, 2);
  // Tile (2, 2) is alone in shard (1, 1) at within (0, 0).
  EXPECT_EQ(L->permutation.Map(8), 3 * 4 + 0);
  // Epoch 1 is the second epoch of shard row 0: slots 4..7.
  EXPECT_EQ(L->SlotOfPosition(1, L->permutation.Map(0)), 4);
  EXPECT_EQ(L->SlotOfPosition(2, L->permutation.Map(0)), 0);
}

TEST(StreamLayoutTest, RejectsBadRequests) {
  LayoutRequest r;
  r.shape = {4, 0};
  r.tile_shape = {1, 1};
  r.tiles_per_shard = {1, 1};
  EXPECT_ERROR(PlanStreamLayout(r), ErrorKind::kInvalidArgument, "only dimension 0 may be 0",
               "dimension 1 is 0");
  r.shape = {4, 4};
  r.tile_shape = {0, 1};
  EXPECT_ERROR(PlanStreamLayout(r), ErrorKind::kInvalidArgument, "must be positive", "dimension 0 has chunk 0");
  r.tile_shape = {1, 1};
  r.tiles_per_shard = {1};
  EXPECT_ERROR(PlanStreamLayout(r), ErrorKind::kInvalidArgument, "one entry per dimension");
}

// Frames arriving t, z, c, y, x for an array stored t, c, z, y, x: the input side follows the
// arrival order (the epoch as it arrives, the scatter, a gather's source strides); the tiles and
// shards stay in stored order; the plan says so.
TEST(StreamLayoutTest, ArrivalOrderChangesOnlyTheInputSide) {
  LayoutRequest r;
  r.dtype = DataType::kUInt16;
  r.shape = {0, 3, 5, 64, 48};
  r.tile_shape = {2, 1, 2, 32, 16};
  r.tiles_per_shard = {1, 3, 1, 2, 3};
  r.arrival_order = {0, 2, 1, 3, 4};
  auto L = PlanStreamLayout(r);
  ASSERT_TRUE(L.ok()) << L.status().ToString();
  EXPECT_FALSE(L->ArrivesInStoredOrder());
  const int64_t expected_input[] = {2, 5, 3, 64, 48};
  for (int d = 0; d < 5; ++d) EXPECT_EQ(L->input_epoch_shape[d], expected_input[d]) << d;
  int64_t strides[kMaxRank];
  L->InputStridesByStoredDimension(strides);
  // The input is row-major over (2, 5, 3, 64, 48): z (stored 2) before c (stored 1).
  const int64_t expected_strides[] = {5 * 3 * 64 * 48, 64 * 48, 3 * 64 * 48, 48, 1};
  for (int d = 0; d < 5; ++d) EXPECT_EQ(strides[d], expected_strides[d]) << d;
  LayoutRequest stored_order = r;
  stored_order.arrival_order.clear();
  auto S = PlanStreamLayout(stored_order);
  ASSERT_TRUE(S.ok());
  EXPECT_TRUE(S->ArrivesInStoredOrder());
  EXPECT_EQ(L->tiles_per_epoch, S->tiles_per_epoch);
  EXPECT_EQ(L->planned_peak_bytes, S->planned_peak_bytes);
  // The scatter takes arriving coordinates (t, z, c, y, x) to the stored ones' tile-pool offset.
  const int64_t arriving[] = {1, 4, 2, 40, 17}, stored[] = {1, 2, 4, 40, 17};
  EXPECT_EQ(index::ScatterOffset(5, L->scatter, arriving), index::ScatterOffset(5, S->scatter, stored));
  EXPECT_NE(DescribePlan(*L, 1).find("arrival order:          0,2,1,3,4"), std::string::npos) << DescribePlan(*L, 1);
  EXPECT_EQ(DescribePlan(*S, 1).find("arrival order"), std::string::npos);
  // Set again (back to stored order): the stored scatter returns.
  ASSERT_TRUE(ApplyArrivalOrder(&*L, {}).ok());
  EXPECT_TRUE(L->ArrivesInStoredOrder());
  EXPECT_EQ(index::ScatterOffset(5, L->scatter, stored), index::ScatterOffset(5, S->scatter, stored));
}

TEST(StreamLayoutTest, RejectsBadArrivalOrders) {
  LayoutRequest r;
  r.shape = {4, 4, 4};
  r.tile_shape = {1, 2, 2};
  r.tiles_per_shard = {1, 1, 1};
  r.arrival_order = {0, 1};
  EXPECT_ERROR(PlanStreamLayout(r), ErrorKind::kInvalidArgument, "arrival_order: 0,1 has 2 entries for a rank-3 array");
  r.arrival_order = {0, 2, 2};
  EXPECT_ERROR(PlanStreamLayout(r), ErrorKind::kInvalidArgument, "arrival_order: must be a permutation of 0..2, not 0,2,2");
  r.arrival_order = {1, 0, 2};
  EXPECT_ERROR(PlanStreamLayout(r), ErrorKind::kInvalidArgument, "arrival_order: must start with 0");
  EXPECT_EQ(PlanStreamLayout(r).status().field(), "arrival_order");
}

}  // namespace
}  // namespace tessera::stream
