#include "tessera/zarr/zarr_region_target.h"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"
#include "cpp_support/store_helpers.h"
#include "tessera/codec/sharding_codec.h"
#include "tessera/store/file_store.h"
#include "tessera/store/memory_store.h"
#include "tessera/store/s3_store.h"

namespace tessera::zarr {
namespace {

using Coords = std::vector<int64_t>;
constexpr uint16_t kFill = 7;

// One way of storing an array: the codecs tessera encodes, sharded or not, where the shard index
// lives and how it is checked, and how chunk keys are spelled.
struct Layout {
  std::string name;
  bool sharded = true;
  std::string compressor = "zstd";  // none | gzip | zstd | blosc | lz4 | crc32c
  bool index_at_start = false;
  bool index_crc32c = true;
  bool transpose = false;
  char separator = '/';
  bool file_store = false;
  bool s3 = false;  // on the test S3 server (TESSERA_TEST_S3; skipped without one)
};

// Skips an S3 layout's test when no test server runs.
#define SKIP_WITHOUT_S3(layout)                                                                    \
  if ((layout).s3 && !store_test::FindTestS3Server())                                               \
  GTEST_SKIP() << "no S3 server: TESSERA_TEST_S3 is not set (the ctest fixture s3 starts one)"


void PrintTo(const Layout& layout, std::ostream* os) { *os << layout.name; }

nlohmann::json Compressors(const std::string& name) {
  if (name == "none") return nlohmann::json::array();
  if (name == "gzip") return {{{"name", "gzip"}, {"configuration", {{"level", 1}}}}};
  if (name == "zstd") return {{{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}};
  if (name == "blosc")
    return {{{"name", "blosc"},
             {"configuration",
              {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 2}, {"blocksize", 0}}}}};
  if (name == "lz4") return {{{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 1}}}}};
  return {{{"name", "crc32c"}}};
}

// zarr.json of a uint16 array with fill value 7.
nlohmann::json ArrayDocument(const Layout& layout, const Coords& shape, const Coords& chunk, const Coords& per_shard) {
  const int rank = static_cast<int>(shape.size());
  nlohmann::json inner = nlohmann::json::array();
  if (layout.transpose) {
    std::vector<int> order;
    for (int d = rank - 1; d >= 0; --d) order.push_back(d);
    inner.push_back({{"name", "transpose"}, {"configuration", {{"order", order}}}});
  }
  inner.push_back({{"name", "bytes"}, {"configuration", {{"endian", "little"}}}});
  for (const nlohmann::json& c : Compressors(layout.compressor)) inner.push_back(c);
  Coords grid_chunk = chunk;
  nlohmann::json codecs = inner;
  if (layout.sharded) {
    for (int d = 0; d < rank; ++d) grid_chunk[d] = chunk[d] * per_shard[d];
    nlohmann::json index_codecs = {{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}};
    if (layout.index_crc32c) index_codecs.push_back({{"name", "crc32c"}});
    codecs = {{{"name", "sharding_indexed"},
               {"configuration",
                {{"chunk_shape", chunk},
                 {"codecs", inner},
                 {"index_codecs", index_codecs},
                 {"index_location", layout.index_at_start ? "start" : "end"}}}}};
  }
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", "uint16"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", grid_chunk}}}}},
          {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", std::string(1, layout.separator)}}}}},
          {"fill_value", kFill},
          {"codecs", codecs},
          {"attributes", nlohmann::json::object()}};
}

// A store (memory or a temporary directory) holding one array.
struct Fixture {
  std::unique_ptr<store_test::ScopedTempDir> dir;
  std::shared_ptr<Store> store;
  std::unique_ptr<ZarrArray> array;
  bool s3 = false;

