// Reading a Neuroglancer precomputed volume fetches what the selection touches and nothing else:
// unsharded, the touched chunk files; sharded, per touched chunk its shard index entry and
// minishard index (once each) and its own byte range. The expected requests are worked out from
// the stored files by the format's specification (chunk names; shard index, minishard indices),
// with each chunk found in its shard by its (unique, raw) bytes: no hash or Morton code shared
// with the reader.
#include "tessera/precomputed/volume.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "tessera/api/stream.h"
#include "cpp_support/selection_helpers.h"
#include "cpp_support/store_helpers.h"

namespace tessera::precomputed {
namespace {

namespace fs = std::filesystem;
using store_test::CountingStore;
using store_test::StoreRequest;

const std::vector<int64_t> kShape = {20, 24, 28};  // z, y, x
const std::vector<int64_t> kChunk = {4, 8, 8};     // a 5 x 3 x 4 grid; x edge chunks 4 wide

// Streams random nonzero uint16 values (C order over kShape) into a precomputed volume and loads
// its files into a CountingStore. Returns the values.
std::vector<uint16_t> WriteVolume(const std::string& name, ArraySpec spec, CountingStore* store) {
  const fs::path dir = fs::temp_directory_path() / ("tessera_volume_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  spec.dtype = DataType::kUInt16;
  spec.shape = kShape;
  spec.chunk_shape = kChunk;
  spec.codec = Codec::kNone;
  StreamOptions o;
  o.format = Format::kPrecomputed;
  o.threads = 2;
  std::vector<uint16_t> data(static_cast<size_t>(kShape[0] * kShape[1] * kShape[2]));
  std::mt19937 rng(99);
  for (uint16_t& v : data) v = static_cast<uint16_t>(1 + rng() % 65535);
  auto s = CreateStream(dir.string(), spec, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return data;
  EXPECT_TRUE((*s)->Append(ByteView(reinterpret_cast<const uint8_t*>(data.data()), data.size() * 2)).ok());
  EXPECT_TRUE((*s)->Close().ok());
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream f(entry.path(), std::ios::binary);
    const Bytes bytes{std::istreambuf_iterator<char>(f), {}};
    EXPECT_TRUE(store->Set(fs::relative(entry.path(), dir).generic_string(), bytes).ok());
  }
  fs::remove_all(dir);
  return data;
}

nlohmann::json Info(const CountingStore& store) {
  const Bytes text = **store.memory.Get("info");
  return nlohmann::json::parse(text.begin(), text.end());
}

// The raw encoding of grid chunk `c` (z, y, x): its voxels cropped to the volume, x fastest.
Bytes RawChunk(const std::vector<uint16_t>& data, const std::vector<int64_t>& c) {
  Bytes out;
  for (int64_t z = c[0] * kChunk[0]; z < std::min((c[0] + 1) * kChunk[0], kShape[0]); ++z)
    for (int64_t y = c[1] * kChunk[1]; y < std::min((c[1] + 1) * kChunk[1], kShape[1]); ++y)
      for (int64_t x = c[2] * kChunk[2]; x < std::min((c[2] + 1) * kChunk[2], kShape[2]); ++x) {
        const uint16_t v = data[static_cast<size_t>((z * kShape[1] + y) * kShape[2] + x)];
        out.push_back(static_cast<uint8_t>(v));
        out.push_back(static_cast<uint8_t>(v >> 8));
      }
  return out;
}

// Reads `expr` through a freshly opened volume (no minishard index cached) after forgetting the
// requests so far; checks the values and returns the selection.
Hyperslab ReadFresh(const std::shared_ptr<CountingStore>& store, const std::vector<uint16_t>& data,
                    const std::string& expr) {
  auto volume = PrecomputedVolume::Open(store);
  EXPECT_TRUE(volume.ok()) << volume.status().ToString();
  Result<Hyperslab> sel = ParseSliceExpression(expr, kShape);
  EXPECT_TRUE(sel.ok()) << sel.status().ToString();
  store->ClearRequests();
  std::vector<uint16_t> out(static_cast<size_t>(sel->NumElements()));
  Status st = ReadHyperslab(**volume, *sel, reinterpret_cast<uint8_t*>(out.data()), ReadOptions{3});
  EXPECT_TRUE(st.ok()) << st.ToString();
  for (int64_t i = 0, n = sel->NumElements(); i < n; ++i) {
    int64_t rem = i, flat = 0, pos[3];
    for (int d = 2; d >= 0; --d) {
      pos[d] = sel->dims[d].start + (rem % sel->dims[d].count) * sel->dims[d].step;
      rem /= sel->dims[d].count;
    }
    flat = (pos[0] * kShape[1] + pos[1]) * kShape[2] + pos[2];
    if (out[i] != data[flat]) {
      ADD_FAILURE() << expr << ": element " << i << " is " << out[i] << ", not " << data[flat];
      break;
    }
  }
  return *sel;
}

std::vector<std::string> Selections() {
  std::vector<std::string> out = {"5:7, 9:11, 17:20",  // inside chunk (1, 1, 2)
                                  "::8, ::16, ::17",   // chunks 0 2 4 x 0 2 x 0 2: skipping whole chunks
                                  "19, 3:24:10, 27",   // 4 x 0 1 2 x 3 (the edge chunk)
                                  "::-5, 23, ::-9", ""};
  std::mt19937 rng(7);
  for (int t = 0; t < 30; ++t) {
    std::string expr;
    for (size_t d = 0; d < 3; ++d) {
      const int64_t start = rng() % kShape[d], step = 1 + rng() % 10;
      const int64_t stop = start + 1 + rng() % (kShape[d] - start);
      expr += (d ? ", " : "") + std::to_string(start) + ":" + std::to_string(stop) + ":" + std::to_string(step);
    }
    out.push_back(expr);
  }
  return out;
}

TEST(PrecomputedReadRequests, UnshardedReadsGetExactlyTheTouchedChunkFiles) {
  auto store = std::make_shared<CountingStore>();
  ArraySpec spec;
  spec.precomputed.voxel_offset_xyz = {3, 2, 5};  // file names are in voxel coordinates
  const std::vector<uint16_t> data = WriteVolume("unsharded", spec, store.get());
  const nlohmann::json scale = Info(*store)["scales"][0];
  const std::string key = scale["key"];
  for (const std::string& expr : Selections()) {
    SCOPED_TRACE(expr);
    const Hyperslab sel = ReadFresh(store, data, expr);
    std::vector<StoreRequest> expected;
    for (const std::vector<int64_t>& c : selection_test::ChunksOf(sel, kChunk)) {
      // "x0-x1_y0-y1_z0-z1", edge chunks ending at the volume's edge.
      std::string name;
      for (int d = 2; d >= 0; --d) {
        const int64_t offset = scale["voxel_offset"][2 - d].get<int64_t>();
        const int64_t begin = offset + c[d] * kChunk[d], end = offset + std::min((c[d] + 1) * kChunk[d], kShape[d]);
        name += (d == 2 ? "" : "_") + std::to_string(begin) + "-" + std::to_string(end);
      }
      const Bytes raw = RawChunk(data, c);
      ASSERT_EQ(**store->memory.Get(key + "/" + name), raw) << name;
      expected.push_back({StoreRequest::Op::kGet, key + "/" + name, 0, raw.size(), true});
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(store->SortedRequests(), expected);
  }
}

// Where a chunk lies in a sharded volume, from the shard files as the sharding spec lays them out.
struct Located {
  std::string key;
  uint64_t minishard = 0;
  uint64_t index_begin = 0, index_end = 0;  // its minishard index
  uint64_t begin = 0, end = 0;              // its data
};

// Every chunk of every shard file: the shard index (2^minishard_bits entries of 16 bytes: the
// minishard index's range, relative to the shard index's end) and the raw minishard indices
// ([3, n] little-endian uint64: chunk ids and data starts delta-coded, sizes).
std::vector<Located> ChunksOfShards(const CountingStore& store, const std::string& scale_key, int minishard_bits) {
  std::vector<Located> out;
  const uint64_t index_bytes = uint64_t{16} << minishard_bits;
  const std::vector<std::string> keys = *store.memory.List(scale_key + "/");
  for (const std::string& key : keys) {
    EXPECT_TRUE(key.ends_with(".shard")) << key;
    const Bytes shard = **store.memory.Get(key);
    for (uint64_t m = 0; m < (uint64_t{1} << minishard_bits); ++m) {
      const uint64_t mi_begin = index_bytes + DecodeFixed64LE(shard.data() + 16 * m);
      const uint64_t mi_end = index_bytes + DecodeFixed64LE(shard.data() + 16 * m + 8);
      const uint64_t n = (mi_end - mi_begin) / 24;
      const uint8_t* mi = shard.data() + mi_begin;
      uint64_t end = index_bytes;
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t begin = end + DecodeFixed64LE(mi + 8 * (n + i));
        end = begin + DecodeFixed64LE(mi + 8 * (2 * n + i));
        out.push_back({key, m, mi_begin, mi_end, begin, end});
      }
    }
  }
  return out;
}

TEST(PrecomputedReadRequests, ShardedReadsFetchTheTouchedChunksAndTheirIndexesOnly) {
  for (const std::string hash : {"identity", "murmurhash3_x86_128"}) {
    SCOPED_TRACE(hash);
    auto store = std::make_shared<CountingStore>();
    ArraySpec spec;
    spec.shard_chunks = {2, 2, 2};
    spec.precomputed.hash = hash;
    const std::vector<uint16_t> data = WriteVolume("sharded_" + hash, spec, store.get());
    const nlohmann::json scale = Info(*store)["scales"][0];
    const std::string scale_key = scale["key"];
    ASSERT_EQ(scale["sharding"]["minishard_index_encoding"], "raw");
    ASSERT_EQ(scale["sharding"]["data_encoding"], "raw");
    const std::vector<Located> located =
        ChunksOfShards(*store, scale_key, scale["sharding"]["minishard_bits"].get<int>());
    // Each grid chunk is found by its bytes in exactly one entry of one minishard index.
    std::map<std::vector<int64_t>, Located> where;
    for (const std::vector<int64_t>& c : selection_test::CrossProduct({{0, 1, 2, 3, 4}, {0, 1, 2}, {0, 1, 2, 3}})) {
      const Bytes raw = RawChunk(data, c);
      int found = 0;
      for (const Located& l : located) {
        const Bytes shard = **store->memory.Get(l.key);
        if (l.end - l.begin == raw.size() && std::equal(raw.begin(), raw.end(), shard.begin() + l.begin)) {
          where[c] = l;
          ++found;
        }
      }
      ASSERT_EQ(found, 1) << "chunk " << selection_test::Join(c);
    }
    for (const std::string& expr : Selections()) {
      SCOPED_TRACE(expr);
      const Hyperslab sel = ReadFresh(store, data, expr);
      // Range requests: per touched chunk its data, exactly once; per touched minishard its shard
      // index entry and its minishard index (once each, but for two threads missing the cache at
      // the same time). The shard's size may be asked, for touched shards only; nothing is read whole.
      std::set<StoreRequest> index_ranges;
      std::multiset<StoreRequest> data_ranges;
      std::set<std::string> shards;
      for (const std::vector<int64_t>& c : selection_test::ChunksOf(sel, kChunk)) {
        const Located& l = where[c];
        index_ranges.insert({StoreRequest::Op::kGetRange, l.key, 16 * l.minishard, 16 * l.minishard + 16, true});
        index_ranges.insert({StoreRequest::Op::kGetRange, l.key, l.index_begin, l.index_end, true});
        data_ranges.insert({StoreRequest::Op::kGetRange, l.key, l.begin, l.end, true});
        shards.insert(l.key);
      }
      std::set<StoreRequest> got_index_ranges;
      std::multiset<StoreRequest> got_data_ranges;
      for (const StoreRequest& r : store->SortedRequests()) {
        if (r.op == StoreRequest::Op::kSize) {
          EXPECT_TRUE(shards.count(r.key)) << r;
        } else if (data_ranges.count(r)) {
          got_data_ranges.insert(r);
        } else {
          EXPECT_TRUE(index_ranges.count(r)) << r << " is neither a touched chunk nor its index";
          got_index_ranges.insert(r);
        }
      }
      EXPECT_EQ(got_data_ranges, data_ranges);
      EXPECT_EQ(got_index_ranges, index_ranges);
    }
  }
}

}  // namespace
}  // namespace tessera::precomputed
