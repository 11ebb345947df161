// Region writes into Neuroglancer precomputed volumes made by tessera's stream: random selections
// (any start, stop and step; values sometimes all 0, which removes chunks) written through the
// region-write engine, then the whole volume read back by a fresh PrecomputedVolume and compared
// element by element with a model. Raw (uint8/uint16/float32, one or more channels) and
// compressed_segmentation (uint32/uint64); unsharded, and sharded with the identity and
// murmurhash3_x86_128 hashes, raw and gzip; on a memory store (conditional writes) and a file
// store. Also: the count of chunks per shard, conflicts, a corrupt shard, jpeg refused, resize.
#include "tessera/precomputed/precomputed_region_target.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "tessera/api/stream.h"
#include "tessera/index/morton.h"
#include "tessera/precomputed/volume.h"
#include "tessera/store/file_store.h"
#include "tessera/store/memory_store.h"
#include "cpp_support/store_helpers.h"

namespace tessera::precomputed {
namespace {

namespace fs = std::filesystem;
using store_test::ScopedTempDir;

struct VolumeCase {
  std::string name;
  DataType dtype = DataType::kUInt16;
  std::vector<int64_t> shape = {20, 24, 28};  // [c,] z, y, x
  std::vector<int64_t> chunk = {4, 8, 8};     // z, y, x
  std::string encoding = "raw";
  std::vector<int64_t> shard_chunks;  // z, y, x; empty: unsharded
  std::string hash = "identity";
  bool gzip = false;
};

void PrintTo(const VolumeCase& c, std::ostream* os) { *os << c.name; }

std::vector<VolumeCase> Cases() {
  std::vector<VolumeCase> out;
  out.push_back({.name = "raw_u16_unsharded"});
  out.push_back({.name = "raw_u8_channels_unsharded", .dtype = DataType::kUInt8, .shape = {3, 10, 13, 17}, .chunk = {4, 5, 8}});
  out.push_back({.name = "raw_f32_identity", .dtype = DataType::kFloat32, .shard_chunks = {2, 2, 2}});
  out.push_back({.name = "raw_u16_murmur_gzip", .shard_chunks = {2, 2, 2}, .hash = "murmurhash3_x86_128", .gzip = true});
  out.push_back({.name = "cseg_u32_unsharded", .dtype = DataType::kUInt32, .encoding = "compressed_segmentation"});
  out.push_back({.name = "cseg_u64_identity_gzip", .dtype = DataType::kUInt64, .encoding = "compressed_segmentation",
                 .shard_chunks = {1, 2, 2}, .gzip = true});
  out.push_back({.name = "cseg_u64_murmur", .dtype = DataType::kUInt64, .shape = {2, 9, 11, 14}, .chunk = {3, 4, 4},
                 .encoding = "compressed_segmentation", .shard_chunks = {2, 2, 2}, .hash = "murmurhash3_x86_128"});
  return out;
}

// Values of element type `dtype` from random bits: few distinct labels for segmentation (so
// compressed_segmentation has something to compress), whole floats for float32.
void RandomValue(DataType dtype, bool labels, std::mt19937_64& rng, uint8_t* out) {
  const size_t item = ItemSize(dtype);
  uint64_t v = labels ? 1 + rng() % 5 : rng();
  if (dtype == DataType::kFloat32) {
    const float f = static_cast<float>(static_cast<int64_t>(v % 2000) - 1000);
    std::memcpy(out, &f, 4);
    return;
  }
  std::memcpy(out, &v, item);  // little-endian hosts
}

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t v : shape) n *= v;
  return n;
}