  Fixture(const Layout& layout, const Coords& shape, const Coords& chunk, const Coords& per_shard) {
    if (layout.file_store) {
      dir = std::make_unique<store_test::ScopedTempDir>();
      store = std::make_shared<FileStore>(dir->path());
    } else if (layout.s3) {
      static std::atomic<int> serial{0};
      const store_test::TestS3Server server = *store_test::FindTestS3Server();
      const std::string prefix = "zarr-region-target/" + std::to_string(::getpid()) + "-" + std::to_string(++serial);
      store = std::make_shared<S3Store>(server.bucket, prefix, server.config);
      s3 = true;
    } else {
      store = std::make_shared<MemoryStore>();
    }
    Result<ArrayMetadata> meta = ArrayMetadata::FromJson(ArrayDocument(layout, shape, chunk, per_shard));
    EXPECT_TRUE(meta.ok()) << meta.status().ToString();
    Result<std::unique_ptr<ZarrArray>> created = ZarrArray::Create(store, "", *meta);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    array = std::move(created).value();
  }

  ~Fixture() {
    if (!s3) return;  // the test's objects are removed from the shared bucket
    Result<std::vector<std::string>> keys = store->List("");
    if (keys.ok())
      for (const std::string& key : *keys) EXPECT_TRUE(store->Erase(key).ok()) << key;
  }

  // Everything, read through a freshly opened array (what another reader sees).
  std::vector<uint16_t> ReadFresh() const {
    Result<std::unique_ptr<ZarrArray>> fresh = ZarrArray::Open(store, "");
    EXPECT_TRUE(fresh.ok()) << fresh.status().ToString();
    return ReadAll(**fresh);
  }
  static std::vector<uint16_t> ReadAll(const ZarrArray& a) {
    std::vector<uint16_t> out(static_cast<size_t>(index::Product(a.metadata().rank(), a.shape().data())));
    Status st = a.Read(Hyperslab::All(a.shape()), reinterpret_cast<uint8_t*>(out.data()));
    EXPECT_TRUE(st.ok()) << st.ToString();
    return out;
  }
};

// numpy's a[selection] = values (C order over the selection's output shape) on a flat array.
void ApplyToModel(std::vector<uint16_t>& model, const Coords& shape, const Hyperslab& sel,
                  const std::vector<uint16_t>& values) {
  const int rank = static_cast<int>(shape.size());
  Coords counts(rank), k(rank), x(rank);
  for (int d = 0; d < rank; ++d) counts[d] = sel.dims[d].count;
  for (int64_t i = 0; i < sel.NumElements(); ++i) {
    index::Unravel(rank, counts.data(), i, k.data());
    for (int d = 0; d < rank; ++d) x[d] = sel.dims[d].start + k[d] * sel.dims[d].step;
    model[static_cast<size_t>(index::Ravel(rank, shape.data(), x.data()))] = values[static_cast<size_t>(i)];
  }
}

Hyperslab RandomSelection(const Coords& shape, std::mt19937& rng) {
  Hyperslab sel;
  for (int64_t extent : shape) {
    const int pick = static_cast<int>(rng() % 5);
    if (pick == 0) {
      sel.dims.push_back(index::DimSlice{static_cast<int64_t>(rng() % extent), 1, 1});
      sel.dropped.push_back(true);
      continue;
    }
    int64_t step = pick == 1 ? 1 + static_cast<int64_t>(rng() % 3) : 1;
    if (rng() % 3 == 0) step = -step;
    const int64_t a = static_cast<int64_t>(rng() % (extent + 1)), b = static_cast<int64_t>(rng() % (extent + 1));
    sel.dims.push_back(pick == 2 ? index::NormalizeSlice(extent, false, 0, false, 0, step)
                                 : index::NormalizeSlice(extent, true, std::min(a, b), true, std::max(a, b) + 1, step));
    sel.dropped.push_back(false);
  }
  return sel;
}

