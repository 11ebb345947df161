#include "tessera/write/region_write.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <map>
#include <mutex>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"
#include "tessera/core/text.h"

namespace tessera {
namespace {

using Coords = std::vector<int64_t>;

// An in-memory target: uint16 elements, shards of 2 chunks per dimension (2x2 in 2-d), each chunk
// "encoded" as a marker byte followed by its decoded bytes. It counts reads and writes per object
// and can make writes conflict (another writer changing the object first) or fail.
class FakeTarget final : public RegionTarget {
 public:
  FakeTarget(Coords shape, Coords chunk_shape, uint16_t fill, bool drops_fill = true)
      : shape_(std::move(shape)), chunk_shape_(std::move(chunk_shape)), drops_fill_(drops_fill) {
    fill_.bytes = {static_cast<uint8_t>(fill & 0xff), static_cast<uint8_t>(fill >> 8)};
  }

  struct Object {
    std::map<Coords, Bytes> chunks;  // encoded
    int generation = 0;
  };
  class Snapshot final : public StoredObject {
   public:
    bool exists() const override { return exists_; }
    bool exists_ = false;
    int generation_ = 0;
    std::map<Coords, Bytes> chunks;
  };

  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& chunk_shape() const override { return chunk_shape_; }
  DataType dtype() const override { return DataType::kUInt16; }
  const FillValue& fill_value() const override { return fill_; }
  bool drops_fill_chunks() const override { return drops_fill_; }
  std::string ObjectOf(std::span<const int64_t> chunk) const override {
    Coords shard;
    for (int64_t c : chunk) shard.push_back(c / 2);
    return "s/" + JoinIntegers(shard, ".");
  }
  int64_t ChunksInObject(const std::string& key) const override {
    int64_t n = 1;
    const Coords shard = ShardOf(key);
    for (size_t d = 0; d < shape_.size(); ++d) {
      const int64_t chunks = (shape_[d] + chunk_shape_[d] - 1) / chunk_shape_[d];
      n *= std::min<int64_t>(2, chunks - shard[d] * 2);
    }
    return n;
  }
  Result<std::unique_ptr<StoredObject>> Read(const std::string& key) const override {
    std::lock_guard<std::mutex> lock(mu_);
    ++reads[key];
    auto snapshot = std::make_unique<Snapshot>();
    auto it = objects.find(key);
    if (it != objects.end()) {
      snapshot->exists_ = true;
      snapshot->generation_ = it->second.generation;
      snapshot->chunks = it->second.chunks;
    }
    return std::unique_ptr<StoredObject>(std::move(snapshot));
  }
  Result<bool> DecodeChunk(const StoredObject& object, std::span<const int64_t> chunk, Bytes* out) const override {
    const auto& snapshot = static_cast<const Snapshot&>(object);
    auto it = snapshot.chunks.find(Coords(chunk.begin(), chunk.end()));
    if (it == snapshot.chunks.end()) return false;
    if (it->second.empty() || it->second[0] != kMarker)
      return CorruptData("fake chunk (" + JoinIntegers(it->first, ", ") + ") has no marker");
    out->assign(it->second.begin() + 1, it->second.end());
    return true;
  }
  Result<Bytes> EncodeChunk(std::span<const int64_t> chunk, ByteView decoded) const override {
    if (encode_delay_ms > 0) {
      const int now = ++encodes_in_flight;
      for (int seen = max_encodes_in_flight.load(); now > seen && !max_encodes_in_flight.compare_exchange_weak(seen, now);) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(encode_delay_ms));
      --encodes_in_flight;
    }
    Bytes encoded{kMarker};
    encoded.insert(encoded.end(), decoded.begin(), decoded.end());
    return encoded;
  }
  Result<bool> Write(const std::string& key, const StoredObject* base, std::span<const ChunkUpdate> updates) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++writes[key];
    if (fail_key == key) return IoError("fake write of " + key + " failed");
    for (const ChunkUpdate& u : updates) EXPECT_EQ(ObjectOf(u.chunk), key);
    if (conflicts[key] > 0) {
      --conflicts[key];
      // Another writer rewrites the object between our read and our write.
      Object& o = objects[key];
      ++o.generation;
      if (on_conflict) on_conflict(key, o);
    }
    auto it = objects.find(key);
    std::map<Coords, Bytes> chunks;
    if (base) {
      const auto& snapshot = static_cast<const Snapshot&>(*base);
      const bool current = snapshot.exists_ ? it != objects.end() && it->second.generation == snapshot.generation_
                                            : it == objects.end();
      if (!current) return false;
      chunks = snapshot.chunks;
    }
    for (const ChunkUpdate& u : updates) {
      if (u.encoded)
        chunks[u.chunk] = *u.encoded;
      else
        chunks.erase(u.chunk);
    }
    if (chunks.empty()) {
      objects.erase(key);
    } else {
      Object& o = objects[key];
      o.chunks = std::move(chunks);
      o.generation = ++generation_counter_;
    }
    return true;
  }
  Status Resize(const std::vector<int64_t>&) override { return Unsupported("fake target: no resize"); }