// A volume of `c` streamed by tessera into `dir`: random values with the first z-slab of chunks
// all 0 (not stored by the stream). Returns the values, C order over c.shape.
Bytes StreamVolume(const VolumeCase& c, const fs::path& dir) {
  const size_t item = ItemSize(c.dtype);
  Bytes data(static_cast<size_t>(Count(c.shape)) * item, 0);
  std::mt19937_64 rng(5);
  const int64_t zero_rows = c.shape.size() == 4 ? 0 : c.chunk[0];  // the z-slab of chunks at z = 0
  const int64_t row = Count(c.shape) / c.shape[0];
  for (int64_t i = zero_rows * row; i < Count(c.shape); ++i)
    RandomValue(c.dtype, c.encoding != "raw", rng, data.data() + i * item);
  ArraySpec spec;
  spec.dtype = c.dtype;
  spec.shape = c.shape;
  spec.chunk_shape = c.chunk;
  if (c.shape.size() == 4) spec.chunk_shape.insert(spec.chunk_shape.begin(), c.shape[0]);
  spec.shard_chunks = c.shard_chunks;
  spec.codec = c.gzip ? Codec::kGzip : Codec::kNone;
  spec.precomputed.encoding = c.encoding;
  if (!c.shard_chunks.empty()) spec.precomputed.hash = c.hash;
  spec.precomputed.voxel_offset_xyz = {3, -2, 5};  // chunk names are in voxel coordinates
  StreamOptions o;
  o.format = Format::kPrecomputed;
  o.threads = 2;
  auto s = CreateStream(dir.string(), spec, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return data;
  EXPECT_TRUE((*s)->Append(data).ok());
  EXPECT_TRUE((*s)->Close().ok());
  return data;
}

// Every file under `dir`, by relative path.
std::map<std::string, Bytes> Files(const fs::path& dir) {
  std::map<std::string, Bytes> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream f(entry.path(), std::ios::binary);
    out[fs::relative(entry.path(), dir).generic_string()] = Bytes{std::istreambuf_iterator<char>(f), {}};
  }
  return out;
}

// The store a case runs on: the streamed volume's files loaded into memory, or the directory.
std::shared_ptr<Store> OpenStore(const fs::path& dir, bool memory) {
  if (!memory) return std::shared_ptr<Store>(FileStore::Open(dir.string(), false).value());
  auto store = std::make_shared<MemoryStore>();
  for (const auto& [key, bytes] : Files(dir)) EXPECT_TRUE(store->Set(key, bytes).ok());
  return store;
}

// The whole volume as a fresh reader sees it.
Bytes ReadAll(const std::shared_ptr<Store>& store) {
  auto volume = PrecomputedVolume::Open(store);
  EXPECT_TRUE(volume.ok()) << volume.status().ToString();
  if (!volume.ok()) return {};
  Bytes out(static_cast<size_t>(Count((*volume)->shape())) * ItemSize((*volume)->dtype()));
  Status st = ReadHyperslab(**volume, Hyperslab::All((*volume)->shape()), out.data(), ReadOptions{2});
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

// A random selection of `shape`: per dimension a start, stop and step (sometimes negative),
// sometimes one index (a dropped dimension).
Hyperslab RandomSelection(const std::vector<int64_t>& shape, std::mt19937_64& rng) {
  Hyperslab h;
  for (int64_t n : shape) {
    index::DimSlice s;
    const int kind = static_cast<int>(rng() % 8);
    s.start = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
    if (kind == 0) {  // one index, dropped
      s.count = 1;
      h.dropped.push_back(true);
    } else if (kind == 1) {  // the whole dimension
      s.start = 0;
      s.count = n;
      h.dropped.push_back(false);
    } else if (kind == 2) {  // backwards
      s.step = -static_cast<int64_t>(1 + rng() % 3);
      s.count = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(s.start / -s.step + 1));
      h.dropped.push_back(false);
    } else {
      s.step = kind < 6 ? 1 : static_cast<int64_t>(1 + rng() % 4);
      s.count = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>((n - 1 - s.start) / s.step + 1));
      h.dropped.push_back(false);
    }
    h.dims.push_back(s);
  }
  return h;
}

// Writes `values` (C order over the selection's positions) into the model.
void ApplyToModel(const std::vector<int64_t>& shape, size_t item, const Hyperslab& h, const uint8_t* values,
                  Bytes* model) {
  const int rank = static_cast<int>(shape.size());
  int64_t total = 1;
  for (const index::DimSlice& s : h.dims) total *= s.count;
  for (int64_t k = 0; k < total; ++k) {
    int64_t rem = k, flat = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const index::DimSlice& s = h.dims[static_cast<size_t>(d)];
      flat += (s.start + (rem % s.count) * s.step) * stride;
      rem /= s.count;
      stride *= shape[static_cast<size_t>(d)];
    }
    std::memcpy(model->data() + flat * item, values + k * item, item);
  }
}

class PrecomputedRegionWrite : public ::testing::TestWithParam<std::tuple<VolumeCase, bool>> {};