std::vector<Layout> Layouts() {
  std::vector<Layout> out;
  for (const char* c : {"none", "gzip", "zstd", "blosc", "lz4", "crc32c"}) {
    out.push_back(Layout{std::string("sharded_") + c, true, c});
    out.push_back(Layout{std::string("unsharded_") + c, false, c});
  }
  out.push_back(Layout{"sharded_index_at_start", true, "zstd", true});
  out.push_back(Layout{"sharded_index_without_crc32c", true, "gzip", false, false});
  out.push_back(Layout{"sharded_index_at_start_without_crc32c", true, "none", true, false});
  out.push_back(Layout{"sharded_transpose", true, "zstd", false, true, true});
  out.push_back(Layout{"unsharded_transpose", false, "blosc", false, true, true});
  out.push_back(Layout{"unsharded_dot_keys", false, "zstd", false, true, false, '.'});
  out.push_back(Layout{"sharded_dot_keys", true, "zstd", false, true, false, '.'});
  out.push_back(Layout{"file_sharded", true, "zstd", false, true, false, '/', true});
  out.push_back(Layout{"file_unsharded", false, "gzip", false, true, false, '/', true});
  out.push_back(Layout{"file_sharded_index_at_start", true, "blosc", true, true, true, '.', true});
  // Named S3... so that ctest runs them with the S3 server (its filter "*/S3*").
  out.push_back(Layout{"S3_sharded", true, "zstd", false, true, false, '/', false, true});
  out.push_back(Layout{"S3_unsharded", false, "gzip", false, true, false, '/', false, true});
  return out;
}

class ZarrRegionTargetTest : public ::testing::TestWithParam<Layout> {};

TEST_P(ZarrRegionTargetTest, RandomRegionWritesMatchModel) {
  const Layout& layout = GetParam();
  SKIP_WITHOUT_S3(layout);
  std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(layout.name)));
  for (int trial = 0; trial < 6; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    Coords shape(rank), chunk(rank), per_shard(rank);
    for (int d = 0; d < rank; ++d) {
      shape[d] = 1 + static_cast<int64_t>(rng() % (rank == 1 ? 40 : 13));
      chunk[d] = 1 + static_cast<int64_t>(rng() % 4);
      per_shard[d] = 1 + static_cast<int64_t>(rng() % 3);
    }
    Fixture f(layout, shape, chunk, per_shard);
    ZarrRegionTarget target(*f.array);
    std::vector<uint16_t> model(static_cast<size_t>(index::Product(rank, shape.data())), kFill);
    for (int batch = 0; batch < 4; ++batch) {
      const int n = 1 + static_cast<int>(rng() % 3);
      std::vector<std::vector<uint16_t>> values(n);
      std::vector<PendingWrite> writes;
      for (int i = 0; i < n; ++i) {
        Hyperslab sel = RandomSelection(shape, rng);
        values[i].resize(static_cast<size_t>(sel.NumElements()));
        const bool all_fill = rng() % 4 == 0;  // clears chunks again
        for (uint16_t& v : values[i]) v = all_fill ? kFill : static_cast<uint16_t>(rng() % 1000);
        writes.push_back(PendingWrite{sel, SourceView::Contiguous(values[i].data(), sel, 2)});
      }
      // Read through the array first, so its cached shard indexes would be stale after the write.
      ASSERT_EQ(Fixture::ReadAll(*f.array), model);
      ASSERT_TRUE(WriteSelections(target, writes).ok()) << layout.name;
      for (int i = 0; i < n; ++i) ApplyToModel(model, shape, writes[i].selection, values[i]);
      ASSERT_EQ(f.ReadFresh(), model) << layout.name << " trial " << trial << " batch " << batch;
      ASSERT_EQ(Fixture::ReadAll(*f.array), model) << "through the writing array: " << layout.name;
    }
  }
}

