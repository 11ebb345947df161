// Coalesced reads of sharded arrays on a (simulated) object store: the values are those of the
// chunk-by-chunk path; a shard needed whole costs one request, and part of a shard its index
// request and one range request per run of nearby chunks.
#include "tessera/zarr/coalesced_read.h"

#include <gtest/gtest.h>

#include <random>

#include "tessera/store/memory_store.h"
#include "cpp_support/store_helpers.h"
#include "tessera/zarr/array_options.h"
#include "cpp_support/shard_helpers.h"

namespace tessera::zarr {
namespace {

// A uint16 array of `shape` in chunks of `chunk`, shards of `per_shard` chunks, holding
// pseudo-random values (incompressible when `noisy`, else a smooth ramp), on `store`.
std::unique_ptr<ZarrArray> MakeArray(std::shared_ptr<Store> store, std::vector<int64_t> shape,
                                     std::vector<int64_t> chunk, std::vector<int64_t> per_shard, bool noisy) {
  ArrayOptions o;
  o.dtype = DataType::kUInt16;
  o.shape = shape;
  o.chunk_shape = chunk;
  o.chunks_per_shard = per_shard;
  o.codec = noisy ? "none" : "zstd";
  auto metadata = BuildArrayMetadata(o);
  EXPECT_TRUE(metadata.ok());
  auto array = ZarrArray::Create(store, "", *metadata);
  EXPECT_TRUE(array.ok());
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  Bytes data(static_cast<size_t>(n) * 2);
  std::mt19937 rng(3);
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t v = noisy ? static_cast<uint16_t>(rng()) : static_cast<uint16_t>(i % 1000);
    data[2 * i] = static_cast<uint8_t>(v);
    data[2 * i + 1] = static_cast<uint8_t>(v >> 8);
  }
  EXPECT_TRUE((*array)->WriteRegion(std::vector<int64_t>(shape.size(), 0), shape, data).ok());
  return std::move(array).value();
}

// The same bytes on a store that reads chunk by chunk (no io_concurrency).
std::shared_ptr<MemoryStore> PlainCopy(const store_test::CountingStore& remote) {
  auto plain = std::make_shared<MemoryStore>();
  const std::vector<std::string> keys = *remote.memory.List("");
  for (const std::string& key : keys) EXPECT_TRUE(plain->Set(key, **remote.memory.Get(key)).ok());
  return plain;
}

Bytes Read(const ZarrArray& a, const Hyperslab& h) {
  Bytes out(static_cast<size_t>(h.NumElements()) * 2);
  Status st = a.Read(h, out.data());
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

TEST(CoalescedRead, SameValuesAsChunkByChunkReads) {
  auto remote = std::make_shared<store_test::CountingStore>(8, "remote");
  ASSERT_NE(MakeArray(remote, {37, 29, 23}, {4, 5, 3}, {3, 2, 4}, /*noisy=*/false), nullptr);
  auto opened = ZarrArray::Open(remote);
  ASSERT_TRUE(opened.ok());
  auto plain = ZarrArray::Open(PlainCopy(*remote));
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ((*plain)->BeginBatch({}), nullptr);
  ASSERT_EQ(Read(**opened, Hyperslab::All({37, 29, 23})), Read(**plain, Hyperslab::All({37, 29, 23})));
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    Hyperslab h = Hyperslab::All({37, 29, 23});
    for (auto& d : h.dims) {
      const int64_t extent = d.count;
      const int64_t step = (rng() % 4 == 0) ? -static_cast<int64_t>(1 + rng() % 3) : 1 + rng() % 3;
      const int64_t start = rng() % extent;
      const int64_t room = step > 0 ? (extent - 1 - start) / step : start / -step;
      d = index::DimSlice{start, step, 1 + static_cast<int64_t>(rng() % (room + 1))};
    }
    ASSERT_EQ(Read(**opened, h), Read(**plain, h)) << "trial " << trial;
  }
}

TEST(CoalescedRead, WholeShardsInOneRequestPartOfAShardInTheIndexAndOneRange) {
  auto remote = std::make_shared<store_test::CountingStore>(8, "remote");
  MakeArray(remote, {32, 32, 32}, {8, 8, 8}, {2, 2, 2}, /*noisy=*/true);  // 8 shards of 8 chunks
  auto a = ZarrArray::Open(remote);
  ASSERT_TRUE(a.ok());
  // Two chunks of one shard: its index, then one range for both.
  Hyperslab part = Hyperslab::All({32, 32, 32});
  part.dims[0] = index::DimSlice{0, 1, 16};
  part.dims[1] = index::DimSlice{0, 1, 8};
  part.dims[2] = index::DimSlice{0, 1, 8};
  remote->requests = 0;
  Read(**a, part);
  EXPECT_EQ(remote->requests.load(), 2);
  // Everything: each shard is needed whole, one GET apiece.
  auto fresh = ZarrArray::Open(remote);
  ASSERT_TRUE(fresh.ok());
  remote->requests = 0;
  Read(**fresh, Hyperslab::All({32, 32, 32}));
  EXPECT_EQ(remote->requests.load(), 8);
  // The indexes came with the shards: a later partial read needs one range request.
  remote->requests = 0;
  Read(**fresh, part);
  EXPECT_EQ(remote->requests.load(), 1);
}

TEST(CoalescedRead, DistantChunksOfAShardAreSeparateRequests) {
  auto remote = std::make_shared<store_test::CountingStore>(8, "remote");
  // Chunks of 1 x 512 x 1024 uint16 (1 MiB, incompressible), 4 to a shard along dimension 0.
  ASSERT_NE(MakeArray(remote, {4, 512, 1024}, {1, 512, 1024}, {4, 1, 1}, /*noisy=*/true), nullptr);
  const shard_test::ShardedGeometry g{{1, 512, 1024}, {4, 1, 1}, false};
  auto plain = ZarrArray::Open(PlainCopy(*remote));
  ASSERT_TRUE(plain.ok());
  struct Case {
    int64_t step;
    int requests;  // the index and the ranges
  };
  // Chunks 0 and 3 lie 2 MiB apart: a request each, none of the bytes of chunks 1 and 2 fetched.
  // Chunks 0 and 2 lie 1 MiB apart: one request, chunk 1's bytes with them.
  for (const Case c : {Case{3, 1 + 2}, Case{2, 1 + 1}}) {
    SCOPED_TRACE("step " + std::to_string(c.step));
    auto a = ZarrArray::Open(remote);
    ASSERT_TRUE(a.ok());
    Hyperslab h = Hyperslab::All({4, 512, 1024});
    h.dims[0] = index::DimSlice{0, c.step, 2};
    remote->ClearRequests();
    const Bytes got = Read(**a, h);
    EXPECT_EQ(remote->requests.load(), c.requests);
    shard_test::ExpectCoalescedRequests(*remote, g, h, CoalescedShardBatch::kMaxGapBytes, "");
    EXPECT_TRUE(got == Read(**plain, h));
  }
}

// Random selections (and ones inside one inner chunk, or striding over whole chunks) fetch from
// an object store only what they touch: checked against the shard indexes as stored.
TEST(CoalescedRead, RequestsHoldOnlyTheTouchedShardsAndInnerChunks) {
  auto remote = std::make_shared<store_test::CountingStore>(8, "remote");
  const std::vector<int64_t> shape = {37, 29, 23};
  ASSERT_NE(MakeArray(remote, shape, {4, 5, 3}, {3, 2, 4}, /*noisy=*/false), nullptr);
  const shard_test::ShardedGeometry g{{4, 5, 3}, {3, 2, 4}, false};  // shards of 12 x 10 x 12
  auto plain = ZarrArray::Open(PlainCopy(*remote));
  ASSERT_TRUE(plain.ok());
  std::vector<std::string> exprs = {"5:7, 6:9, 4:5",    // inside inner chunk (1, 1, 1)
                                    "::8, ::10, ::6",   // inner 0 2 4 6 8 x 0 2 4 x 0 2 4 6
                                    "13:24, 10:20, :12",  // shard (1, 1, 0) whole
                                    "::-12, 3, 22", ""};
  std::mt19937 rng(23);
  for (int trial = 0; trial < 60; ++trial) {
    std::string expr;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t start = rng() % shape[d], step = 1 + rng() % 9;
      const int64_t stop = start + 1 + rng() % (shape[d] - start);
      expr += (d ? ", " : "") + std::to_string(start) + ":" + std::to_string(stop) + ":" +
              std::to_string(rng() % 4 == 0 ? -step : step);
    }
    exprs.push_back(expr);
  }
  for (const std::string& expr : exprs) {
    SCOPED_TRACE(expr);
    Result<Hyperslab> h = ParseSliceExpression(expr, shape);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    auto a = ZarrArray::Open(remote);  // no shard index cached yet
    ASSERT_TRUE(a.ok());
    remote->ClearRequests();
    const Bytes got = Read(**a, *h);
    shard_test::ExpectCoalescedRequests(*remote, g, *h, CoalescedShardBatch::kMaxGapBytes, expr);
    EXPECT_TRUE(got == Read(**plain, *h));
  }
}

}  // namespace
}  // namespace tessera::zarr