TEST_P(PrecomputedRegionWrite, RandomWritesReadBackLikeTheModel) {
  const auto& [c, memory] = GetParam();
  ScopedTempDir tmp;
  const fs::path dir = fs::path(tmp.path()) / "vol";
  Bytes model = StreamVolume(c, dir);
  std::shared_ptr<Store> store = OpenStore(dir, memory);
  auto target = PrecomputedRegionTarget::Open(store);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  ASSERT_EQ((*target)->shape(), c.shape);
  const size_t item = ItemSize(c.dtype);
  std::mt19937_64 rng(11);
  for (int t = 0; t < 24; ++t) {
    // One to three writes at once (a later one wins where they overlap); a quarter of them 0.
    const int n = 1 + static_cast<int>(rng() % 3);
    std::vector<Bytes> values(static_cast<size_t>(n));
    std::vector<PendingWrite> writes;
    for (int w = 0; w < n; ++w) {
      const Hyperslab h = RandomSelection(c.shape, rng);
      int64_t count = 1;
      for (const index::DimSlice& s : h.dims) count *= s.count;
      values[static_cast<size_t>(w)].assign(static_cast<size_t>(count) * item, 0);
      if (rng() % 4 != 0)
        for (int64_t i = 0; i < count; ++i)
          RandomValue(c.dtype, c.encoding != "raw", rng, values[static_cast<size_t>(w)].data() + i * item);
      writes.push_back({h, SourceView::Contiguous(values[static_cast<size_t>(w)].data(), h, item)});
      ApplyToModel(c.shape, item, h, values[static_cast<size_t>(w)].data(), &model);
    }
    Status st = WriteSelections(**target, writes, WriteOptions{.threads = 2});
    ASSERT_TRUE(st.ok()) << "write " << t << ": " << st.ToString();
    ASSERT_TRUE(ReadAll(store) == model) << "after write " << t;
  }
  // A chunk written all 0 is removed, as the stream leaves such chunks unstored.
  if (c.shard_chunks.empty() && c.encoding == "raw" && !memory)
    for (const auto& [key, bytes] : Files(dir))
      if (key != "info") EXPECT_FALSE(IsAllFill(bytes, ZeroFill(c.dtype))) << key;
}

INSTANTIATE_TEST_SUITE_P(Volumes, PrecomputedRegionWrite, ::testing::Combine(::testing::ValuesIn(Cases()), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param).name + (std::get<1>(info.param) ? "_memory" : "_file");
                         });

// A sharded volume's write skips reading a shard only when it covers every chunk the shard holds:
// the count from the Morton box (identity hash) must equal the count of chunks hashing there.
TEST(PrecomputedRegionTarget, ChunksInShardMatchTheChunksHashingThere) {
  for (const VolumeCase& c : Cases()) {
    if (c.shard_chunks.empty()) continue;
    SCOPED_TRACE(c.name);
    ScopedTempDir tmp;
    const fs::path dir = fs::path(tmp.path()) / "vol";
    StreamVolume(c, dir);
    auto target = PrecomputedRegionTarget::Open(OpenStore(dir, true)).value();
    const ScaleInfo& s = target->scale();
    const index::ChunkGrid grid = s.GridXyz();
    std::map<std::string, int64_t> expected;
    std::array<int64_t, 3> g;
    for (g[2] = 0; g[2] < grid.chunk_count[2]; ++g[2])
      for (g[1] = 0; g[1] < grid.chunk_count[1]; ++g[1])
        for (g[0] = 0; g[0] < grid.chunk_count[0]; ++g[0]) {
          const uint64_t id = index::CompressedMortonCode(g.data(), grid.chunk_count);
          std::vector<int64_t> chunk = {g[2], g[1], g[0]};
          if (c.shape.size() == 4) chunk.insert(chunk.begin(), 0);
          const std::string key = s.key + "/" + s.sharding->ShardFileName(s.sharding->Locate(id).shard);
          ASSERT_EQ(target->ObjectOf(chunk), key);
          ++expected[key];
        }
    for (const auto& [key, n] : expected) {
      EXPECT_EQ(target->ChunksInObject(key), n) << key;
      EXPECT_EQ(target->CountChunksInShardByScan(key), n) << key;
    }
    EXPECT_EQ(target->ChunksInObject(s.key + "/ffffff.shard"), 0);
  }
}