TEST_P(ZarrRegionTargetTest, UntouchedInnerChunksKeepTheirBytesAndFillChunksAreRemoved) {
  const Layout& layout = GetParam();
  SKIP_WITHOUT_S3(layout);
  // 8 x 8 in chunks of 2 x 2; sharded: shards of 2 x 2 chunks (4 x 4 elements).
  Fixture f(layout, {8, 8}, {2, 2}, {2, 2});
  ZarrRegionTarget target(*f.array);
  std::vector<uint16_t> all(64);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(100 + i);
  Hyperslab whole = Hyperslab::All({8, 8});
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{whole, SourceView::Contiguous(all.data(), whole, 2)}}}).ok());
  const std::string shard_key = f.array->ChunkKey({0, 0});
  const Bytes before = *f.store->Get(shard_key).value();

  // Element (0, 0) changes; chunk (0, 0) of the first object is rewritten, the rest kept.
  Hyperslab one = *ParseSliceExpression("0, 0", {8, 8});
  const uint16_t v = 5;
  SourceView scalar;
  scalar.base = reinterpret_cast<const uint8_t*>(&v);
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{one, scalar}}}).ok());
  all[0] = 5;
  EXPECT_EQ(f.ReadFresh(), all);
  if (layout.sharded) {
    const Bytes after = *f.store->Get(shard_key).value();
    const ShardingCodec& sharding = *f.array->sharding();
    const ShardIndex old_index = *sharding.ReadIndexFromShard(before, 4);
    const ShardIndex new_index = *sharding.ReadIndexFromShard(after, 4);
    for (size_t slot = 1; slot < 4; ++slot) {
      const Bytes old_chunk(before.begin() + old_index.offset(slot),
                            before.begin() + old_index.offset(slot) + old_index.nbytes(slot));
      const Bytes new_chunk(after.begin() + new_index.offset(slot),
                            after.begin() + new_index.offset(slot) + new_index.nbytes(slot));
      EXPECT_EQ(old_chunk, new_chunk) << "slot " << slot;
    }
    // Chunk (0, 1) (slot 1) all fill: its index entry becomes empty.
    Hyperslab chunk01 = *ParseSliceExpression("0:2, 2:4", {8, 8});
    const uint16_t fill = kFill;
    SourceView fill_source;
    fill_source.base = reinterpret_cast<const uint8_t*>(&fill);
    ASSERT_TRUE(WriteSelections(target, {{PendingWrite{chunk01, fill_source}}}).ok());
    const ShardIndex cleared = *sharding.ReadIndexFromShard(*f.store->Get(shard_key).value(), 4);
    EXPECT_TRUE(cleared.IsEmpty(1));
    EXPECT_FALSE(cleared.IsEmpty(0));
    // The whole shard all fill: the shard is removed.
    Hyperslab shard = *ParseSliceExpression("0:4, 0:4", {8, 8});
    ASSERT_TRUE(WriteSelections(target, {{PendingWrite{shard, fill_source}}}).ok());
    EXPECT_FALSE(f.store->Get(shard_key).value().has_value());
  } else {
    // Other chunks are untouched objects: their bytes are as they were.
    const std::string other = f.array->ChunkKey({0, 1});
    const Bytes other_before = *f.store->Get(other).value();
    ASSERT_TRUE(WriteSelections(target, {{PendingWrite{one, scalar}}}).ok());
    EXPECT_EQ(*f.store->Get(other).value(), other_before);
    const uint16_t fill = kFill;
    SourceView fill_source;
    fill_source.base = reinterpret_cast<const uint8_t*>(&fill);
    Hyperslab chunk00 = *ParseSliceExpression("0:2, 0:2", {8, 8});
    ASSERT_TRUE(WriteSelections(target, {{PendingWrite{chunk00, fill_source}}}).ok());
    EXPECT_FALSE(f.store->Get(shard_key).value().has_value());
  }
}

TEST_P(ZarrRegionTargetTest, ResizeShrinkThenGrowShowsFill) {
  const Layout& layout = GetParam();
  SKIP_WITHOUT_S3(layout);
  Fixture f(layout, {10, 7}, {2, 3}, {2, 2});
  ZarrRegionTarget target(*f.array);
  std::vector<uint16_t> all(70);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(1 + i);
  Hyperslab whole = Hyperslab::All({10, 7});
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{whole, SourceView::Contiguous(all.data(), whole, 2)}}}).ok());
  ASSERT_TRUE(target.Resize({3, 4}).ok());
  EXPECT_EQ(f.ReadFresh(), (std::vector<uint16_t>{1, 2, 3, 4, 8, 9, 10, 11, 15, 16, 17, 18}));
  // Objects wholly outside the new shape are gone.
  const Coords object_shape = f.array->metadata().chunk_shape;
  for (int64_t i = 0; i * object_shape[0] < 10; ++i)
    for (int64_t j = 0; j * object_shape[1] < 7; ++j)
      if (i * object_shape[0] >= 3 || j * object_shape[1] >= 4)
        EXPECT_FALSE(f.store->Get(f.array->ChunkKey({i, j})).value().has_value()) << i << "," << j;
  ASSERT_TRUE(target.Resize({10, 7}).ok());
  std::vector<uint16_t> expected(70, kFill);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) expected[r * 7 + c] = all[r * 7 + c];
  EXPECT_EQ(f.ReadFresh(), expected);
  EXPECT_EQ(Fixture::ReadAll(*f.array), expected);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ZarrRegionTargetTest, ::testing::ValuesIn(Layouts()),
                         [](const ::testing::TestParamInfo<Layout>& info) { return info.param.name; });