  // The whole array, decoded (absent chunks: fill).
  std::vector<uint16_t> Contents() const {
    const int rank = static_cast<int>(shape_.size());
    std::vector<uint16_t> out(static_cast<size_t>(index::Product(rank, shape_.data())));
    uint16_t fill;
    std::memcpy(&fill, fill_.bytes.data(), 2);
    Coords strides(rank);
    index::RowMajorStrides(rank, shape_.data(), strides.data());
    for (size_t i = 0; i < out.size(); ++i) {
      Coords x(rank), chunk(rank), within(rank);
      index::Unravel(rank, shape_.data(), static_cast<int64_t>(i), x.data());
      for (int d = 0; d < rank; ++d) chunk[d] = x[d] / chunk_shape_[d], within[d] = x[d] % chunk_shape_[d];
      out[i] = fill;
      auto o = objects.find(ObjectOf(chunk));
      if (o == objects.end()) continue;
      auto c = o->second.chunks.find(chunk);
      if (c == o->second.chunks.end()) continue;
      const int64_t at = index::Ravel(rank, chunk_shape_.data(), within.data());
      std::memcpy(&out[i], c->second.data() + 1 + 2 * at, 2);
    }
    return out;
  }
  size_t StoredChunks() const {
    size_t n = 0;
    for (const auto& [key, o] : objects) n += o.chunks.size();
    return n;
  }
  void ResetCounts() {
    reads.clear();
    writes.clear();
  }

  static constexpr uint8_t kMarker = 0xE5;
  int encode_delay_ms = 0;
  mutable std::atomic<int> encodes_in_flight{0};
  mutable std::atomic<int> max_encodes_in_flight{0};
  mutable std::map<std::string, int> reads;
  std::map<std::string, int> writes;
  std::map<std::string, int> conflicts;
  std::function<void(const std::string&, Object&)> on_conflict;
  std::string fail_key;
  std::map<std::string, Object> objects;

 private:
  Coords ShardOf(const std::string& key) const {
    Coords out;
    std::string rest = key.substr(2);
    for (size_t d = 0; d < shape_.size(); ++d) {
      const size_t dot = rest.find('.');
      out.push_back(std::stoll(rest.substr(0, dot)));
      rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
    }
    return out;
  }

  Coords shape_, chunk_shape_;
  FillValue fill_;
  bool drops_fill_;
  mutable std::mutex mu_;
  int generation_counter_ = 0;
};

// One value for every element of a selection (every stride 0: numpy broadcasting).
SourceView Scalar(const uint16_t& value) {
  SourceView v;
  v.base = reinterpret_cast<const uint8_t*>(&value);
  return v;
}

// A source of values and the view the engine reads them through: per output axis either
// broadcast (stride 0, one value), reversed (negative stride) or plain.
struct Source {
  std::vector<uint16_t> values;
  SourceView view;
};

Source MakeSource(const Coords& out_shape, std::mt19937& rng, bool allow_odd_strides) {
  const int rank = static_cast<int>(out_shape.size());
  Coords stored(out_shape);
  std::vector<int> kind(rank, 0);  // 0 plain, 1 broadcast, 2 reversed
  for (int d = 0; d < rank; ++d) {
    if (allow_odd_strides) kind[d] = static_cast<int>(rng() % 3);
    if (kind[d] == 1) stored[d] = 1;
  }
  Source s;
  s.values.resize(static_cast<size_t>(std::max<int64_t>(1, index::Product(rank, stored.data()))));
  for (uint16_t& v : s.values) v = static_cast<uint16_t>(rng() % 60000);
  Coords strides(rank);
  index::RowMajorStrides(rank, stored.data(), strides.data());
  int64_t base_offset = 0;
  for (int d = 0; d < rank; ++d) {
    int64_t stride = 2 * strides[d];
    if (kind[d] == 1) stride = 0;
    if (kind[d] == 2) {
      base_offset += (stored[d] - 1) * stride;
      stride = -stride;
    }
    s.view.byte_strides[d] = stride;
  }
  s.view.base = reinterpret_cast<const uint8_t*>(s.values.data()) + base_offset;
  return s;
}

