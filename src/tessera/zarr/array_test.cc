#include "tessera/zarr/array.h"

#include <random>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"
#include "tessera/index/index.h"
#include "cpp_support/selection_helpers.h"
#include "tessera/store/memory_store.h"
#include "cpp_support/store_helpers.h"
#include "tessera/zarr/array_options.h"
#include "cpp_support/shard_helpers.h"

namespace tessera::zarr {
namespace {

// Reference selection: the flat source indices a hyperslab selects, in output order.
std::vector<int64_t> SelectedIndices(const std::vector<int64_t>& shape, const Hyperslab& sel) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> out;
  std::vector<int64_t> k(rank, 0);
  const int64_t n = sel.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, flat = 0;
    for (int d = rank - 1; d >= 0; --d) {
      k[d] = rem % sel.dims[d].count;
      rem /= sel.dims[d].count;
    }
    for (int d = 0; d < rank; ++d) flat = flat * shape[d] + sel.dims[d].start + k[d] * sel.dims[d].step;
    out.push_back(flat);
  }
  return out;
}

std::string RandomSliceExpr(std::mt19937& rng, const std::vector<int64_t>& shape) {
  std::string expr;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d) expr += ",";
    const int64_t n = shape[d];
    switch (rng() % 5) {
      case 0: expr += std::to_string(static_cast<int64_t>(rng() % n) - (rng() % 2 ? n : 0)); break;
      case 1: expr += ":"; break;
      default: {
        int64_t a = static_cast<int64_t>(rng() % (2 * n + 3)) - n - 1;
        int64_t b = static_cast<int64_t>(rng() % (2 * n + 3)) - n - 1;
        int64_t step = (1 + rng() % 4) * (rng() % 3 == 0 ? -1 : 1);
        expr += (rng() % 4 ? std::to_string(a) : "") + ":" + (rng() % 4 ? std::to_string(b) : "") + ":" + std::to_string(step);
      }
    }
  }
  return expr;
}

struct Geometry {
  std::vector<int64_t> shape, chunk, shard_chunks;
  std::string codec;
};

class ArrayRoundTripTest : public ::testing::TestWithParam<int> {};