TEST(ZarrRegionTargetKeysTest, ChunksInObjectParsesEveryKeySpelling) {
  auto store = std::make_shared<MemoryStore>();
  for (char separator : {'/', '.'}) {
    for (bool sharded : {true, false}) {
      Layout layout{"keys", sharded, "none"};
      layout.separator = separator;
      // 10 x 7 in chunks of 2 x 3; shards of 2 x 2 chunks: 3 x 2 shards, the last ones clipped.
      Result<ArrayMetadata> meta = ArrayMetadata::FromJson(ArrayDocument(layout, {10, 7}, {2, 3}, {2, 2}));
      ASSERT_TRUE(meta.ok());
      std::unique_ptr<ZarrArray> array = std::move(ZarrArray::Create(store, "group/arr", *meta)).value();
      ZarrRegionTarget target(*array);
      const std::string last = target.ObjectOf(Coords{4, 2});
      EXPECT_EQ(last, std::string("group/arr/c") + separator + (sharded ? "2" : "4") + separator + (sharded ? "1" : "2"));
      EXPECT_EQ(target.ChunksInObject(last), 1);  // shard (2, 1) holds chunk (4, 2) only
      EXPECT_EQ(target.ChunksInObject(target.ObjectOf(Coords{0, 0})), sharded ? 4 : 1);
      EXPECT_EQ(target.ChunksInObject(target.ObjectOf(Coords{2, 2})), sharded ? 2 : 1);  // shard (1, 1)
      EXPECT_EQ(target.ChunksInObject("group/arr/zarr.json"), 0);
      EXPECT_EQ(target.ChunksInObject("other/c/0/0"), 0);
    }
  }
}

TEST(ZarrRegionTargetKeysTest, RankZeroArrayIsOneChunk) {
  Fixture f(Layout{"scalar", false, "zstd"}, {}, {}, {});
  ZarrRegionTarget target(*f.array);
  const uint16_t v = 1234;
  SourceView scalar;
  scalar.base = reinterpret_cast<const uint8_t*>(&v);
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{Hyperslab::All({}), scalar}}}).ok());
  EXPECT_EQ(f.ReadFresh(), std::vector<uint16_t>{1234});
  EXPECT_TRUE(f.store->Get("c").value().has_value());
  const uint16_t fill = kFill;
  scalar.base = reinterpret_cast<const uint8_t*>(&fill);
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{Hyperslab::All({}), scalar}}}).ok());
  EXPECT_FALSE(f.store->Get("c").value().has_value());
  EXPECT_EQ(f.ReadFresh(), std::vector<uint16_t>{kFill});
}