// numpy's a[selection] = source on a flat C-order array.
void ApplyToModel(std::vector<uint16_t>& model, const Coords& shape, const Hyperslab& sel, const SourceView& view) {
  const int rank = static_cast<int>(shape.size());
  Coords counts(rank);
  for (int d = 0; d < rank; ++d) counts[d] = sel.dims[d].count;
  const int64_t total = sel.NumElements();
  for (int64_t i = 0; i < total; ++i) {
    Coords k(rank), x(rank);
    index::Unravel(rank, counts.data(), i, k.data());
    int64_t src = 0;
    int axis = 0;
    for (int d = 0; d < rank; ++d) {
      x[d] = sel.dims[d].start + k[d] * sel.dims[d].step;
      if (!sel.dropped[d]) src += k[d] * view.byte_strides[axis++];
    }
    std::memcpy(&model[static_cast<size_t>(index::Ravel(rank, shape.data(), x.data()))], view.base + src, 2);
  }
}

Hyperslab RandomSelection(const Coords& shape, std::mt19937& rng) {
  Hyperslab sel;
  for (int64_t extent : shape) {
    const int pick = static_cast<int>(rng() % 6);
    if (pick == 0) {  // an integer: the dimension is dropped
      sel.dims.push_back(index::DimSlice{static_cast<int64_t>(rng() % extent), 1, 1});
      sel.dropped.push_back(true);
      continue;
    }
    int64_t step = pick == 1 ? 1 + static_cast<int64_t>(rng() % 4) : 1;
    if (rng() % 3 == 0) step = -step;
    const int64_t a = static_cast<int64_t>(rng() % (extent + 1)), b = static_cast<int64_t>(rng() % (extent + 1));
    sel.dims.push_back(pick == 2 ? index::NormalizeSlice(extent, false, 0, false, 0, step)
                                 : index::NormalizeSlice(extent, true, std::min(a, b), true, std::max(a, b) + 1, step));
    sel.dropped.push_back(false);
  }
  return sel;
}

TEST(RegionWriteTest, RandomWritesMatchNumpyModel) {
  std::mt19937 rng(25);
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = trial % 5 == 4 ? 5 : 1 + static_cast<int>(rng() % 3);
    Coords shape(rank), chunk(rank);
    for (int d = 0; d < rank; ++d) {
      const int64_t max_extent = rank == 5 ? 6 : rank == 1 ? 40 : 14;
      shape[d] = 1 + static_cast<int64_t>(rng() % max_extent);
      chunk[d] = 1 + static_cast<int64_t>(rng() % 4);
    }
    const uint16_t fill = static_cast<uint16_t>(rng() % 3 == 0 ? 0 : 7);
    FakeTarget target(shape, chunk, fill);
    std::vector<uint16_t> model(static_cast<size_t>(index::Product(rank, shape.data())), fill);
    for (int batch = 0; batch < 3; ++batch) {
      // A batch of overlapping writes: the later one wins.
      const int n = 1 + static_cast<int>(rng() % 3);
      std::vector<Source> sources;
      std::vector<PendingWrite> writes;
      for (int i = 0; i < n; ++i) {
        Hyperslab sel = RandomSelection(shape, rng);
        sources.push_back(MakeSource(sel.OutputShape(), rng, true));
        // Sometimes write the fill value, so that chunks become all-fill again and are dropped.
        if (rng() % 5 == 0)
          for (uint16_t& v : sources.back().values) v = fill;
        writes.push_back(PendingWrite{sel, sources.back().view});
      }
      target.ResetCounts();
      ASSERT_TRUE(WriteSelections(target, writes, WriteOptions{.threads = 1 + trial % 3}).ok());
      for (const PendingWrite& w : writes) ApplyToModel(model, shape, w.selection, w.values);
      ASSERT_EQ(target.Contents(), model) << "trial " << trial << " batch " << batch;
      for (const auto& [key, n_reads] : target.reads) EXPECT_LE(n_reads, 1) << key;
      for (const auto& [key, n_writes] : target.writes) EXPECT_EQ(n_writes, 1) << key;
      for (const auto& [key, n_reads] : target.reads) EXPECT_EQ(target.writes.count(key), 1u) << key;
      // No stored chunk holds only the fill value.
      for (const auto& [key, o] : target.objects)
        for (const auto& [c, bytes] : o.chunks)
          EXPECT_FALSE(IsAllFill(ByteView(bytes.data() + 1, bytes.size() - 1), target.fill_value())) << key;
    }
  }
}