TEST_P(ArrayRoundTripTest, RandomGeometriesWriteThenReadRandomSlices) {
  std::mt19937 rng(1000 + GetParam());
  const int rank = 1 + static_cast<int>(rng() % 5);
  ArrayOptions o;
  o.dtype = std::vector<DataType>{DataType::kUInt8, DataType::kInt16, DataType::kFloat32, DataType::kUInt64}[rng() % 4];
  for (int d = 0; d < rank; ++d) {
    o.shape.push_back(1 + rng() % (rank > 3 ? 6 : 17));
    o.chunk_shape.push_back(1 + rng() % 5);
  }
  if (rng() % 2) for (int d = 0; d < rank; ++d) o.chunks_per_shard.push_back(1 + rng() % 3);
  o.codec = std::vector<std::string>{"none", "zstd", "gzip", "blosc-lz4"}[rng() % 4];
  o.index_location = rng() % 2 ? IndexLocation::kStart : IndexLocation::kEnd;
  o.fill_value = 3;
  auto meta = BuildArrayMetadata(o);
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  auto store = std::make_shared<MemoryStore>();
  auto array = ZarrArray::Create(store, "arr", *meta);
  ASSERT_TRUE(array.ok()) << array.status().ToString();

  const int64_t n = index::Product(rank, o.shape.data());
  const size_t item = ItemSize(o.dtype);
  Bytes data(n * item);
  for (auto& b : data) b = static_cast<uint8_t>(rng() % 4 == 0 ? 0 : rng());
  // Make some chunks hold only the fill value.
  for (int64_t i = 0; i < n / 3; ++i) FillElements(data.data() + i * item, 1, (*array)->fill_value());
  // Write in two overlapping regions to exercise read-modify-write.
  std::vector<int64_t> origin(rank, 0), extent = o.shape;
  ASSERT_TRUE((*array)->WriteRegion(origin, extent, data).ok());
  std::vector<int64_t> o2(rank), e2(rank);
  for (int d = 0; d < rank; ++d) {
    o2[d] = rng() % o.shape[d];
    e2[d] = 1 + rng() % (o.shape[d] - o2[d]);
  }
  Bytes patch(index::Product(rank, e2.data()) * item);
  for (auto& b : patch) b = static_cast<uint8_t>(rng());
  ASSERT_TRUE((*array)->WriteRegion(o2, e2, patch).ok());
  // Expected array after the patch.
  {
    int64_t k[16] = {0};
    for (int64_t i = 0; i < index::Product(rank, e2.data()); ++i) {
      index::Unravel(rank, e2.data(), i, k);
      int64_t flat = 0;
      for (int d = 0; d < rank; ++d) flat = flat * o.shape[d] + o2[d] + k[d];
      std::memcpy(&data[flat * item], &patch[i * item], item);
    }
  }
  // Reopen from the store and read random slices.
  auto reopened = ZarrArray::Open(store, "arr");
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  for (int t = 0; t < 20; ++t) {
    std::string expr = t == 0 ? "" : RandomSliceExpr(rng, o.shape);
    auto sel = ParseSliceExpression(expr, o.shape);
    ASSERT_TRUE(sel.ok()) << expr << " " << sel.status().ToString();
    Bytes out(sel->NumElements() * item);
    Status st = (*reopened)->Read(*sel, out.data(), ReadOptions{1 + static_cast<int>(rng() % 3)});
    ASSERT_TRUE(st.ok()) << st.ToString();
    auto idx = SelectedIndices(o.shape, *sel);
    for (size_t i = 0; i < idx.size(); ++i)
      ASSERT_EQ(std::memcmp(&out[i * item], &data[idx[i] * item], item), 0) << "slice " << expr << " element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Random, ArrayRoundTripTest, ::testing::Range(0, 60));

// Chunks of several zstd blocks (512 KiB), read through slices that end early in the chunk (the
// reader then stops decoding at the slice's last element), at its end, and reversed: every value
// exact, sharded and not.
TEST(ArrayTest, PartialDecodesOfMultiBlockChunksAreExact) {
  std::mt19937 rng(77);
  for (bool sharded : {false, true}) {
    ArrayOptions o;
    o.dtype = DataType::kUInt16;
    o.shape = {100, 70, 66};
    o.chunk_shape = {64, 64, 64};
    if (sharded) o.chunks_per_shard = {2, 1, 2};
    o.codec = "zstd";
    auto meta = BuildArrayMetadata(o);
    ASSERT_TRUE(meta.ok()) << meta.status().ToString();
    auto store = std::make_shared<MemoryStore>();
    auto array = ZarrArray::Create(store, "", *meta);
    ASSERT_TRUE(array.ok()) << array.status().ToString();
    const int64_t n = index::Product(3, o.shape.data());
    std::vector<uint16_t> data(n);
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<uint16_t>((i / 7) % 5000 + rng() % 8);
    ASSERT_TRUE((*array)->WriteRegion({0, 0, 0}, o.shape, ByteView(reinterpret_cast<const uint8_t*>(data.data()), data.size() * 2)).ok());
    for (int t = 0; t < 40; ++t) {
      std::string expr;
      if (t % 2 == 0) {  // a box that starts at a chunk's origin and ends inside it
        const int64_t z0 = 64 * (rng() % 2), z1 = z0 + 1 + rng() % 30;
        expr = std::to_string(z0) + ":" + std::to_string(z1) + ", " + std::to_string(rng() % 20) + ":" +
               std::to_string(20 + rng() % 50) + ", :" + std::to_string(1 + rng() % 66);
      } else {
        expr = RandomSliceExpr(rng, o.shape);
      }
      auto sel = ParseSliceExpression(expr, o.shape);
      ASSERT_TRUE(sel.ok()) << expr;
      std::vector<uint16_t> out(sel->NumElements());
      ASSERT_TRUE((*array)->Read(*sel, reinterpret_cast<uint8_t*>(out.data())).ok()) << expr;
      auto idx = SelectedIndices(o.shape, *sel);
      for (size_t i = 0; i < idx.size(); ++i) ASSERT_EQ(out[i], data[idx[i]]) << expr << " element " << i;
    }
  }
}

TEST(ArrayTest, UntouchedChunksAndInnerChunksKeepTheirBytes) {
  ArrayOptions o;
  o.dtype = DataType::kUInt16;
  o.shape = {8, 8};
  o.chunk_shape = {2, 2};
  o.chunks_per_shard = {2, 2};
  o.codec = "none";  // fixed-size inner chunks: 2 x 2 x 2 bytes
  auto store = std::make_shared<MemoryStore>();
  auto array = ZarrArray::Create(store, "", *BuildArrayMetadata(o));
  ASSERT_TRUE(array.ok());
  std::vector<uint16_t> all(64);
  for (int i = 0; i < 64; ++i) all[i] = static_cast<uint16_t>(i + 1);
  ASSERT_TRUE((*array)->WriteRegion({0, 0}, {8, 8}, ByteView(reinterpret_cast<uint8_t*>(all.data()), 128)).ok());
  auto before_other = store->Get("c/1/1");
  auto before_shard = store->Get("c/0/0");
  ASSERT_TRUE(before_other.ok() && before_other->has_value());
  // Overwrite one element inside inner chunk (0,0) of shard (0,0).
  uint16_t v = 999;
  ASSERT_TRUE((*array)->WriteRegion({1, 1}, {1, 1}, ByteView(reinterpret_cast<uint8_t*>(&v), 2)).ok());
  EXPECT_EQ(**store->Get("c/1/1"), **before_other);
  Bytes after = **store->Get("c/0/0");
  ASSERT_EQ(after.size(), (*before_shard)->size());
  // Inner chunks (0,1),(1,0),(1,1) are stored after (0,0) and are byte-identical.
  EXPECT_TRUE(std::equal(after.begin() + 8, after.begin() + 32, (*before_shard)->begin() + 8));
  auto sel = ParseSliceExpression("1,1", o.shape);
  uint16_t got = 0;
  ASSERT_TRUE((*array)->Read(*sel, reinterpret_cast<uint8_t*>(&got)).ok());
  EXPECT_EQ(got, 999);
}

// Another writer (here a second ZarrArray on the same store, as another process would be) replaces
// a shard after a reader cached its index: the reader's next chunk read finds the index changed and
// reads the chunk again, instead of decoding bytes of the new shard at the old offsets.
TEST(ArrayTest, ReadsRecoverFromAShardReplacedAfterItsIndexWasCached) {
  ArrayOptions o;
  o.dtype = DataType::kUInt16;
  o.shape = {32, 32};
  o.chunk_shape = {16, 16};
  o.chunks_per_shard = {2, 2};
  o.codec = "zstd";
  auto store = std::make_shared<MemoryStore>();
  auto writer = ZarrArray::Create(store, "", *BuildArrayMetadata(o)).value();
  std::vector<uint16_t> all(32 * 32, 7);  // every inner chunk compresses to a few bytes
  ASSERT_TRUE(writer->WriteRegion({0, 0}, {32, 32}, ByteView(reinterpret_cast<uint8_t*>(all.data()), 2048)).ok());
  auto reader = ZarrArray::Open(store).value();
  uint16_t got = 0;
  ASSERT_TRUE(reader->Read(*ParseSliceExpression("31,31", o.shape), reinterpret_cast<uint8_t*>(&got)).ok());
  EXPECT_EQ(got, 7);  // the reader now holds the shard's index
  // Inner chunk (0, 0) becomes noise, which does not compress: every later chunk moves.
  std::vector<uint16_t> noise(16 * 16);
  std::mt19937 rng(5);
  for (auto& x : noise) x = static_cast<uint16_t>(rng());
  ASSERT_TRUE(writer->WriteRegion({0, 0}, {16, 16}, ByteView(reinterpret_cast<uint8_t*>(noise.data()), 512)).ok());
  const uint16_t marker = 4242;
  ASSERT_TRUE(writer->WriteRegion({31, 31}, {1, 1}, ByteView(reinterpret_cast<const uint8_t*>(&marker), 2)).ok());
  ASSERT_TRUE(reader->Read(*ParseSliceExpression("31,31", o.shape), reinterpret_cast<uint8_t*>(&got)).ok());
  EXPECT_EQ(got, 4242);
  ASSERT_TRUE(reader->Read(*ParseSliceExpression("0,1", o.shape), reinterpret_cast<uint8_t*>(&got)).ok());
  EXPECT_EQ(got, noise[1]);
}

TEST(ArrayTest, FillOnlyChunksAreNotStored) {
  ArrayOptions o;
  o.dtype = DataType::kUInt8;
  o.shape = {4, 4};
  o.chunk_shape = {2, 2};
  auto store = std::make_shared<MemoryStore>();
  auto array = ZarrArray::Create(store, "", *BuildArrayMetadata(o));
  Bytes zeros(16, 0);
  zeros[15] = 1;
  ASSERT_TRUE((*array)->WriteRegion({0, 0}, {4, 4}, zeros).ok());
  auto keys = store->List("c");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(*keys, std::vector<std::string>{"c/1/1"});
}

TEST(ArrayTest, SliceErrors) {
  std::vector<int64_t> shape = {4, 5};
  // Each error quotes the expression and names the offending entry.
  EXPECT_ERROR(ParseSliceExpression("4", shape), ErrorKind::kOutOfRange, "slice \"4\"", "index 4",
               "dimension 0 of extent 4");
  EXPECT_ERROR(ParseSliceExpression("-5", shape), ErrorKind::kOutOfRange, "slice \"-5\"", "index -5",
               "dimension 0 of extent 4");
  EXPECT_ERROR(ParseSliceExpression("1,2,3", shape), ErrorKind::kOutOfRange, "slice \"1,2,3\"", "3 entries",
               "rank 2");
  EXPECT_ERROR(ParseSliceExpression("::0", shape), ErrorKind::kInvalidArgument, "slice \"::0\"",
               "step cannot be zero");
  EXPECT_ERROR(ParseSliceExpression("a:b", shape), ErrorKind::kInvalidArgument, "slice \"a:b\"",
               "\"a\" is not an integer");
  EXPECT_ERROR(ParseSliceExpression("1:2:3:4", shape), ErrorKind::kInvalidArgument, "too many ':' in \"1:2:3:4\"");
  auto ok = ParseSliceExpression("-1, 10:-10:-2", shape);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->OutputShape(), std::vector<int64_t>{3});
}

TEST(ArrayTest, CorruptShardErrorsNameKeyAndRange) {
  ArrayOptions o;
  o.dtype = DataType::kUInt8;
  o.shape = {4};
  o.chunk_shape = {2};
  o.chunks_per_shard = {2};
  o.codec = "none";
  auto store = std::make_shared<MemoryStore>();
  auto array = ZarrArray::Create(store, "", *BuildArrayMetadata(o));
  Bytes data = {1, 2, 3, 4};
  ASSERT_TRUE((*array)->WriteRegion({0}, {4}, data).ok());
  Bytes shard = **store->Get("c/0");
  shard[6] ^= 0xff;  // inside the index
  ASSERT_TRUE(store->Set("c/0", shard).ok());
  auto reopened = ZarrArray::Open(store, "");
  Bytes out(4);
  Status st = (*reopened)->Read(Hyperslab::All({4}), out.data());
  EXPECT_ERROR(st, ErrorKind::kCorruptData, "memory://c/0", "index at bytes [4, 40)", "checksum");
}


// ---- What a read fetches: a CountingStore records every request, and the expected requests are
// worked out from the chunk grid, the selection and (sharded) the shard indexes as stored.

using store_test::CountingStore;
using store_test::StoreRequest;

// Writes a uint16 array of `o`'s geometry whose values are never the fill value 0, except in the
// boxes `zeros` ([origin, origin + extent) each), and returns its values (C order).
std::vector<uint16_t> WriteNonFill(const std::shared_ptr<CountingStore>& store, ArrayOptions o,
                                   const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>& zeros) {
  o.dtype = DataType::kUInt16;
  o.fill_value = 0;
  auto meta = BuildArrayMetadata(o);
  EXPECT_TRUE(meta.ok()) << meta.status().ToString();
  auto array = ZarrArray::Create(store, "", *meta);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  const int rank = static_cast<int>(o.shape.size());
  const int64_t n = index::Product(rank, o.shape.data());
  std::vector<uint16_t> data(static_cast<size_t>(n));
  std::mt19937 rng(17);
  int64_t k[kMaxRank];
  for (int64_t i = 0; i < n; ++i) {
    data[i] = static_cast<uint16_t>(1 + rng() % 60000);
    index::Unravel(rank, o.shape.data(), i, k);
    for (const auto& [origin, extent] : zeros) {
      bool inside = true;
      for (int d = 0; d < rank; ++d) inside = inside && k[d] >= origin[d] && k[d] < origin[d] + extent[d];
      if (inside) data[i] = 0;
    }
  }
  EXPECT_TRUE((*array)->WriteRegion(std::vector<int64_t>(rank, 0), o.shape,
                                    ByteView(reinterpret_cast<const uint8_t*>(data.data()), data.size() * 2))
                  .ok());
  return data;
}

// Reads `expr` from a freshly opened array (no shard index cached yet) after forgetting the
// requests so far, and checks the values.
Hyperslab ReadFresh(const std::shared_ptr<CountingStore>& store, const std::vector<int64_t>& shape,
                    const std::vector<uint16_t>& data, const std::string& expr) {
  auto array = ZarrArray::Open(store);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  Result<Hyperslab> sel = ParseSliceExpression(expr, shape);
  EXPECT_TRUE(sel.ok()) << expr << ": " << sel.status().ToString();
  store->ClearRequests();
  std::vector<uint16_t> out(static_cast<size_t>(sel->NumElements()));
  Status st = (*array)->Read(*sel, reinterpret_cast<uint8_t*>(out.data()), ReadOptions{3});
  EXPECT_TRUE(st.ok()) << expr << ": " << st.ToString();
  const std::vector<int64_t> idx = SelectedIndices(shape, *sel);
  for (size_t i = 0; i < idx.size(); ++i) {
    EXPECT_EQ(out[i], data[idx[i]]) << expr << " element " << i;
    if (out[i] != data[idx[i]]) break;
  }
  return *sel;
}

// Fixed selections (inside one chunk; strided steps that skip whole chunks in every dimension;
// reversed; an integer index; everything), an empty one (no request at all) and 40 random
// non-empty ones.
std::vector<std::string> Selections(const std::vector<int64_t>& shape, const std::vector<std::string>& fixed) {
  std::vector<std::string> out = fixed;
  out.push_back("3:3");
  std::mt19937 rng(5);
  while (out.size() < fixed.size() + 41) {
    const std::string expr = RandomSliceExpr(rng, shape);
    if (ParseSliceExpression(expr, shape)->NumElements() > 0) out.push_back(expr);
  }
  return out;
}

TEST(ArrayReadRequests, UnshardedReadsGetExactlyTheTouchedChunks) {
  auto store = std::make_shared<CountingStore>();
  ArrayOptions o;
  o.shape = {20, 30, 12};
  o.chunk_shape = {4, 5, 6};  // a 5 x 6 x 2 grid
  o.codec = "zstd";
  // Chunk (0, 1, 0) holds only the fill value and is not stored: reading it asks for it anyway.
  const std::vector<uint16_t> data = WriteNonFill(store, o, {{{0, 5, 0}, {4, 5, 6}}});
  ASSERT_EQ(*store->memory.Size("c/0/1/0"), std::nullopt);
  for (const std::string& expr : Selections(o.shape, {"2:3, 7:9, 1:4",       // inside chunk (0, 1, 0)
                                                      "13, 21:24, 7",        // inside chunk (3, 4, 1)
                                                      "::8, ::10, ::7",      // chunks 0 2 4 x 0 2 4 x 0 1
                                                      "1:20:9, 3:30:12, 5",  // 0 2 4 x 0 3 5 x 0
                                                      "::-9, 29:0:-13, :",   // 4 2 0 x 5 3 0 x 0 1
                                                      ""})) {
    SCOPED_TRACE(expr);
    const Hyperslab sel = ReadFresh(store, o.shape, data, expr);
    std::vector<StoreRequest> expected;
    for (const std::vector<int64_t>& c : selection_test::ChunksOf(sel, o.chunk_shape)) {
      const std::string key = "c/" + selection_test::Join(c);
      const std::optional<uint64_t> size = *store->memory.Size(key);
      expected.push_back({StoreRequest::Op::kGet, key, 0, size.value_or(0), size.has_value()});
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(store->SortedRequests(), expected);
  }
}

// Sharded, read chunk by chunk (a local store): per touched shard its index, then exactly the
// byte ranges of the touched inner chunks; nothing of the other inner chunks or shards.
TEST(ArrayReadRequests, ShardedReadsFetchTheIndexAndOnlyTheTouchedInnerChunks) {
  for (bool index_at_start : {false, true}) {
    SCOPED_TRACE(index_at_start ? "index at start" : "index at end");
    auto store = std::make_shared<CountingStore>();
    ArrayOptions o;
    o.shape = {16, 24, 20};
    o.chunk_shape = {4, 4, 5};       // inner chunks: a 4 x 6 x 4 grid
    o.chunks_per_shard = {2, 3, 2};  // shards of 8 x 12 x 10: a 2 x 2 x 2 grid
    o.codec = "zstd";                // inner chunks of different sizes
    o.index_location = index_at_start ? IndexLocation::kStart : IndexLocation::kEnd;
    // Inner chunk (0, 1, 0) and all of shard (1, 1, 1) hold only the fill value: not stored.
    const std::vector<uint16_t> data =
        WriteNonFill(store, o, {{{0, 4, 0}, {4, 4, 5}}, {{8, 12, 10}, {8, 12, 10}}});
    ASSERT_EQ(*store->memory.Size("c/1/1/1"), std::nullopt);
    const shard_test::ShardedGeometry g{o.chunk_shape, o.chunks_per_shard, index_at_start};
    ASSERT_TRUE(g.ParseIndex(**store->memory.Get("c/0/0/0"))[g.Slot({0, 1, 0})].empty());
    for (const std::string& expr : Selections(o.shape, {"5:7, 13:15, 11:14",  // inside inner chunk (1, 3, 2)
                                                        "::8, ::8, ::10",      // inner 0 2 x 0 2 4 x 0 2
                                                        "3::5, 1::9, 4::15",   // inner 0 2 3 x 0 2 4 x 0 3
                                                        "1:3, 5, 2:4",         // the absent inner chunk
                                                        "9:12, 13:20, 12:18",  // the absent shard
                                                        "::-1, 7, ::-6", ""})) {
      SCOPED_TRACE(expr);
      const Hyperslab sel = ReadFresh(store, o.shape, data, expr);
      EXPECT_EQ(store->SortedRequests(), shard_test::ExpectedChunkByChunk(*store, g, sel));
    }
  }
}

}  // namespace
}  // namespace tessera::zarr