// Threads writing different elements of the same shards through one target at once (as an Array
// opened r+ does): every conditional write that lost a race is retried, so no element is lost.
TEST(ZarrRegionTargetConcurrencyTest, ConcurrentWritesOfOneShardLoseNothing) {
  for (bool file_store : {false, true}) {
    Layout layout{"concurrent", true, "zstd"};
    layout.file_store = file_store;
    Fixture f(layout, {8, 8}, {2, 2}, {2, 2});  // 2 x 2 shards
    ZarrRegionTarget target(*f.array);
    constexpr int kThreads = 4;
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        // Thread t owns columns t and t + 4: every shard is written by two threads.
        for (int row = 0; row < 8; ++row) {
          for (int col : {t, t + 4}) {
            const uint16_t v = static_cast<uint16_t>(100 + row * 8 + col);
            SourceView scalar;
            scalar.base = reinterpret_cast<const uint8_t*>(&v);
            Hyperslab one = *ParseSliceExpression(std::to_string(row) + ", " + std::to_string(col), {8, 8});
            if (!WriteSelections(target, {{PendingWrite{one, scalar}}}, {.threads = 1, .max_attempts = 1000}).ok())
              ++failures;
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    std::vector<uint16_t> expected(64);
    for (int i = 0; i < 64; ++i) expected[static_cast<size_t>(i)] = static_cast<uint16_t>(100 + i);
    EXPECT_EQ(f.ReadFresh(), expected) << (file_store ? "file store" : "memory store");
  }
}

TEST(ZarrRegionTargetErrorTest, CorruptShardNamesKeyAndRangeAndIsLeftUnchanged) {
  Fixture f(Layout{"sharded", true, "zstd"}, {8, 8}, {2, 2}, {2, 2});
  ZarrRegionTarget target(*f.array);
  std::vector<uint16_t> all(64, 300);
  Hyperslab whole = Hyperslab::All({8, 8});
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{whole, SourceView::Contiguous(all.data(), whole, 2)}}}).ok());
  const std::string key = f.array->ChunkKey({0, 0});
  Bytes shard = *f.store->Get(key).value();
  const ShardIndex index = *f.array->sharding()->ReadIndexFromShard(shard, 4);
  // Break inner chunk (0, 0)'s zstd frame (its first bytes: the magic number).
  shard[index.offset(0)] ^= 0xff;
  ASSERT_TRUE(f.store->Set(key, shard).ok());
  Hyperslab one = *ParseSliceExpression("0, 1", {8, 8});
  const uint16_t v = 5;
  SourceView scalar;
  scalar.base = reinterpret_cast<const uint8_t*>(&v);
  const std::string range = ByteRangeText(index.offset(0), index.offset(0) + index.nbytes(0));
  EXPECT_ERROR(WriteSelections(target, {{PendingWrite{one, scalar}}}), ErrorKind::kCorruptData, key, range,
               "inner chunk (0, 0)");
  EXPECT_EQ(*f.store->Get(key).value(), shard);

  // A broken index (crc32c mismatch) likewise.
  Bytes bad_index = shard;
  bad_index[bad_index.size() - 1] ^= 0xff;
  ASSERT_TRUE(f.store->Set(key, bad_index).ok());
  EXPECT_ERROR(WriteSelections(target, {{PendingWrite{one, scalar}}}), ErrorKind::kCorruptData, key);
  EXPECT_EQ(*f.store->Get(key).value(), bad_index);
}