// Identity-hash shards of many shapes: the Morton box count equals a count over the whole grid.
TEST(PrecomputedRegionTarget, MortonBoxCountEqualsScanForManyGrids) {
  std::mt19937_64 rng(3);
  for (int t = 0; t < 40; ++t) {
    VolumeInfo info;
    info.dtype = DataType::kUInt8;
    ScaleInfo s;
    s.key = "s0";
    s.size = {static_cast<int64_t>(1 + rng() % 30), static_cast<int64_t>(1 + rng() % 30), static_cast<int64_t>(1 + rng() % 30)};
    s.chunk_size = {static_cast<int64_t>(1 + rng() % 4), static_cast<int64_t>(1 + rng() % 4), static_cast<int64_t>(1 + rng() % 4)};
    s.resolution = {1, 1, 1};
    ShardingSpec spec;
    const int total = index::CompressedMortonBits(s.GridXyz().chunk_count);
    spec.preshift_bits = static_cast<int>(rng() % 3);
    spec.minishard_bits = static_cast<int>(rng() % 3);
    // Sometimes fewer than the chunk ids need (shard numbers wrap), sometimes more.
    spec.shard_bits = static_cast<int>(rng() % std::min(total + 2, 12));
    s.sharding = spec;
    info.scales.push_back(s);
    auto store = std::make_shared<MemoryStore>();
    ASSERT_TRUE(store->Set("info", AsView(info.ToJson().dump())).ok());
    auto target = PrecomputedRegionTarget::Open(store).value();
    int64_t sum = 0;
    for (uint64_t shard = 0; shard < spec.num_shards(); ++shard) {
      const std::string key = "s0/" + spec.ShardFileName(shard);
      const int64_t n = target->ChunksInObject(key);
      EXPECT_EQ(n, target->CountChunksInShardByScan(key)) << key << " of trial " << t;
      sum += n;
    }
    EXPECT_EQ(sum, s.GridXyz().ChunkCount()) << "trial " << t;
  }
}

// Store a volume's files on a memory store and open its target.
struct MemoryVolume {
  ScopedTempDir tmp;
  std::shared_ptr<Store> store;
  std::unique_ptr<PrecomputedRegionTarget> target;
  Bytes data;
  explicit MemoryVolume(const VolumeCase& c) {
    const fs::path dir = fs::path(tmp.path()) / "vol";
    data = StreamVolume(c, dir);
    store = OpenStore(dir, true);
    target = PrecomputedRegionTarget::Open(store).value();
  }
};

// A write conditional on a generation another writer replaced writes nothing and says so.
TEST(PrecomputedRegionTarget, StaleReadConflicts) {
  for (const VolumeCase& c : {Cases()[0], Cases()[3]}) {
    SCOPED_TRACE(c.name);
    MemoryVolume v(c);
    if (!v.store->GetVersioned("info").ok()) GTEST_SKIP() << "this memory store keeps no generations";
    const std::vector<int64_t> chunk = {2, 1, 1};
    const std::string key = v.target->ObjectOf(chunk);
    auto first = v.target->Read(key).value();
    auto second = v.target->Read(key).value();
    ASSERT_TRUE(first->exists());
    Bytes full;
    ASSERT_TRUE(v.target->DecodeChunk(*first, chunk, &full).value());
    full[0] ^= 1;
    const ChunkUpdate update{chunk, v.target->EncodeChunk(chunk, full).value()};
    ASSERT_TRUE(v.target->Write(key, first.get(), {&update, 1}).value());
    const Bytes after_first = **v.store->Get(key);
    full[1] ^= 1;
    const ChunkUpdate stale{chunk, v.target->EncodeChunk(chunk, full).value()};
    EXPECT_FALSE(v.target->Write(key, second.get(), {&stale, 1}).value());
    EXPECT_EQ(**v.store->Get(key), after_first);
  }
}

// A corrupt shard met by a read-modify-write fails naming the shard and the byte range, and is
// left as it was.
TEST(PrecomputedRegionTarget, CorruptShardIsAnErrorAndLeftUnchanged) {
  MemoryVolume v(Cases()[2]);  // float32, identity hash, raw
  const std::vector<int64_t> chunk = {2, 1, 1};
  const std::string key = v.target->ObjectOf(chunk);
  Bytes shard = **v.store->Get(key);
  // Point minishard 0's index past the end of the file.
  const uint64_t bad = shard.size() + 100;
  for (int m = 0; m < 2; ++m)
    for (int b = 0; b < 8; ++b) shard[static_cast<size_t>(8 * m + b)] = static_cast<uint8_t>((bad + m) >> (8 * b));
  ASSERT_TRUE(v.store->Set(key, shard).ok());
  Hyperslab h = Hyperslab::All(v.target->shape());
  h.dims[0] = {9, 1, 1};  // one z plane through chunk z = 2: partly covered, so the shard is read
  Bytes values(static_cast<size_t>(24 * 28 * 4), 7);
  const PendingWrite w{h, SourceView::Contiguous(values.data(), h, 4)};
  Status st = WriteSelections(*v.target, {&w, 1});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.kind(), ErrorKind::kCorruptData) << st.ToString();
  EXPECT_NE(st.message().find(key), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("["), std::string::npos) << st.ToString();  // a byte range
  EXPECT_EQ(**v.store->Get(key), shard);
}

