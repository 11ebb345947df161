#include "tessera/stream/stream_writer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <string_view>

#include <gtest/gtest.h>

#include "tessera/codec/registry.h"
#include "cpp_support/status_matchers.h"
#include "cpp_support/store_helpers.h"
#include "tessera/index/index.h"
#include "tessera/store/file_store.h"
#include "tessera/store/memory_store.h"
#include "tessera/zarr/zarr_stream.h"
#include "tessera/zarr/array.h"

namespace tessera::stream {
namespace {

// These cases drive the writer through the Zarr driver's stream (the simplest whole sink).
using zarr::OpenZarrStream;
using zarr::ZarrSinkAndWriter;

// Streams `data` in random-sized appends (or in `appends`, the last one taking the rest), then
// checks the array equals what a region write of the same data produces, byte for byte per stored
// object, and reads back exactly.
// `store`: a MemoryStore when null (whole shards); a FileStore has the sink write each shard's
// chunks into the shard's file as they are encoded (ShardSink::BeginShard).
void StreamAndCompare(const zarr::ArrayOptions& options, const Bytes& data, std::mt19937& rng, int threads,
                      bool flush_midway, const std::vector<size_t>& appends = {}, int input_buffers = 2,
                      std::shared_ptr<Store> store = nullptr) {
  if (!store) store = std::make_shared<MemoryStore>();
  StreamWriterOptions wo;
  wo.threads = threads;
  wo.input_buffers = input_buffers;
  auto zs = OpenZarrStream(store, "s", options, wo);
  ASSERT_TRUE(zs.ok()) << zs.status().ToString();
  size_t pos = 0;
  bool flushed = false;
  if (appends.empty() && rng() % 3 == 0) {
    // Pull mode: the writer hands out its own buffer; the reader fills random amounts.
    auto read = [&](MutableByteView dst) -> Result<size_t> {
      const size_t n = std::min({dst.size(), data.size() - pos, size_t{1} + rng() % (data.size() / 2 + 1)});
      std::memcpy(dst.data(), data.data() + pos, n);
      pos += n;
      return n;
    };
    Result<int64_t> taken = zs->writer->AppendFrom(read);
    ASSERT_TRUE(taken.ok()) << taken.status().ToString();
    ASSERT_EQ(*taken, static_cast<int64_t>(data.size()));
  }
  for (size_t call = 0; pos < data.size(); ++call) {
    size_t n = std::min<size_t>(data.size() - pos, rng() % 3 == 0 ? 1 : 1 + rng() % (data.size() / 3 + 1));
    if (!appends.empty()) n = call + 1 < appends.size() ? std::min(appends[call], data.size() - pos) : data.size() - pos;
    ASSERT_TRUE(zs->writer->Append(ByteView(data.data() + pos, n)).ok());
    pos += n;
    if (flush_midway && !flushed && pos > data.size() / 2) {
      ASSERT_TRUE(zs->writer->Flush().ok());
      flushed = true;
    }
  }
  Status st = zs->writer->Close();
  ASSERT_TRUE(st.ok()) << st.ToString();

  // Reference: the region-write path.
  zarr::ArrayOptions ref_options = options;
  const int64_t row_elements = index::Product(static_cast<int>(options.shape.size()) - 1, options.shape.data() + 1);
  const size_t item = ItemSize(options.dtype);
  ref_options.shape[0] = static_cast<int64_t>(data.size() / item) / row_elements;
  auto ref = zarr::ZarrArray::Create(store, "r", *zarr::BuildArrayMetadata(ref_options));
  ASSERT_TRUE(ref.ok());
  std::vector<int64_t> origin(options.shape.size(), 0);
  ASSERT_TRUE((*ref)->WriteRegion(origin, ref_options.shape, data).ok());

  auto stream_keys = store->List("s/c");
  auto ref_keys = store->List("r/c");
  ASSERT_TRUE(stream_keys.ok() && ref_keys.ok());
  ASSERT_EQ(stream_keys->size(), ref_keys->size());
  for (size_t i = 0; i < ref_keys->size(); ++i) {
    ASSERT_EQ((*stream_keys)[i].substr(1), (*ref_keys)[i].substr(1));
    EXPECT_EQ(**store->Get((*stream_keys)[i]), **store->Get((*ref_keys)[i])) << (*stream_keys)[i];
  }
  auto reopened = zarr::ZarrArray::Open(store, "s");
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ((*reopened)->shape(), ref_options.shape);
  Bytes out(data.size());
  ASSERT_TRUE((*reopened)->Read(Hyperslab::All(ref_options.shape), out.data()).ok());
  EXPECT_EQ(out, data);
}

// A random array (any rank up to 5, dtype, chunking, sharding, codec, fill, bounded or not) and
// random values for it (a third of them zero).
void RandomCase(std::mt19937& rng, zarr::ArrayOptions* options, Bytes* values) {
  zarr::ArrayOptions& o = *options;
  const int rank = 1 + static_cast<int>(rng() % 5);
  o.dtype = std::vector<DataType>{DataType::kUInt8, DataType::kUInt16, DataType::kFloat32, DataType::kInt64}[rng() % 4];
  for (int d = 0; d < rank; ++d) {
    o.shape.push_back(1 + rng() % (rank > 3 ? 5 : 13));
    o.chunk_shape.push_back(1 + rng() % 4);
  }
  if (rng() % 4) for (int d = 0; d < rank; ++d) o.chunks_per_shard.push_back(1 + rng() % 3);
  o.codec = std::vector<std::string>{"none", "zstd", "gzip", "blosc-lz4", "blosc-zstd"}[rng() % 5];
  o.index_location = rng() % 2 ? IndexLocation::kStart : IndexLocation::kEnd;
  o.fill_value = static_cast<int>(rng() % 2);
  const int64_t rows = o.shape[0];
  if (rng() % 2) o.shape[0] = 0;  // unbounded
  int64_t n = rows;
  for (int d = 1; d < rank; ++d) n *= o.shape[d];
  values->resize(n * ItemSize(o.dtype));
  for (auto& b : *values) b = rng() % 3 == 0 ? 0 : static_cast<uint8_t>(rng());
}

class StreamWriterRandomTest : public ::testing::TestWithParam<int> {};

TEST_P(StreamWriterRandomTest, MatchesRegionWritesByteForByte) {
  std::mt19937 rng(500 + GetParam());
  zarr::ArrayOptions o;
  Bytes data;
  RandomCase(rng, &o, &data);
  StreamAndCompare(o, data, rng, 1 + static_cast<int>(rng() % 3), rng() % 3 == 0);
}

INSTANTIATE_TEST_SUITE_P(Random, StreamWriterRandomTest, ::testing::Range(0, 80));

// Appends that start an epoch and hold one or more whole epochs are encoded from the caller's
// memory (compressing codecs); appends that leave the epoch boundary, flushes and the last, short
// epoch of a bounded array go through the epoch buffers. Both, in any mix, give the same bytes.
class StreamWriterWholeEpochTest : public ::testing::TestWithParam<int> {};

TEST_P(StreamWriterWholeEpochTest, MatchesRegionWritesByteForByte) {
  std::mt19937 rng(900 + GetParam());
  zarr::ArrayOptions o;
  Bytes data;
  RandomCase(rng, &o, &data);
  const int rank = static_cast<int>(o.shape.size());
  const size_t epoch =
      static_cast<size_t>(o.chunk_shape[0] * index::Product(rank - 1, o.shape.data() + 1)) * ItemSize(o.dtype);
  std::vector<size_t> appends;
  for (size_t planned = 0; planned < data.size();) {
    size_t n = epoch * (1 + rng() % 3);
    if (rng() % 4 == 0) {  // off the boundary and back onto it
      const size_t off = 1 + rng() % epoch;
      appends.push_back(off);
      n = epoch - off + (off == epoch ? 0 : epoch * (rng() % 2));
    }
    if (n > 0) appends.push_back(n);
    planned = 0;
    for (size_t a : appends) planned += a;
  }
  StreamAndCompare(o, data, rng, 1 + static_cast<int>(rng() % 3), rng() % 4 == 0, appends);
}

INSTANTIATE_TEST_SUITE_P(Random, StreamWriterWholeEpochTest, ::testing::Range(0, 60));

// On a file store each shard's chunks are written into its file as they are encoded, the index
// last (ZarrShardSink::BeginShard): the same bytes as whole shards, with random appends, flushes
// inside shard rows, whole epochs from the caller's memory, edge shards and the short last shard
// row of a bounded array; no temporary file is left behind.
class StreamWriterFileStoreTest : public ::testing::TestWithParam<int> {};

TEST_P(StreamWriterFileStoreTest, ShardsWrittenAsEncodedMatchRegionWrites) {
  std::mt19937 rng(1700 + GetParam());
  zarr::ArrayOptions o;
  Bytes data;
  RandomCase(rng, &o, &data);
  store_test::ScopedTempDir dir;
  auto store = std::make_shared<FileStore>(dir.path());
  std::vector<size_t> appends;
  if (GetParam() % 2) {  // whole epochs (encoded from the caller's memory when compressed)
    const int rank = static_cast<int>(o.shape.size());
    const size_t epoch =
        static_cast<size_t>(o.chunk_shape[0] * index::Product(rank - 1, o.shape.data() + 1)) * ItemSize(o.dtype);
    for (size_t planned = 0; planned < data.size(); planned += appends.back()) appends.push_back(epoch * (1 + rng() % 2));
  }
  StreamAndCompare(o, data, rng, 1 + static_cast<int>(rng() % 3), rng() % 3 == 0, appends, 2, store);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
}

INSTANTIATE_TEST_SUITE_P(Random, StreamWriterFileStoreTest, ::testing::Range(0, 60));

// Appends of many MiB are scattered by several threads when the encoder is idle (codec none
// mostly is): odd byte counts, edge tiles and a non-zero fill must come out as with small appends.
TEST(StreamWriterTest, LargeAppendsScatteredInParallelMatchRegionWrites) {
  for (const char* codec : {"none", "zstd"}) {
    SCOPED_TRACE(codec);
    zarr::ArrayOptions o;
    o.dtype = DataType::kUInt16;
    o.shape = {0, 1040, 1100};
    o.chunk_shape = {4, 64, 96};  // epochs of 9.2 MiB
    o.chunks_per_shard = {2, 2, 3};
    o.codec = codec;
    o.fill_value = 7;
    std::mt19937 rng(codec[0]);
    Bytes data(11 * 1040 * 1100 * 2);  // 2 3/4 epochs
    for (auto& b : data) b = rng() % 5 == 0 ? 7 : static_cast<uint8_t>(rng());
    // An element split across calls, then large spans (the first epoch's while the encoder is
    // idle for certain).
    StreamAndCompare(o, data, rng, 3, false, {1, 9u << 20, 3, 9u << 20});
  }
}

// With one epoch per shard row, a complete epoch's compressed tiles are copied over their own
// input in the epoch buffer and the shard borrows them there; edge tiles (whose padding keeps the
// fill value), encodings longer than the tile (noise), all-fill tiles, flushes of partial epochs
// and one or two input buffers must all come out as region writes do.
TEST(StreamWriterTest, EncodingsOverTheirInputMatchRegionWrites) {
  for (const char* codec : {"blosc-zstd", "zstd", "blosc-lz4"}) {
    for (int input_buffers : {1, 2}) {
      for (int fill : {0, 3}) {
        SCOPED_TRACE(std::string(codec) + " input_buffers " + std::to_string(input_buffers) + " fill " +
                     std::to_string(fill));
        zarr::ArrayOptions o;
        o.dtype = DataType::kUInt16;
        o.shape = {0, 40, 45};
        o.chunk_shape = {4, 16, 16};    // edge tiles along y and x
        o.chunks_per_shard = {1, 2, 2};  // one epoch per shard row
        o.codec = codec;
        o.fill_value = fill;
        std::mt19937 rng(static_cast<unsigned>(input_buffers * 10 + fill + std::string_view(codec).size() * 100));
        const int64_t rows = 15;  // 3 3/4 epochs
        Bytes data(static_cast<size_t>(rows * 40 * 45 * 2));
        auto* values = reinterpret_cast<uint16_t*>(data.data());
        for (int64_t t = 0; t < rows; ++t)
          for (int64_t y = 0; y < 40; ++y)
            for (int64_t x = 0; x < 45; ++x) {
              uint16_t& v = values[(t * 40 + y) * 45 + x];
              if (y < 16 && x < 16) v = static_cast<uint16_t>(fill);  // an all-fill tile
              else if (t >= 8 && t < 12) v = static_cast<uint16_t>(rng());  // incompressible epoch
              else v = static_cast<uint16_t>(100 + t + y + x);  // compressible
            }
        StreamAndCompare(o, data, rng, 2, /*flush_midway=*/true, {}, input_buffers);
      }
    }
  }
}

TEST(StreamWriterTest, ByteIdenticalAcrossThreadCounts) {
  zarr::ArrayOptions o;
  o.dtype = DataType::kUInt16;
  o.shape = {0, 40, 30};
  o.chunk_shape = {4, 8, 8};
  o.chunks_per_shard = {2, 2, 2};
  o.codec = "zstd";
  std::mt19937 rng(9);
  Bytes data(20 * 40 * 30 * 2);
  for (auto& b : data) b = static_cast<uint8_t>(rng() % 16);
  std::vector<std::vector<Bytes>> results;
  for (int threads : {1, 2, 4}) {
    auto store = std::make_shared<MemoryStore>();
    StreamWriterOptions wo;
    wo.threads = threads;
    auto zs = OpenZarrStream(store, "", o, wo);
    ASSERT_TRUE(zs.ok());
    ASSERT_TRUE(zs->writer->Append(data).ok());
    ASSERT_TRUE(zs->writer->Close().ok());
    std::vector<Bytes> objects;
    auto keys = store->List("");
    ASSERT_TRUE(keys.ok());
    for (const auto& k : *keys) objects.push_back(**store->Get(k));
    results.push_back(objects);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

TEST(StreamWriterTest, BoundedStreamRejectsTooMuchAndTooLittle) {
  zarr::ArrayOptions o;
  o.dtype = DataType::kUInt8;
  o.shape = {4, 4};
  o.chunk_shape = {2, 2};
  auto store = std::make_shared<MemoryStore>();
  auto zs = OpenZarrStream(store, "", o, {});
  ASSERT_TRUE(zs.ok());
  Bytes too_much(17, 1);
  EXPECT_ERROR(zs->writer->Append(too_much), ErrorKind::kInvalidArgument, "appending 17 bytes after 0",
               "declared shape's 16 bytes");
  Bytes some(12, 1);
  ASSERT_TRUE(zs->writer->Append(some).ok());
  EXPECT_ERROR(zs->writer->Close(), ErrorKind::kInvalidArgument, "stream ended after 12 bytes",
               "the declared shape needs 16");
}

// Records the shards and extents the writer hands to its sink.
// A uint8 stream's layout (tiles of `tile` elements, `tiles_per_shard` of them a shard) and the tile
// encoder of `codecs` for it, zero fill.
struct Uint8Plan {
  StreamLayout layout;
  std::shared_ptr<const CodecChainTileEncoder> encoder;
};

Result<Uint8Plan> PlanUint8(std::vector<int64_t> shape, std::vector<int64_t> tile, std::vector<int64_t> tiles_per_shard,
                            const nlohmann::json& codecs, int64_t max_compressed_tile_bytes) {
  LayoutRequest r;
  r.dtype = DataType::kUInt8;
  r.shape = std::move(shape);
  r.tile_shape = tile;
  r.tiles_per_shard = std::move(tiles_per_shard);
  r.max_compressed_tile_bytes = max_compressed_tile_bytes;
  TESSERA_ASSIGN_OR_RETURN(StreamLayout layout, PlanStreamLayout(r));
  const ChunkSpec tile_spec{DataType::kUInt8, std::move(tile), ZeroFill(DataType::kUInt8)};
  TESSERA_ASSIGN_OR_RETURN(CodecChain chain, ParseCodecChain(codecs, tile_spec));
  auto encoder = MakeTileEncoder(std::move(chain), layout, ZeroFill(DataType::kUInt8));
  return Uint8Plan{std::move(layout), std::move(encoder)};
}

class RecordingSink final : public ShardSink {
 public:
  struct Shard {
    std::vector<int64_t> coords;
    std::vector<EncodedTile> slots;
    int64_t stored_bytes = 0;
  };
  Status WriteShard(const EncodedShard& shard) override {
    std::lock_guard<std::mutex> lock(mu_);
    // Kept past the call, so borrowed encodings are copied.
    std::vector<EncodedTile> slots(shard.slots.size());
    for (size_t k = 0; k < slots.size(); ++k) {
      const ByteView encoding = shard.slots[k].encoding();
      slots[k].bytes.assign(encoding.begin(), encoding.end());
      slots[k].present = shard.slots[k].present;
    }
    shards_.push_back({std::vector<int64_t>(shard.coords.begin(), shard.coords.end()), std::move(slots),
                       shard.stored_bytes});
    return Status::Ok();
  }
  Status PublishRows(int64_t rows) override {
    std::lock_guard<std::mutex> lock(mu_);
    published_.push_back(rows);
    return Status::Ok();
  }
  // The shards received, ordered by coordinates.
  std::vector<Shard> shards() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Shard> s = shards_;
    std::sort(s.begin(), s.end(), [](const Shard& a, const Shard& b) { return a.coords < b.coords; });
    return s;
  }
  std::vector<int64_t> published() {
    std::lock_guard<std::mutex> lock(mu_);
    return published_;
  }

 private:
  std::mutex mu_;
  std::vector<Shard> shards_;
  std::vector<int64_t> published_;
};

// A 4 x 6 uint8 array of 2 x 2 tiles, 2 x 2 tiles per shard, codec bytes: the sink gets two
// shards of four slots each, slot k = tile (k / 2, k % 2) of the shard's box, the tile's bytes
// unchanged. Tile (1, 0) is all zero (absent); the second shard's right column lies past the array.
TEST(StreamWriterTest, SinkReceivesNeutralShards) {
  auto plan = PlanUint8({4, 6}, {2, 2}, {2, 2}, nlohmann::json::array({{{"name", "bytes"}}}), 4);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  Bytes data(24);
  for (int64_t i = 0; i < 24; ++i) data[i] = static_cast<uint8_t>(1 + i);
  for (int64_t row : {2, 3})
    for (int64_t col : {0, 1}) data[row * 6 + col] = 0;
  RecordingSink sink;
  StreamWriterOptions wo;
  wo.threads = 2;
  EXPECT_TRUE(plan->encoder->gathers_in_place());
  auto writer = StreamWriter::Create(plan->layout, plan->encoder, ZeroFill(DataType::kUInt8), &sink, wo);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Append(data).ok());
  ASSERT_TRUE((*writer)->Close().ok());

  const auto tile = [&](int64_t tr, int64_t tc) {
    Bytes t;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) t.push_back(data[(2 * tr + i) * 6 + 2 * tc + j]);
    return t;
  };
  const std::vector<RecordingSink::Shard> shards = sink.shards();
  ASSERT_EQ(shards.size(), 2u);
  EXPECT_EQ(shards[0].coords, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(shards[1].coords, (std::vector<int64_t>{0, 1}));
  const bool present[2][4] = {{true, true, false, true}, {true, false, true, false}};
  for (int s = 0; s < 2; ++s) {
    ASSERT_EQ(shards[s].slots.size(), 4u);
    int64_t stored = 0;
    for (int k = 0; k < 4; ++k) {
      ASSERT_EQ(shards[s].slots[k].present, present[s][k]) << "shard " << s << " slot " << k;
      if (!present[s][k]) continue;
      const ByteView encoding = shards[s].slots[k].encoding();
      EXPECT_EQ(Bytes(encoding.begin(), encoding.end()), tile(k / 2, 2 * s + k % 2)) << "shard " << s << " slot " << k;
      stored += static_cast<int64_t>(encoding.size());
    }
    EXPECT_EQ(shards[s].stored_bytes, stored);
  }
  EXPECT_EQ(sink.published(), (std::vector<int64_t>{4}));
  EXPECT_EQ((*writer)->stats().bytes_out, 5 * 4);
}

// A sink that stores shards as their slots are encoded (ShardSink::BeginShard), recording the
// order in which slots arrive, and whole shards (WriteShard, a flush's partial versions).
class AppendingSink final : public ShardSink {
 public:
  struct Finished {
    std::vector<int64_t> coords;
    std::vector<Bytes> encodings;  // per slot, in the order appended; empty when absent
  };
  class Writer final : public ShardWriter {
   public:
    Writer(AppendingSink* sink, std::vector<int64_t> coords) : sink_(sink) { shard_.coords = std::move(coords); }
    Status Append(std::span<const EncodedTile> slots) override {
      for (const EncodedTile& t : slots) {
        const ByteView e = t.encoding();
        shard_.encodings.push_back(t.present ? Bytes(e.begin(), e.end()) : Bytes());
      }
      return Status::Ok();
    }
    Status Finish() override {
      std::lock_guard<std::mutex> lock(sink_->mu_);
      sink_->finished_.push_back(shard_);
      return Status::Ok();
    }

