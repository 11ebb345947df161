// The Zarr sink turns the writer's neutral shards into Zarr objects: it alone builds the shard
// index (offsets from the start of the object, shifted past the index when it goes first).
#include "tessera/zarr/zarr_sink.h"

#include <gtest/gtest.h>

#include "tessera/store/memory_store.h"
#include "tessera/zarr/array.h"
#include "tessera/zarr/array_options.h"

namespace tessera::zarr {
namespace {

// A 2 x 4 uint8 array of 1 x 2 chunks, 2 x 2 chunks per shard: one shard of four slots.
zarr::ArrayOptions OneShardOptions(IndexLocation location) {
  zarr::ArrayOptions o;
  o.dtype = DataType::kUInt8;
  o.shape = {2, 4};
  o.chunk_shape = {1, 2};
  o.chunks_per_shard = {2, 2};
  o.codec = "none";
  o.index_location = location;
  return o;
}

// Slots 0, 2, 3 hold chunks {1,2}, {5,6}, {7,8}; slot 1 is absent (fill value 0).
std::vector<stream::EncodedTile> ThreeOfFourSlots() {
  std::vector<stream::EncodedTile> slots(4);
  slots[0] = {Bytes{1, 2}, true};
  slots[1] = {Bytes{9, 9}, false};  // stale bytes of an absent slot: never stored
  slots[2] = {Bytes{5, 6}, true};
  slots[3] = {Bytes{7, 8}, true};
  return slots;
}

class ZarrSinkTest : public ::testing::TestWithParam<IndexLocation> {};

TEST_P(ZarrSinkTest, BuildsTheShardIndexFromTheSlots) {
  auto store = std::make_shared<MemoryStore>();
  const zarr::ArrayOptions o = OneShardOptions(GetParam());
  auto metadata = zarr::BuildArrayMetadata(o);
  ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
  auto sink = ZarrShardSink::Create(store, "a", *metadata);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  const std::vector<stream::EncodedTile> slots = ThreeOfFourSlots();
  const int64_t coords[] = {0, 0};
  stream::EncodedShard shard{coords, slots, 6};
  ASSERT_TRUE((*sink)->WriteShard(shard).ok());
  ASSERT_TRUE((*sink)->PublishRows(2).ok());

  auto object = store->Get("a/c/0/0");
  ASSERT_TRUE(object.ok() && object->has_value());
  const ShardingCodec* sharding = (*sink)->array().sharding();
  ASSERT_NE(sharding, nullptr);
  const size_t index_bytes = sharding->IndexEncodedSize(4);
  ASSERT_EQ((*object)->size(), index_bytes + 6);
  const size_t data_at = GetParam() == IndexLocation::kStart ? index_bytes : 0;
  EXPECT_EQ(Bytes((*object)->begin() + data_at, (*object)->begin() + data_at + 6), (Bytes{1, 2, 5, 6, 7, 8}));
  auto index = sharding->ReadIndexFromShard(**object, 4);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_TRUE(index->IsEmpty(1));
  EXPECT_EQ(index->offset(0), data_at);
  EXPECT_EQ(index->offset(2), data_at + 2);
  EXPECT_EQ(index->offset(3), data_at + 4);
  EXPECT_EQ(index->nbytes(3), 2u);

  auto array = zarr::ZarrArray::Open(store, "a");
  ASSERT_TRUE(array.ok()) << array.status().ToString();
  Bytes out(8);
  ASSERT_TRUE((*array)->Read(Hyperslab::All({2, 4}), out.data()).ok());
  EXPECT_EQ(out, (Bytes{1, 2, 0, 0, 5, 6, 7, 8}));
}

TEST_P(ZarrSinkTest, AShardWithNoPresentSlotErasesTheObject) {
  auto store = std::make_shared<MemoryStore>();
  auto sink = ZarrShardSink::Create(store, "a", *zarr::BuildArrayMetadata(OneShardOptions(GetParam())));
  ASSERT_TRUE(sink.ok());
  std::vector<stream::EncodedTile> slots = ThreeOfFourSlots();
  const int64_t coords[] = {0, 0};
  ASSERT_TRUE((*sink)->WriteShard(stream::EncodedShard{coords, slots, 6}).ok());
  ASSERT_TRUE(store->Get("a/c/0/0")->has_value());
  for (stream::EncodedTile& t : slots) t.present = false;
  ASSERT_TRUE((*sink)->WriteShard(stream::EncodedShard{coords, slots, 0}).ok());
  EXPECT_FALSE(store->Get("a/c/0/0")->has_value());
}

INSTANTIATE_TEST_SUITE_P(IndexLocations, ZarrSinkTest, ::testing::Values(IndexLocation::kStart, IndexLocation::kEnd));

TEST(ZarrSinkTest, UnshardedStoresTheOneSlotAsTheChunk) {
  auto store = std::make_shared<MemoryStore>();
  zarr::ArrayOptions o = OneShardOptions(IndexLocation::kEnd);
  o.chunks_per_shard.clear();
  auto sink = ZarrShardSink::Create(store, "", *zarr::BuildArrayMetadata(o));
  ASSERT_TRUE(sink.ok());
  const std::vector<stream::EncodedTile> slots{{Bytes{3, 4}, true}};
  const int64_t coords[] = {1, 1};
  ASSERT_TRUE((*sink)->WriteShard(stream::EncodedShard{coords, slots, 2}).ok());
  auto object = store->Get("c/1/1");
  ASSERT_TRUE(object.ok() && object->has_value());
  EXPECT_EQ(**object, (Bytes{3, 4}));
}

}  // namespace
}  // namespace tessera::zarr