// The model after a resize: the overlap kept, 0 elsewhere.
Bytes Resized(const Bytes& model, const std::vector<int64_t>& from, const std::vector<int64_t>& to, size_t item) {
  Bytes out(static_cast<size_t>(Count(to)) * item, 0);
  const int rank = static_cast<int>(to.size());
  for (int64_t k = 0; k < Count(to); ++k) {
    int64_t rem = k, src = 0, stride = 1;
    bool inside = true;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t i = rem % to[static_cast<size_t>(d)];
      rem /= to[static_cast<size_t>(d)];
      inside = inside && i < from[static_cast<size_t>(d)];
      src += i * stride;
      stride *= from[static_cast<size_t>(d)];
    }
    if (inside) std::memcpy(out.data() + k * item, model.data() + src * item, item);
  }
  return out;
}

// Resizing an unsharded volume: shrink, grow past the old size (the cleared part reads 0), write
// into the new part; after each step the stored chunk files are exactly chunks of the new grid
// (no file left under an old edge chunk's name).
TEST(PrecomputedRegionTarget, ResizeUnshardedRenamesEdgeChunks) {
  for (const VolumeCase& c : {Cases()[0], Cases()[1], Cases()[4]}) {
    for (const bool memory : {true, false}) {
      SCOPED_TRACE(c.name + (memory ? " memory" : " file"));
      ScopedTempDir tmp;
      const fs::path dir = fs::path(tmp.path()) / "vol";
      Bytes model = StreamVolume(c, dir);
      std::shared_ptr<Store> store = OpenStore(dir, memory);
      auto target = PrecomputedRegionTarget::Open(store).value();
      const size_t item = ItemSize(c.dtype);
      std::vector<int64_t> shape = c.shape;
      const size_t s0 = shape.size() - 3;
      std::vector<std::vector<int64_t>> steps = {shape, shape};
      for (size_t d = s0; d < shape.size(); ++d) {
        steps[0][d] = shape[d] - 3 - static_cast<int64_t>(d);  // shrink, cutting chunks
        steps[1][d] = shape[d] + 5;                             // grow past the old size
      }
      std::mt19937_64 rng(17);
      for (const std::vector<int64_t>& to : steps) {
        ASSERT_TRUE(target->Resize(to).ok());
        model = Resized(model, shape, to, item);
        shape = to;
        ASSERT_EQ(target->shape(), shape);
        ASSERT_TRUE(ReadAll(store) == model);
        // Every stored chunk has a name of the new grid.
        const ScaleInfo& s = target->scale();
        const index::ChunkGrid grid = s.GridXyz();
        std::set<std::string> names;
        std::array<int64_t, 3> g;
        for (g[2] = 0; g[2] < grid.chunk_count[2]; ++g[2])
          for (g[1] = 0; g[1] < grid.chunk_count[1]; ++g[1])
            for (g[0] = 0; g[0] < grid.chunk_count[0]; ++g[0]) {
              std::vector<int64_t> chunk = {g[2], g[1], g[0]};
              if (s0) chunk.insert(chunk.begin(), 0);
              names.insert(target->ObjectOf(chunk));
            }
        const Result<std::vector<std::string>> keys = dynamic_cast<ListableStore&>(*store).List(s.key + "/");
        ASSERT_TRUE(keys.ok()) << keys.status().ToString();
        for (const std::string& key : *keys)
          EXPECT_TRUE(names.count(key)) << key << " is not a chunk of the resized volume";
        // A write into the resized volume (across the old edge, when growing).
        const Hyperslab h = RandomSelection(shape, rng);
        int64_t count = 1;
        for (const index::DimSlice& sl : h.dims) count *= sl.count;
        Bytes values(static_cast<size_t>(count) * item);
        for (int64_t i = 0; i < count; ++i) RandomValue(c.dtype, c.encoding != "raw", rng, values.data() + i * item);
        const PendingWrite w{h, SourceView::Contiguous(values.data(), h, item)};
        ASSERT_TRUE(WriteSelections(*target, {&w, 1}).ok());
        ApplyToModel(shape, item, h, values.data(), &model);
        ASSERT_TRUE(ReadAll(store) == model);
      }
    }
  }
}