   private:
    AppendingSink* sink_;
    Finished shard_;
  };

  Result<std::unique_ptr<ShardWriter>> BeginShard(std::span<const int64_t> coords) override {
    return std::unique_ptr<ShardWriter>(new Writer(this, std::vector<int64_t>(coords.begin(), coords.end())));
  }
  Status WriteShard(const EncodedShard& shard) override { return whole_.WriteShard(shard); }
  Status PublishRows(int64_t rows) override { return whole_.PublishRows(rows); }

  std::vector<Finished> finished() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Finished> f = finished_;
    std::sort(f.begin(), f.end(), [](const Finished& a, const Finished& b) { return a.coords < b.coords; });
    return f;
  }
  RecordingSink& whole() { return whole_; }

 private:
  std::mutex mu_;
  std::vector<Finished> finished_;
  RecordingSink whole_;
};

// Shards two epochs deep, the second shard column half past the array's edge, zstd: each complete
// shard is appended slot by slot in slot order and finished once, with the slots a whole-shard
// sink receives; a flush inside the second shard row stores that row's partial shards whole, and
// the row is still appended and finished once complete.
TEST(StreamWriterTest, CompleteShardsAreAppendedSlotBySlotAndFlushesStoredWhole) {
  auto plan = PlanUint8({0, 6}, {2, 2}, {2, 2}, nlohmann::json::array({{{"name", "bytes"}}, {{"name", "zstd"}}}), 64);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  Bytes data(8 * 6);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(1 + i);
  for (int64_t col : {2, 3}) data[6 * 6 + col] = data[7 * 6 + col] = 0;  // tile (3, 1): absent
  const auto run = [&](ShardSink* sink, bool flush_at_5) {
    StreamWriterOptions wo;
    wo.threads = 2;
    auto writer = StreamWriter::Create(plan->layout, plan->encoder, ZeroFill(DataType::kUInt8), sink, wo);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    const size_t cut = flush_at_5 ? 5 * 6 : data.size();
    ASSERT_TRUE((*writer)->Append(ByteView(data).first(cut)).ok());
    if (flush_at_5) {
      ASSERT_TRUE((*writer)->Flush().ok());
      ASSERT_TRUE((*writer)->Append(ByteView(data).subspan(cut)).ok());
    }
    ASSERT_TRUE((*writer)->Close().ok());
  };
  RecordingSink whole;
  run(&whole, false);
  const std::vector<RecordingSink::Shard> expected = whole.shards();
  ASSERT_EQ(expected.size(), 4u);
  for (bool flush : {false, true}) {
    SCOPED_TRACE(flush ? "flushed at row 5" : "no flush");
    AppendingSink sink;
    run(&sink, flush);
    const std::vector<AppendingSink::Finished> finished = sink.finished();
    ASSERT_EQ(finished.size(), 4u);
    for (size_t s = 0; s < 4; ++s) {
      EXPECT_EQ(finished[s].coords, expected[s].coords);
      ASSERT_EQ(finished[s].encodings.size(), 4u);  // each slot appended once
      for (size_t k = 0; k < 4; ++k) {
        const ByteView e = expected[s].slots[k].encoding();
        EXPECT_EQ(finished[s].encodings[k], expected[s].slots[k].present ? Bytes(e.begin(), e.end()) : Bytes())
            << "shard " << s << " slot " << k;
      }
    }
    // Tile (3, 1) is absent; the edge shard's right column has no tile.
    EXPECT_TRUE(finished[3].encodings[3].empty());
    EXPECT_TRUE(finished[1].encodings[1].empty() && finished[1].encodings[3].empty());
    const std::vector<RecordingSink::Shard> flushed = sink.whole().shards();
    if (!flush) {
      EXPECT_TRUE(flushed.empty());
      EXPECT_EQ(sink.whole().published(), (std::vector<int64_t>{4, 8}));
    } else {  // the second shard row, rows 4..5 (row 5 padded), stored whole by the flush
      ASSERT_EQ(flushed.size(), 2u);
      EXPECT_EQ(flushed[0].coords, (std::vector<int64_t>{1, 0}));
      EXPECT_EQ(flushed[1].coords, (std::vector<int64_t>{1, 1}));
      EXPECT_EQ(sink.whole().published(), (std::vector<int64_t>{4, 5, 8}));
    }
  }
}

// A shard row of more shards two epochs deep than the process's share of open files (at most 1024)
// would hold a file open per shard across the row: it is stored in whole shards. Shards one epoch
// deep are filled one after another, so any number of them is appended slot by slot.
TEST(StreamWriterTest, WideRowsOfDeepShardsAreStoredWhole) {
  for (int64_t depth : {1, 2}) {
    SCOPED_TRACE(depth);
    auto plan =
        PlanUint8({0, 1100}, {2, 1}, {depth, 1}, nlohmann::json::array({{{"name", "bytes"}}, {{"name", "zstd"}}}), 64);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    AppendingSink sink;
    auto writer =
        StreamWriter::Create(plan->layout, plan->encoder, ZeroFill(DataType::kUInt8), &sink, StreamWriterOptions{});
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->Append(Bytes(4 * 1100, 9)).ok());
    ASSERT_TRUE((*writer)->Close().ok());
    EXPECT_EQ(sink.finished().size(), depth == 1 ? 2200u : 0u);
    EXPECT_EQ(sink.whole().shards().size(), depth == 1 ? 0u : 1100u);
  }
}