TEST(RegionWriteTest, WhollyCoveredObjectIsNotRead) {
  // 8 x 8 in chunks of 2 x 2: shards of 4 x 4 elements, 2 x 2 shards.
  FakeTarget target({8, 8}, {2, 2}, 0);
  std::vector<uint16_t> ones(64, 1);
  Hyperslab all = Hyperslab::All({8, 8});
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{all, SourceView::Contiguous(ones.data(), all, 2)}}}).ok());
  EXPECT_TRUE(target.reads.empty());
  EXPECT_EQ(target.writes.size(), 4u);
  // Rows 0..3, columns 0..5: shard (0, 0) wholly, shard (0, 1) in part.
  target.ResetCounts();
  Hyperslab part = *ParseSliceExpression("0:4, 0:6", {8, 8});
  std::vector<uint16_t> twos(24, 2);
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{part, SourceView::Contiguous(twos.data(), part, 2)}}}).ok());
  EXPECT_EQ(target.reads, (std::map<std::string, int>{{"s/0.1", 1}}));
  EXPECT_EQ(target.writes, (std::map<std::string, int>{{"s/0.0", 1}, {"s/0.1", 1}}));
  const std::vector<uint16_t> contents = target.Contents();
  EXPECT_EQ(contents[0 * 8 + 5], 2);
  EXPECT_EQ(contents[0 * 8 + 6], 1);
  EXPECT_EQ(contents[4 * 8 + 0], 1);
}

TEST(RegionWriteTest, EdgeObjectCoveredInsideTheArrayIsNotRead) {
  // 5 x 3 in chunks of 2 x 2: shard row 1 holds one chunk row (chunk row 2), clipped to 1 element.
  FakeTarget target({5, 3}, {2, 2}, 9);
  Hyperslab edge = *ParseSliceExpression("4:5, :", {5, 3});
  std::vector<uint16_t> values = {1, 2, 3};
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{edge, SourceView::Contiguous(values.data(), edge, 2)}}}).ok());
  EXPECT_TRUE(target.reads.empty());
  EXPECT_EQ(target.writes, (std::map<std::string, int>{{"s/1.0", 1}}));
  // The padding past the edge holds the fill value.
  const Bytes& stored = target.objects.at("s/1.0").chunks.at({2, 0});
  uint16_t padding;
  std::memcpy(&padding, stored.data() + 1 + 2 * 2, 2);  // element (1, 0) of the 2 x 2 chunk
  EXPECT_EQ(padding, 9);
  std::vector<uint16_t> expected(15, 9);
  expected[12] = 1, expected[13] = 2, expected[14] = 3;
  EXPECT_EQ(target.Contents(), expected);
}

TEST(RegionWriteTest, ConflictIsRetriedOnFreshData) {
  FakeTarget target({4, 4}, {2, 2}, 0);
  std::vector<uint16_t> ones(16, 1);
  Hyperslab all = Hyperslab::All({4, 4});
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{all, SourceView::Contiguous(ones.data(), all, 2)}}}).ok());
  // Another writer sets element (3, 3) to 5 between our read and our first two writes.
  target.conflicts["s/0.0"] = 2;
  target.on_conflict = [&](const std::string&, FakeTarget::Object& o) {
    Bytes& c = o.chunks.at({1, 1});
    const uint16_t five = 5;
    std::memcpy(c.data() + 1 + 2 * 3, &five, 2);
  };
  target.ResetCounts();
  Hyperslab corner = *ParseSliceExpression("0, 0", {4, 4});
  const uint16_t seven = 7;
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{corner, Scalar(seven)}}})
                  .ok());
  EXPECT_EQ(target.reads.at("s/0.0"), 3);
  EXPECT_EQ(target.writes.at("s/0.0"), 3);
  const std::vector<uint16_t> contents = target.Contents();
  EXPECT_EQ(contents[0], 7);
  EXPECT_EQ(contents[15], 5);  // the other writer's update survives
  EXPECT_EQ(contents[1], 1);
}

TEST(RegionWriteTest, EndlessConflictGivesUpNamingTheKey) {
  FakeTarget target({4, 4}, {2, 2}, 0);
  target.conflicts["s/0.0"] = 100;
  Hyperslab corner = *ParseSliceExpression("0, 0", {4, 4});
  const uint16_t seven = 7;
  Status st = WriteSelections(target, {{PendingWrite{corner, Scalar(seven)}}},
                              WriteOptions{.max_attempts = 4});
  EXPECT_ERROR(st, ErrorKind::kIo, "gave up after 4 conflicting writes to s/0.0");
  EXPECT_EQ(target.writes.at("s/0.0"), 4);
}