// A sharded volume resizes only while each dimension keeps its number of Morton bits (the chunk
// ids and so the shards stay); otherwise kUnsupported naming why, and nothing changes.
TEST(PrecomputedRegionTarget, ResizeShardedKeepsMortonBitsOrRefuses) {
  for (const VolumeCase& c : {Cases()[2], Cases()[3]}) {
    SCOPED_TRACE(c.name);
    MemoryVolume v(c);
    const size_t item = ItemSize(c.dtype);
    // 20 x 24 x 28 in chunks of 4 x 8 x 8: a grid of 5 x 3 x 4, 3 + 2 + 2 bits.
    const Bytes info_before = **v.store->Get("info");
    Status refused = v.target->Resize({20, 24, 40});  // 5 chunks along x: 3 bits
    ASSERT_EQ(refused.kind(), ErrorKind::kUnsupported) << refused.ToString();
    EXPECT_NE(refused.message().find("bits along x"), std::string::npos) << refused.ToString();
    EXPECT_EQ(**v.store->Get("info"), info_before);
    EXPECT_EQ(v.target->shape(), c.shape);
    Bytes model = v.data;
    std::vector<int64_t> shape = c.shape;
    for (const std::vector<int64_t>& to : {std::vector<int64_t>{18, 30, 26}, std::vector<int64_t>{19, 19, 31}}) {
      ASSERT_TRUE(v.target->Resize(to).ok());
      model = Resized(model, shape, to, item);
      shape = to;
      ASSERT_TRUE(ReadAll(v.store) == model);
    }
  }
}

TEST(PrecomputedRegionTarget, ResizeRefusesVolumesOfSeveralScales) {
  MemoryVolume v(Cases()[0]);
  VolumeInfo info = v.target->info();
  ScaleInfo s1 = info.scales[0];
  s1.key = "s1";
  s1.size = {14, 12, 10};
  s1.resolution = {2, 2, 2};
  info.scales.push_back(s1);
  ASSERT_TRUE(v.store->Set("info", AsView(info.ToJson().dump())).ok());
  auto target = PrecomputedRegionTarget::Open(v.store).value();
  Status st = target->Resize({10, 10, 10});
  EXPECT_EQ(st.kind(), ErrorKind::kUnsupported) << st.ToString();
  EXPECT_NE(st.message().find("2 scales"), std::string::npos) << st.ToString();
}

// Writers that share chunks and shards lose nothing: each of four threads (each with its own
// target, like separate processes) writes the x columns x % 4 == its number, round after round; every
// write is partial in each chunk, so every rewrite is a read-modify-write conditional on the
// generation read, and a conflict re-reads and re-applies. The volume ends as the union.
TEST(PrecomputedRegionTarget, ConcurrentWritersOfSharedObjectsLoseNothing) {
  for (const VolumeCase& c : {Cases()[0], Cases()[2], Cases()[3]}) {
    for (const bool memory : {true, false}) {
      SCOPED_TRACE(c.name + (memory ? " memory" : " file"));
      ScopedTempDir tmp;
      const fs::path dir = fs::path(tmp.path()) / "vol";
      Bytes model = StreamVolume(c, dir);
      std::shared_ptr<Store> store = OpenStore(dir, memory);
      if (!store->GetVersioned("info").ok()) GTEST_SKIP() << "this store keeps no generations";
      const size_t item = ItemSize(c.dtype);
      constexpr int kWriters = 4, kRounds = 6;
      std::vector<std::thread> threads;
      std::vector<Status> results(kWriters);
      for (int w = 0; w < kWriters; ++w)
        threads.emplace_back([&, w] {
          auto target = PrecomputedRegionTarget::Open(store).value();
          for (int r = 0; r < kRounds && results[static_cast<size_t>(w)].ok(); ++r) {
            Hyperslab h = Hyperslab::All(c.shape);
            h.dims[0] = {r * 3 % c.shape[0], 1, std::min<int64_t>(7, c.shape[0] - r * 3 % c.shape[0])};
            h.dims[2] = {w, kWriters, (c.shape[2] - 1 - w) / kWriters + 1};
            Bytes values(static_cast<size_t>(h.NumElements()) * item, static_cast<uint8_t>(1 + w + 10 * r));
            const PendingWrite pw{h, SourceView::Contiguous(values.data(), h, item)};
            results[static_cast<size_t>(w)] = WriteSelections(*target, {&pw, 1}, WriteOptions{.threads = 1, .max_attempts = 1000});
          }
        });
      for (std::thread& t : threads) t.join();
      for (const Status& st : results) ASSERT_TRUE(st.ok()) << st.ToString();
      for (int r = 0; r < kRounds; ++r)
        for (int w = 0; w < kWriters; ++w) {
          Hyperslab h = Hyperslab::All(c.shape);
          h.dims[0] = {r * 3 % c.shape[0], 1, std::min<int64_t>(7, c.shape[0] - r * 3 % c.shape[0])};
          h.dims[2] = {w, kWriters, (c.shape[2] - 1 - w) / kWriters + 1};
          Bytes values(static_cast<size_t>(h.NumElements()) * item, static_cast<uint8_t>(1 + w + 10 * r));
          ApplyToModel(c.shape, item, h, values.data(), &model);
        }
      EXPECT_TRUE(ReadAll(store) == model);
    }
  }
}