// A memory store that lets another writer slip in between the engine's read and its conditional
// write, the first `races` times.
class RacingStore final : public Store {
 public:
  Result<std::optional<Bytes>> Get(const std::string& key) const override { return memory_.Get(key); }
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override {
    return memory_.GetRange(key, offset, length);
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override {
    return memory_.GetSuffix(key, length);
  }
  Result<std::optional<uint64_t>> Size(const std::string& key) const override { return memory_.Size(key); }
  Result<std::optional<VersionedValue>> GetVersioned(const std::string& key) const override {
    if (!keeps_generations) return ReadableStore::GetVersioned(key);  // kUnsupported, as HTTP-like stores
    return memory_.GetVersioned(key);
  }
  std::string Describe(const std::string& key) const override { return memory_.Describe(key); }
  Status Set(const std::string& key, ByteView value) override { return memory_.Set(key, value); }
  Status Erase(const std::string& key) override { return memory_.Erase(key); }
  Result<bool> SetPartsIf(const std::string& key, std::span<const ByteView> parts,
                          const WriteCondition& condition) override {
    ++conditional_writes;
    if (!keeps_generations) return WritableStore::SetPartsIf(key, parts, condition);
    if (races > 0) {
      --races;
      if (race) race();
    }
    return memory_.SetPartsIf(key, parts, condition);
  }
  Result<bool> EraseIf(const std::string& key, const WriteCondition& condition) override {
    ++conditional_writes;
    if (!keeps_generations) return WritableStore::EraseIf(key, condition);
    return memory_.EraseIf(key, condition);
  }
  Result<std::vector<std::string>> List(const std::string& prefix) const override { return memory_.List(prefix); }

  int races = 0;
  std::function<void()> race;
  bool keeps_generations = true;
  std::atomic<int> conditional_writes{0};

 private:
  MemoryStore memory_;
};

TEST(ZarrRegionTargetErrorTest, ConcurrentWriterOfTheSameShardIsNotLost) {
  auto store = std::make_shared<RacingStore>();
  Layout layout{"sharded", true, "zstd"};
  Result<ArrayMetadata> meta = ArrayMetadata::FromJson(ArrayDocument(layout, {4, 4}, {2, 2}, {2, 2}));
  ASSERT_TRUE(meta.ok());
  std::unique_ptr<ZarrArray> mine = std::move(ZarrArray::Create(store, "", *meta)).value();
  std::unique_ptr<ZarrArray> theirs = std::move(ZarrArray::Open(store, "")).value();
  ZarrRegionTarget my_target(*mine), their_target(*theirs);
  const uint16_t one = 1, two = 2;
  SourceView my_value, their_value;
  my_value.base = reinterpret_cast<const uint8_t*>(&one);
  their_value.base = reinterpret_cast<const uint8_t*>(&two);
  Hyperslab mine_sel = *ParseSliceExpression("0, 0", {4, 4}), theirs_sel = *ParseSliceExpression("3, 3", {4, 4});
  store->races = 1;
  store->race = [&] { ASSERT_TRUE(WriteSelections(their_target, {{PendingWrite{theirs_sel, their_value}}}).ok()); };
  ASSERT_TRUE(WriteSelections(my_target, {{PendingWrite{mine_sel, my_value}}}).ok());
  std::vector<uint16_t> out(16);
  ASSERT_TRUE((*ZarrArray::Open(store, ""))->Read(Hyperslab::All({4, 4}), reinterpret_cast<uint8_t*>(out.data())).ok());
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[15], 2);
  EXPECT_EQ(out[5], kFill);
}

// A store without generations: the target reads with Get and writes with SetParts / Erase (no
// cross-process protection there), and the values are still exact.
TEST(ZarrRegionTargetErrorTest, StoreWithoutGenerationsFallsBackToPlainWrites) {
  for (bool sharded : {true, false}) {
    auto store = std::make_shared<RacingStore>();
    store->keeps_generations = false;
    Layout layout{"plain", sharded, "zstd"};
    Result<ArrayMetadata> meta = ArrayMetadata::FromJson(ArrayDocument(layout, {6, 6}, {2, 2}, {2, 2}));
    ASSERT_TRUE(meta.ok());
    std::unique_ptr<ZarrArray> array = std::move(ZarrArray::Create(store, "", *meta)).value();
    ZarrRegionTarget target(*array);
    std::vector<uint16_t> model(36, kFill), values(36);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(i);
    for (const char* expr : {"1:5, 1:5", "::-2, 3", "0:6, 0:2"}) {
      Hyperslab sel = *ParseSliceExpression(expr, {6, 6});
      ASSERT_TRUE(WriteSelections(target, {{PendingWrite{sel, SourceView::Contiguous(values.data(), sel, 2)}}}).ok())
          << expr;
      std::vector<uint16_t> v(values.begin(), values.begin() + sel.NumElements());
      ApplyToModel(model, {6, 6}, sel, v);
    }
    std::vector<uint16_t> out(36);
    ASSERT_TRUE((*ZarrArray::Open(store, ""))->Read(Hyperslab::All({6, 6}), reinterpret_cast<uint8_t*>(out.data())).ok());
    EXPECT_EQ(out, model) << (sharded ? "sharded" : "unsharded");
    EXPECT_EQ(store->conditional_writes.load(), 0);
  }
}

}  // namespace
}  // namespace tessera::zarr