// A FileStore seen through a wrapper that counts the in-place files it opens and can make their
// writes fail after a number of successful ones ("disk full").
class InPlaceFileStore final : public Store {
 public:
  InPlaceFileStore(const std::string& root, int writes_before_failing = -1)
      : inner_(root), writes_left_(writes_before_failing) {}
  Result<std::optional<Bytes>> Get(const std::string& key) const override { return inner_.Get(key); }
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override {
    return inner_.GetRange(key, offset, length);
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override {
    return inner_.GetSuffix(key, length);
  }
  Result<std::optional<uint64_t>> Size(const std::string& key) const override { return inner_.Size(key); }
  std::string Describe(const std::string& key) const override { return inner_.Describe(key); }
  Status Set(const std::string& key, ByteView value) override { return inner_.Set(key, value); }
  Status SetParts(const std::string& key, std::span<const ByteView> parts) override {
    return inner_.SetParts(key, parts);
  }
  Status Erase(const std::string& key) override { return inner_.Erase(key); }
  Result<std::vector<std::string>> List(const std::string& prefix) const override { return inner_.List(prefix); }
  bool writes_in_place() const override { return true; }
  Result<std::unique_ptr<WritableFile>> OpenInPlaceFile(const std::string& key) override {
    ++opened_;
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, inner_.OpenInPlaceFile(key));
    return std::unique_ptr<WritableFile>(new CountdownFile(std::move(file), &writes_left_));
  }
  int opened() const { return opened_; }

