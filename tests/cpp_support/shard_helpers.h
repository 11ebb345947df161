// What a read of a sharded Zarr array must fetch, worked out from the stored bytes by the Zarr v3
// sharding specification (test-only; not part of the library, and sharing none of its code).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/bytes.h"
#include "cpp_support/selection_helpers.h"
#include "cpp_support/store_helpers.h"

namespace tessera::shard_test {

using store_test::CountingStore;
using store_test::StoreRequest;

// One entry of a shard index: where an inner chunk's bytes lie in its shard.
struct IndexEntry {
  uint64_t offset = 0, nbytes = 0;
  bool empty() const { return offset == ~uint64_t{0} && nbytes == ~uint64_t{0}; }
  uint64_t end() const { return offset + nbytes; }
};

// The geometry of a sharded array stored at the root of a store, with the default chunk key
// encoding ("c/0/1/2") and the default index codecs (bytes + crc32c).
struct ShardedGeometry {
  std::vector<int64_t> inner;      // inner chunk shape
  std::vector<int64_t> per_shard;  // inner chunks per shard, per dimension
  bool index_at_start = false;

  size_t ChunksPerShard() const {
    size_t n = 1;
    for (int64_t c : per_shard) n *= static_cast<size_t>(c);
    return n;
  }
  // The shard index: per inner chunk, C order, offset and nbytes as little-endian uint64 (all ones
  // for a chunk that is not stored), then its 4-byte crc32c; at the start or the end of the shard.
  uint64_t IndexBytes() const { return 16 * ChunksPerShard() + 4; }
  std::string ShardKey(const std::vector<int64_t>& shard) const { return "c/" + selection_test::Join(shard); }
  std::vector<int64_t> ShardOf(const std::vector<int64_t>& inner_coords) const {
    std::vector<int64_t> s(inner_coords.size());
    for (size_t d = 0; d < s.size(); ++d) s[d] = inner_coords[d] / per_shard[d];
    return s;
  }
  // The position of an inner chunk in its shard's index (C order over per_shard).
  size_t Slot(const std::vector<int64_t>& inner_coords) const {
    size_t slot = 0;
    for (size_t d = 0; d < inner_coords.size(); ++d)
      slot = slot * static_cast<size_t>(per_shard[d]) + static_cast<size_t>(inner_coords[d] % per_shard[d]);
    return slot;
  }
  std::vector<IndexEntry> ParseIndex(const Bytes& shard) const {
    const size_t n = ChunksPerShard();
    const size_t begin = index_at_start ? 0 : shard.size() - IndexBytes();
    std::vector<IndexEntry> entries(n);
    for (size_t i = 0; i < n; ++i) {
      entries[i].offset = DecodeFixed64LE(shard.data() + begin + 16 * i);
      entries[i].nbytes = DecodeFixed64LE(shard.data() + begin + 16 * i + 8);
    }
    return entries;
  }
};

// The touched inner chunks of each touched shard, by shard key.
struct ShardNeeds {
  std::vector<int64_t> shard;
  std::vector<std::vector<int64_t>> inner;  // inner chunk coordinates (of the whole array)
};
inline std::map<std::string, ShardNeeds> NeedsByShard(const ShardedGeometry& g, const Hyperslab& selection) {
  std::map<std::string, ShardNeeds> out;
  for (const std::vector<int64_t>& c : selection_test::ChunksOf(selection, g.inner)) {
    const std::vector<int64_t> shard = g.ShardOf(c);
    ShardNeeds& n = out[g.ShardKey(shard)];
    n.shard = shard;
    n.inner.push_back(c);
  }
  return out;
}

inline std::optional<Bytes> StoredShard(const CountingStore& store, const std::string& key) {
  Result<std::optional<Bytes>> got = store.memory.Get(key);
  EXPECT_TRUE(got.ok());
  return got.ok() ? *got : std::nullopt;
}

// Every request a chunk-by-chunk read (io_concurrency 0) of `selection` sends, sorted: per touched
// shard its index (the index and the shard's size in one suffix request; for an index at the start,
// the size and then the first bytes), then the byte range of each touched inner chunk the index
// lists. An absent shard costs the index request alone, an absent inner chunk nothing.
inline std::vector<StoreRequest> ExpectedChunkByChunk(const CountingStore& store, const ShardedGeometry& g,
                                                      const Hyperslab& selection) {
  std::vector<StoreRequest> out;
  using Op = StoreRequest::Op;
  for (const auto& [key, needs] : NeedsByShard(g, selection)) {
    const std::optional<Bytes> shard = StoredShard(store, key);
    if (!shard) {
      out.push_back({g.index_at_start ? Op::kSize : Op::kGetSuffixAndSize, key, 0, 0, false});
      continue;
    }
    const uint64_t size = shard->size();
    if (g.index_at_start) {
      out.push_back({Op::kSize, key, 0, 0, true});
      out.push_back({Op::kGetRange, key, 0, g.IndexBytes(), true});
    } else {
      out.push_back({Op::kGetSuffixAndSize, key, size - g.IndexBytes(), size, true});
    }
    const std::vector<IndexEntry> index = g.ParseIndex(*shard);
    for (const std::vector<int64_t>& c : needs.inner) {
      const IndexEntry& e = index[g.Slot(c)];
      if (!e.empty()) out.push_back({Op::kGetRange, key, e.offset, e.end(), true});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Checks the requests of a coalescing read (io_concurrency > 0) of `selection`: untouched shards
// are never asked for; a shard whose every inner chunk is touched is one whole-value Get and
// nothing else; any other touched shard is one index request, then range requests each of which
// starts where a touched stored chunk starts and ends where one ends, together holding every
// touched stored chunk exactly once, never overlapping, and bridging no gap between touched chunks
// wider than `max_gap` bytes (the bytes of untouched chunks are fetched only inside such gaps).
inline void ExpectCoalescedRequests(const CountingStore& store, const ShardedGeometry& g, const Hyperslab& selection,
                                    uint64_t max_gap, const std::string& trace) {
  using Op = StoreRequest::Op;
  const std::map<std::string, ShardNeeds> needs = NeedsByShard(g, selection);
  std::map<std::string, std::vector<StoreRequest>> by_key;
  for (const StoreRequest& r : store.SortedRequests()) by_key[r.key].push_back(r);
  for (const auto& [key, requests] : by_key)
    EXPECT_TRUE(needs.count(key)) << trace << ": " << requests.front() << " of a shard the selection misses";
  for (const auto& [key, need] : needs) {
    SCOPED_TRACE(trace + ", shard " + key);
    const std::vector<StoreRequest>& got = by_key[key];
    const std::optional<Bytes> shard = StoredShard(store, key);
    if (need.inner.size() == g.ChunksPerShard()) {  // every inner chunk: the shard in one request
      const std::vector<StoreRequest> whole = {
          StoreRequest{Op::kGet, key, 0, shard ? shard->size() : 0, shard.has_value()}};
      EXPECT_EQ(got, whole);
      continue;
    }
    std::vector<StoreRequest> indexes, ranges;
    for (const StoreRequest& r : got) (r.op == Op::kGetSuffixAndSize ? indexes : ranges).push_back(r);
    const uint64_t size = shard ? shard->size() : 0;
    const std::vector<StoreRequest> one_index = {
        StoreRequest{Op::kGetSuffixAndSize, key, shard ? size - g.IndexBytes() : 0, size, shard.has_value()}};
    EXPECT_EQ(indexes, one_index);
    for (const StoreRequest& r : ranges) EXPECT_EQ(r.op, Op::kGetRange) << r;
    if (!shard) {
      EXPECT_TRUE(ranges.empty());
      continue;
    }
    // The touched stored chunks, by offset.
    const std::vector<IndexEntry> entries = g.ParseIndex(*shard);
    std::vector<IndexEntry> touched;
    for (const std::vector<int64_t>& c : need.inner)
      if (!entries[g.Slot(c)].empty()) touched.push_back(entries[g.Slot(c)]);
    std::sort(touched.begin(), touched.end(), [](const IndexEntry& a, const IndexEntry& b) { return a.offset < b.offset; });
    std::sort(ranges.begin(), ranges.end(), [](const StoreRequest& a, const StoreRequest& b) { return a.begin < b.begin; });
    size_t next = 0;  // the first touched chunk no range has held yet
    for (const StoreRequest& r : ranges) {
      ASSERT_LT(next, touched.size()) << r << " holds no touched chunk";
      EXPECT_EQ(r.begin, touched[next].offset) << r << " does not start at a touched chunk";
      uint64_t end = touched[next].end();
      ++next;
      while (next < touched.size() && touched[next].end() <= r.end) {
        EXPECT_LE(touched[next].offset - end, max_gap) << r << " bridges a gap of untouched bytes";
        end = touched[next].end();
        ++next;
      }
      EXPECT_EQ(r.end, end) << r << " does not end at a touched chunk";
    }
    EXPECT_EQ(next, touched.size()) << "touched chunks no range holds";
  }
}

}  // namespace tessera::shard_test