// A murmurhash3 volume of more than 2^22 chunks is not scanned to count a shard's chunks: its
// shards count as the whole grid (never skipping their read), and region writes stay exact.
TEST(PrecomputedRegionTarget, HugeMurmurGridsAreNotScanned) {
  VolumeInfo info;
  info.dtype = DataType::kUInt8;
  ScaleInfo s;
  s.key = "s0";
  s.size = {257 * 2, 128 * 2, 128 * 2};  // 257 x 128 x 128 chunks of 2^3
  s.chunk_size = {2, 2, 2};
  s.resolution = {1, 1, 1};
  ShardingSpec spec;
  spec.hash = ShardHash::kMurmurHash3_x86_128;
  spec.minishard_bits = 3;
  spec.shard_bits = 10;
  s.sharding = spec;
  info.scales.push_back(s);
  auto store = std::make_shared<MemoryStore>();
  ASSERT_TRUE(store->Set("info", AsView(info.ToJson().dump())).ok());
  auto target = PrecomputedRegionTarget::Open(store).value();
  const std::vector<int64_t> chunk = {3, 2, 1};
  // The whole grid's count (the safe over-count) shows the grid was not scanned; no timing here,
  // which a loaded CI machine would make flaky.
  EXPECT_EQ(target->ChunksInObject(target->ObjectOf(chunk)), 257 * 128 * 128);
  // A block over one whole chunk and part of its neighbours, twice (the second reads the first).
  for (uint8_t value : {uint8_t{3}, uint8_t{9}}) {
    Hyperslab h = Hyperslab::All(target->shape());
    for (int d = 0; d < 3; ++d) h.dims[static_cast<size_t>(d)] = {static_cast<int64_t>(2 + d), 1, 3};
    Bytes values(27, value);
    const PendingWrite w{h, SourceView::Contiguous(values.data(), h, 1)};
    ASSERT_TRUE(WriteSelections(*target, {&w, 1}).ok());
  }
  auto volume = PrecomputedVolume::Open(store).value();
  Hyperslab corner = Hyperslab::All(target->shape());
  for (int d = 0; d < 3; ++d) corner.dims[static_cast<size_t>(d)] = {0, 1, 6};
  Bytes got(216);
  ASSERT_TRUE(ReadHyperslab(*volume, corner, got.data(), ReadOptions{1}).ok());
  for (int64_t z = 0; z < 6; ++z)
    for (int64_t y = 0; y < 6; ++y)
      for (int64_t x = 0; x < 6; ++x) {
        const bool inside = z >= 2 && z < 5 && y >= 3 && y < 6 && x >= 4 && x < 7;
        EXPECT_EQ(got[static_cast<size_t>((z * 6 + y) * 6 + x)], inside ? 9 : 0) << z << "," << y << "," << x;
      }
}