TEST(RegionWriteTest, FailureOfOneObjectIsReportedAndOthersStayWhole) {
  FakeTarget target({8, 8}, {2, 2}, 0);  // 2 x 2 shards of 2 x 2 chunks
  target.fail_key = "s/1.0";
  std::vector<uint16_t> ones(64, 1);
  Hyperslab all = Hyperslab::All({8, 8});
  EXPECT_ERROR(WriteSelections(target, {{PendingWrite{all, SourceView::Contiguous(ones.data(), all, 2)}}}),
               ErrorKind::kIo, "s/1.0");
  EXPECT_EQ(target.objects.count("s/1.0"), 0u);
  for (const auto& [key, o] : target.objects) EXPECT_EQ(o.chunks.size(), 4u) << key;
}

TEST(RegionWriteTest, CorruptChunkIsReportedAndNothingWritten) {
  FakeTarget target({4, 4}, {2, 2}, 0);
  std::vector<uint16_t> ones(16, 1);
  Hyperslab all = Hyperslab::All({4, 4});
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{all, SourceView::Contiguous(ones.data(), all, 2)}}}).ok());
  target.objects.at("s/0.0").chunks.at({0, 0})[0] = 0;  // break the marker
  const auto before = target.objects.at("s/0.0").chunks;
  target.ResetCounts();
  Hyperslab corner = *ParseSliceExpression("0, 0", {4, 4});
  const uint16_t seven = 7;
  EXPECT_ERROR(WriteSelections(target, {{PendingWrite{corner, Scalar(seven)}}}),
               ErrorKind::kCorruptData, "(0, 0)");
  EXPECT_TRUE(target.writes.empty());
  EXPECT_EQ(target.objects.at("s/0.0").chunks, before);
}

TEST(RegionWriteTest, AnySelectionOutsideTheShapeWritesNothing) {
  FakeTarget target({4, 4}, {2, 2}, 0);
  std::vector<uint16_t> ones(16, 1);
  Hyperslab all = Hyperslab::All({4, 4});
  Hyperslab outside = all;
  outside.dims[1] = index::DimSlice{2, 1, 3};  // columns 2..4 of 4
  std::vector<PendingWrite> writes = {PendingWrite{all, SourceView::Contiguous(ones.data(), all, 2)},
                                      PendingWrite{outside, SourceView::Contiguous(ones.data(), outside, 2)}};
  EXPECT_ERROR(WriteSelections(target, writes), ErrorKind::kOutOfRange, "region write 1", "dimension 1");
  Hyperslab wrong_rank = Hyperslab::All({4});
  EXPECT_ERROR(WriteSelections(target, {{PendingWrite{wrong_rank, SourceView::Contiguous(ones.data(), wrong_rank, 2)}}}),
               ErrorKind::kInvalidArgument, "rank-2");
  EXPECT_TRUE(target.writes.empty());
  EXPECT_TRUE(target.reads.empty());
}

TEST(RegionWriteTest, WritingFillEverywhereRemovesEveryChunk) {
  FakeTarget target({6, 5}, {2, 2}, 3);
  std::vector<uint16_t> ones(30, 1);
  Hyperslab all = Hyperslab::All({6, 5});
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{all, SourceView::Contiguous(ones.data(), all, 2)}}}).ok());
  EXPECT_EQ(target.StoredChunks(), 9u);
  const uint16_t fill = 3;
  SourceView broadcast = Scalar(fill);  // every stride 0
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{all, broadcast}}}).ok());
  EXPECT_TRUE(target.objects.empty());
}

TEST(RegionWriteTest, ChunksOfOneObjectAreEncodedOnSeveralThreads) {
  FakeTarget target({4, 4}, {2, 2}, 0);  // one shard of 2 x 2 chunks
  target.encode_delay_ms = 50;
  std::vector<uint16_t> ones(16, 1);
  Hyperslab all = Hyperslab::All({4, 4});
  ASSERT_TRUE(
      WriteSelections(target, {{PendingWrite{all, SourceView::Contiguous(ones.data(), all, 2)}}}, {.threads = 4}).ok());
  EXPECT_GT(target.max_encodes_in_flight.load(), 1);
  EXPECT_EQ(target.Contents(), ones);
  EXPECT_EQ(target.writes.at("s/0.0"), 1);
}

TEST(RegionWriteTest, KeepsFillChunksWhenTheTargetAsks) {
  FakeTarget target({4}, {2}, 0, /*drops_fill=*/false);
  const uint16_t zero = 0;
  Hyperslab all = Hyperslab::All({4});
  ASSERT_TRUE(WriteSelections(target, {{PendingWrite{all, Scalar(zero)}}}).ok());
  EXPECT_EQ(target.StoredChunks(), 2u);
}

}  // namespace
}  // namespace tessera
