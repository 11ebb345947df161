#include "tessera/hdf5/filters.h"

#include <algorithm>

#include <gtest/gtest.h>

#include <random>

#include "cpp_support/status_matchers.h"

namespace tessera::hdf5 {
namespace {

Bytes Iota(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 7 + i / 13);
  return b;
}

TEST(Hdf5Filters, Fletcher32HandChecked) {
  const uint8_t two[] = {0x01, 0x02};
  EXPECT_EQ(Fletcher32(two), 0x01020102u);
  // Words 0x0102, 0x0300 (odd byte is a high byte): sum1 = 0x0402, sum2 = 0x0102 + 0x0402.
  const uint8_t three[] = {0x01, 0x02, 0x03};
  EXPECT_EQ(Fletcher32(three), 0x05040402u);
  EXPECT_EQ(Fletcher32({}), 0u);
}

TEST(Hdf5Filters, ShuffleGroupsBytesAndKeepsTheTail) {
  const uint8_t in[] = {1, 2, 3, 4, 5, 6, 7};  // two 3-byte elements and one spare byte
  uint8_t out[7], back[7];
  Shuffle(in, 7, 3, out);
  EXPECT_EQ(Bytes(out, out + 7), (Bytes{1, 4, 2, 5, 3, 6, 7}));
  Unshuffle(out, 7, 3, back);
  EXPECT_EQ(Bytes(back, back + 7), Bytes(in, in + 7));
}

TEST(Hdf5Filters, EveryPipelineRoundTrips) {
  const Bytes raw = Iota(10000);
  const std::vector<FilterPipeline> pipelines = {
      {},
      {ShuffleFilter(4)},
      {DeflateFilter(1)},
      {Fletcher32Filter()},
      {ShuffleFilter(2), DeflateFilter(9)},
      {ShuffleFilter(8), DeflateFilter(4), Fletcher32Filter()},
  };
  for (const auto& pipeline : pipelines) {
    Bytes stored, back;
    ASSERT_TRUE(EncodeChunk(pipeline, 4, raw, &stored).ok());
    ASSERT_TRUE(DecodeChunk(pipeline, 0, 4, stored, raw.size(), "chunk", &back).ok());
    EXPECT_EQ(back, raw) << pipeline.size();
  }
}

// Every order of the three filters reads back: netCDF-4 writes fletcher32, shuffle, deflate (the
// deflate data then holds the checksum too), h5py shuffle, deflate, fletcher32.
TEST(Hdf5Filters, EveryOrderOfTheFiltersRoundTrips) {
  const Bytes raw = Iota(10002);  // not a multiple of the element size: shuffle keeps a tail
  FilterPipeline pipeline = {Fletcher32Filter(), ShuffleFilter(4), DeflateFilter(4)};
  std::sort(pipeline.begin(), pipeline.end(), [](const Filter& a, const Filter& b) { return a.id < b.id; });
  int orders = 0;
  do {
    Bytes stored, back;
    ASSERT_TRUE(EncodeChunk(pipeline, 4, raw, &stored).ok());
    const Status st = DecodeChunk(pipeline, 0, 4, stored, raw.size(), "chunk", &back);
    ASSERT_TRUE(st.ok()) << st.ToString() << " (order " << pipeline[0].id << "," << pipeline[1].id << ","
                         << pipeline[2].id << ")";
    EXPECT_EQ(back, raw);
    ++orders;
  } while (std::next_permutation(pipeline.begin(), pipeline.end(),
                                 [](const Filter& a, const Filter& b) { return a.id < b.id; }));
  EXPECT_EQ(orders, 6);
}

TEST(Hdf5Filters, ThirdPartyFiltersAreNamed) {
  const Bytes raw = Iota(64);
  Bytes back;
  const Filter bzip2{307, 0, "", {}};
  Status st = DecodeChunk({bzip2}, 0, 4, raw, raw.size(), "chunk 0 of /x", &back);
  EXPECT_ERROR(st, ErrorKind::kUnsupported, "chunk 0 of /x", "\"bzip2\" (id 307)");
  const Filter named{32013, 0, "H5Z-ZFP-1.1.1 (ZFP-1.0.1)", {}};
  st = DecodeChunk({named}, 0, 4, raw, raw.size(), "chunk 0 of /x", &back);
  EXPECT_ERROR(st, ErrorKind::kUnsupported, "chunk 0 of /x", "H5Z-ZFP", "(id 32013)");
}

// The filters read but not written (filter_decoders.h) are dispatched by id; a chunk that is not
// what its filter says fails naming the chunk and the filter.
TEST(Hdf5Filters, ReadOnlyFiltersAreDecodedByDecodeChunk) {
  const Bytes raw = Iota(64);
  Bytes back;
  for (uint16_t id : {kFilterSzip, kFilterScaleOffset, uint16_t{32000}, uint16_t{32001}, uint16_t{32004},
                      uint16_t{32008}, uint16_t{32015}}) {
    const Filter f{id, 0, "", {}};
    Status st = DecodeChunk({f}, 0, 4, raw, raw.size(), "chunk 0 of /x", &back);
    EXPECT_ERROR(st, ErrorKind::kCorruptData, "chunk 0 of /x", FilterName(id)) << id;
  }
}

TEST(Hdf5Filters, FilterMaskSkipsFilters) {
  const Bytes raw = Iota(4096);
  Bytes stored, back;
  // The chunk was stored with only shuffle applied (deflate, filter 1, skipped).
  ASSERT_TRUE(EncodeChunk({ShuffleFilter(4)}, 4, raw, &stored).ok());
  ASSERT_TRUE(DecodeChunk({ShuffleFilter(4), DeflateFilter(6)}, 0b10, 4, stored, raw.size(), "c", &back).ok());
  EXPECT_EQ(back, raw);
}

TEST(Hdf5Filters, CorruptionIsReportedWithTheChunkName) {
  const Bytes raw = Iota(5000);
  const FilterPipeline pipeline = {ShuffleFilter(2), DeflateFilter(1), Fletcher32Filter()};
  Bytes stored, back;
  ASSERT_TRUE(EncodeChunk(pipeline, 2, raw, &stored).ok());
  Bytes flipped = stored;
  flipped[10] ^= 0x40;
  Status s = DecodeChunk(pipeline, 0, 2, flipped, raw.size(), "f.h5 chunk at 0x10..0x20", &back);
  EXPECT_ERROR(s, ErrorKind::kCorruptData, "f.h5 chunk at 0x10..0x20", "fletcher32 checksum mismatch");
  // Garbage deflate data, no checksum to catch it first.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    Bytes garbage(1 + rng() % 300);
    for (auto& g : garbage) g = static_cast<uint8_t>(rng());
    Status d = DecodeChunk({DeflateFilter(1)}, 0, 1, garbage, 1000, "chunk g", &back);
    EXPECT_ERROR(d, ErrorKind::kCorruptData, "chunk g: ") << "trial " << trial;
  }
  // Right stream, wrong expected size.
  Bytes deflated;
  ASSERT_TRUE(EncodeChunk({DeflateFilter(1)}, 1, raw, &deflated).ok());
  EXPECT_ERROR(DecodeChunk({DeflateFilter(1)}, 0, 1, deflated, raw.size() + 1, "chunk c", &back),
               ErrorKind::kCorruptData, "chunk c: ", "decodes to 5000 bytes", "holds 5001");
  EXPECT_ERROR(DecodeChunk({DeflateFilter(1)}, 0, 1, deflated, raw.size() - 1, "chunk c", &back),
               ErrorKind::kCorruptData, "chunk c: ", "more than the chunk's 4999 bytes");
  EXPECT_ERROR(DecodeChunk({Filter{32026, 0, "blosc2", {}}}, 0, 1, deflated, 10, "chunk c", &back),
               ErrorKind::kUnsupported, "chunk c: ", "\"blosc2\" (id 32026)", "not supported");
}

}  // namespace
}  // namespace tessera::hdf5