// The reads a region write makes, on a store without generations (CountingStore: the target
// falls back to plain reads and writes): none for objects it covers wholly (an edge shard clipped
// by the volume included), one whole-object Get per partly covered object. The values stay exact.
TEST(PrecomputedRegionTarget, ReadsOnlyPartlyCoveredObjectsOnceEach) {
  using store_test::CountingStore;
  using store_test::StoreRequest;
  for (const VolumeCase& c : {Cases()[0], Cases()[2]}) {  // unsharded; identity, 2 x 2 x 2 chunks a shard
    SCOPED_TRACE(c.name);
    ScopedTempDir tmp;
    const fs::path dir = fs::path(tmp.path()) / "vol";
    Bytes model = StreamVolume(c, dir);
    auto store = std::make_shared<CountingStore>();
    for (const auto& [key, bytes] : Files(dir)) ASSERT_TRUE(store->Set(key, bytes).ok());
    auto target = PrecomputedRegionTarget::Open(store).value();
    const size_t item = ItemSize(c.dtype);
    const bool sharded = !c.shard_chunks.empty();
    // 20 x 24 x 28 in chunks of 4 x 8 x 8; a shard is 8 x 16 x 16 voxels, the last along z 4 deep.
    struct Case {
      std::vector<index::DimSlice> dims;
      std::vector<std::vector<int64_t>> partly_covered;  // chunks (z, y, x) whose object is read
    };
    const std::vector<Case> writes = {
        {{{0, 1, 8}, {0, 1, 16}, {0, 1, 16}}, {}},                // whole shard (0, 0, 0), whole chunks
        {{{16, 1, 4}, {16, 1, 8}, {16, 1, 12}}, {}},              // the clipped edge shard, edge chunks
        {{{5, 1, 2}, {5, 1, 7}, {3, 1, 4}}, {{1, 0, 0}, {1, 1, 0}}},  // inside shard (0, 0, 0): two chunks
        {{{1, 1, 1}, {17, 1, 1}, {1, 1, 1}}, {{0, 2, 0}}},  // an unstored chunk (the stream's all-0 z slab)
    };
    for (const Case& w : writes) {
      Hyperslab h = Hyperslab::All(c.shape);
      for (int d = 0; d < 3; ++d) h.dims[static_cast<size_t>(d)] = w.dims[static_cast<size_t>(d)];
      Bytes values(static_cast<size_t>(h.NumElements()) * item, 0x5a);
      const PendingWrite pw{h, SourceView::Contiguous(values.data(), h, item)};
      // The reads expected, from what is stored before the write.
      std::set<std::string> objects;
      for (const std::vector<int64_t>& chunk : w.partly_covered) objects.insert(target->ObjectOf(chunk));
      // (key, found): a missing unsharded chunk is also looked for as "<name>.gz".
      std::set<std::pair<std::string, bool>> expected;
      for (const std::string& key : objects) {
        const bool found = store->memory.Get(key)->has_value();
        expected.insert({key, found});
        if (!found && !sharded) expected.insert({key + ".gz", false});
      }
      store->ClearRequests();
      ASSERT_TRUE(WriteSelections(*target, {&pw, 1}).ok());
      std::set<std::pair<std::string, bool>> got;
      for (const StoreRequest& r : store->SortedRequests()) {
        EXPECT_EQ(r.op, StoreRequest::Op::kGet) << r.key;
        EXPECT_TRUE(got.insert({r.key, r.found}).second) << r.key << " read twice";
      }
      EXPECT_EQ(got, expected);
      ApplyToModel(c.shape, item, h, values.data(), &model);
    }
    ASSERT_TRUE(ReadAll(store) == model);
  }
}

// Scales of an encoding tessera reads but does not write are refused, naming it and those it writes.
TEST(PrecomputedRegionTarget, ScalesOfAnEncodingNotWrittenAreRefusedNamingIt) {
  int unwritten = 0;
  for (const ChunkEncodingTraits& e : kChunkEncodings) {
    if (e.written) continue;
    ++unwritten;
    SCOPED_TRACE(e.name);
    auto store = std::make_shared<MemoryStore>();
    // A volume the encoding can hold (the info is valid: only writing it is refused).
    const bool labels = IsSegmentationEncoding(e.encoding);
    const std::string info = std::string(R"({"@type": "neuroglancer_multiscale_volume", "type": ")") +
                             (labels ? "segmentation" : "image") + R"(", "data_type": ")" +
                             (labels ? "uint32" : "uint8") + R"(", "num_channels": 1, "scales": [{"key": "s0",
      "size": [8, 8, 8], "voxel_offset": [0, 0, 0], "chunk_sizes": [[8, 8, 8]], "resolution": [1, 1, 1],
      "encoding": ")" + e.name + R"("}]})";
    ASSERT_TRUE(store->Set("info", AsView(info)).ok());
    auto target = PrecomputedRegionTarget::Open(store);
    ASSERT_FALSE(target.ok());
    EXPECT_EQ(target.status().kind(), ErrorKind::kUnsupported);
    EXPECT_NE(target.status().message().find(e.name), std::string::npos) << target.status().ToString();
    EXPECT_NE(target.status().message().find(ChunkEncodingList(true)), std::string::npos) << target.status().ToString();
  }
  ASSERT_GE(unwritten, 1) << "every encoding is written: this test checks nothing";
}

}  // namespace
}  // namespace tessera::precomputed