 private:
  class CountdownFile final : public WritableFile {
   public:
    CountdownFile(std::unique_ptr<WritableFile> inner, std::atomic<int>* left) : inner_(std::move(inner)), left_(left) {}
    Status WriteAt(uint64_t offset, ByteView bytes) override {
      if (left_->fetch_sub(1) == 0) return IoError("disk full writing " + inner_->Describe());
      return inner_->WriteAt(offset, bytes);
    }
    Status Truncate(uint64_t size) override { return inner_->Truncate(size); }
    Status Commit() override { return inner_->Commit(); }
    void Abandon() override { inner_->Abandon(); }
    std::string Describe() const override { return inner_->Describe(); }

   private:
    std::unique_ptr<WritableFile> inner_;
    std::atomic<int>* left_;
  };
  FileStore inner_;
  std::atomic<int> writes_left_;  // negative: never fail (fetch_sub never meets 0 again)
  std::atomic<int> opened_{0};
};

// Shards two epochs deep on a file store are written in place (a file per shard of a row) and
// equal whole-shard region writes. When a write into a shard's file fails mid-row, the stream
// fails naming it, no shard is committed with the slots it had (every shard file that exists is
// byte for byte the whole-shard one), the published rows read back, and no temporary file stays.
TEST(StreamWriterTest, ShardFilesWrittenInPlaceAndAFailedWriteCommitsNoShard) {
  zarr::ArrayOptions o;
  o.dtype = DataType::kUInt16;
  o.shape = {0, 8, 12};
  o.chunk_shape = {2, 4, 4};
  o.chunks_per_shard = {2, 1, 2};  // 2 x 2 shards a row (the second cut by the edge), 2 epochs deep
  o.codec = "zstd";
  Bytes data(16 * 8 * 12 * 2);
  std::mt19937 rng(7);
  for (auto& b : data) b = static_cast<uint8_t>(rng() % 7);
  store_test::ScopedTempDir dir;
  {
    auto store = std::make_shared<InPlaceFileStore>(dir.path() + "/ok");
    StreamAndCompare(o, data, rng, 2, false, {data.size()}, 2, store);
    EXPECT_EQ(store->opened(), 4 * 4);  // 4 shard rows of 4 shards
  }
  for (int writes : {0, 1, 5, 9, 20}) {
    SCOPED_TRACE(writes);
    const std::string root = dir.path() + "/fail" + std::to_string(writes);
    auto store = std::make_shared<InPlaceFileStore>(root, writes);
    StreamWriterOptions wo;
    wo.threads = 2;
    Status st;
    {
      auto zs = OpenZarrStream(store, "s", o, wo);
      ASSERT_TRUE(zs.ok()) << zs.status().ToString();
      const size_t frame = 8 * 12 * 2;
      for (size_t at = 0; at < data.size() && st.ok(); at += frame) st = zs->writer->Append(ByteView(data).subspan(at, frame));
      if (st.ok()) st = zs->writer->Close();
    }
    EXPECT_ERROR(st, ErrorKind::kIo, "disk full writing " + root + "/s/c/");
    auto reference = std::make_shared<MemoryStore>();
    zarr::ArrayOptions whole = o;
    whole.shape[0] = 16;
    auto ref = zarr::ZarrArray::Create(reference, "s", *zarr::BuildArrayMetadata(whole));
    ASSERT_TRUE(ref.ok());
    ASSERT_TRUE((*ref)->WriteRegion({0, 0, 0}, whole.shape, data).ok());
    auto keys = store->List("s/c");
    ASSERT_TRUE(keys.ok());
    for (const std::string& key : *keys) EXPECT_EQ(**store->Get(key), **reference->Get(key)) << key;
    auto arr = zarr::ZarrArray::Open(store, "s");
    ASSERT_TRUE(arr.ok()) << arr.status().ToString();
    Bytes out(static_cast<size_t>((*arr)->shape()[0] * 8 * 12 * 2));
    ASSERT_TRUE((*arr)->Read(Hyperslab::All((*arr)->shape()), out.data()).ok());
    EXPECT_EQ(out, Bytes(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(out.size())));
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
      EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

// A store whose chunk writes start failing after a number of successful ones.
class FailingStore : public Store {
 public:
  explicit FailingStore(int ok_writes) : ok_writes_(ok_writes) {}
  Result<std::optional<Bytes>> Get(const std::string& key) const override { return inner_.Get(key); }
  Result<std::optional<Bytes>> GetRange(const std::string& key, uint64_t offset, uint64_t length) const override {
    return inner_.GetRange(key, offset, length);
  }
  Result<std::optional<Bytes>> GetSuffix(const std::string& key, uint64_t length) const override {
    return inner_.GetSuffix(key, length);
  }
  Result<std::optional<uint64_t>> Size(const std::string& key) const override { return inner_.Size(key); }
  std::string Describe(const std::string& key) const override { return inner_.Describe(key); }
  Status Set(const std::string& key, ByteView value) override {
    if (key.find("zarr.json") == std::string::npos && --ok_writes_ < 0) return IoError("disk full writing " + key);
    return inner_.Set(key, value);
  }
  Status Erase(const std::string& key) override { return inner_.Erase(key); }
  Result<std::vector<std::string>> List(const std::string& prefix) const override { return inner_.List(prefix); }

 private:
  MemoryStore inner_;
  std::atomic<int> ok_writes_;
};

TEST(StreamWriterTest, SinkErrorsSurfaceAndEarlierShardsStayIntact) {
  zarr::ArrayOptions o;
  o.dtype = DataType::kUInt8;
  o.shape = {0, 4};
  o.chunk_shape = {2, 4};
  o.chunks_per_shard = {1, 1};
  o.codec = "none";
  auto store = std::make_shared<FailingStore>(3);
  StreamWriterOptions wo;
  wo.threads = 1;
  auto zs = OpenZarrStream(store, "", o, wo);
  ASSERT_TRUE(zs.ok());
  Bytes row(8, 7);
  Status st;
  for (int i = 0; i < 10 && st.ok(); ++i) st = zs->writer->Append(row);
  if (st.ok()) st = zs->writer->Close();
  EXPECT_ERROR(st, ErrorKind::kIo, "disk full writing c/");
  // The published part reads back exactly.
  auto arr = zarr::ZarrArray::Open(store, "");
  ASSERT_TRUE(arr.ok());
  EXPECT_EQ((*arr)->shape()[0], 6);
  Bytes out(6 * 4);
  ASSERT_TRUE((*arr)->Read(Hyperslab::All((*arr)->shape()), out.data()).ok());
  EXPECT_EQ(out, Bytes(24, 7));
}

}  // namespace
}  // namespace tessera::stream
