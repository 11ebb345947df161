// Converting region by region: byte for byte what a stream of the same values writes (random
// shapes, ranks 1 to 5, chunkings, shards, codecs, Zarr and precomputed), rows published in order,
// the plan naming the regions, and the cases that stay on the stream.
#include "tessera/api/region_copy.h"

#include <filesystem>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "cpp_support/api_helpers.h"
#include "cpp_support/status_matchers.h"
#include "tessera/api/convert.h"
#include "tessera/api/stream.h"
#include "tessera/core/text.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using api_test::Files;

class RegionCopyTest : public api_test::TempDirTest {};

Status StreamAll(const std::string& where, const ArraySpec& spec, Format format, const std::vector<uint8_t>& bytes) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<Stream> s, CreateStream(where, spec, {.format = format, .threads = 2}));
  TESSERA_RETURN_IF_ERROR(s->Append(ByteView(bytes.data(), bytes.size())));
  return s->Close();
}

// Values with runs of zeros (whole chunks of fill, dropped by both) and random elsewhere.
std::vector<uint8_t> Values(std::mt19937& rng, int64_t elements, size_t item) {
  std::vector<uint8_t> v(static_cast<size_t>(elements) * item);
  const int64_t zero_from = elements / 5, zero_to = elements / 3;
  for (int64_t i = 0; i < elements; ++i)
    for (size_t b = 0; b < item; ++b)
      v[static_cast<size_t>(i) * item + b] = i >= zero_from && i < zero_to ? 0 : static_cast<uint8_t>(rng() % 7 == 0 ? 0 : rng());
  return v;
}

TEST_F(RegionCopyTest, AConversionEqualsAStreamOfTheSameValuesByteForByte) {
  std::mt19937 rng(20261126);
  const Codec codecs[] = {Codec::kNone, Codec::kZstd, Codec::kGzip, Codec::kBloscLz4, Codec::kBloscZstd};
  for (int trial = 0; trial < 24; ++trial) {
    const bool precomputed = trial % 3 == 2;
    const Format format = precomputed ? Format::kPrecomputed : Format::kZarr3;
    const int rank = precomputed ? 3 : 1 + static_cast<int>(rng() % 5);
    ArraySpec spec;
    spec.dtype = precomputed ? (trial % 2 ? DataType::kUInt32 : DataType::kUInt8)
                             : (trial % 2 ? DataType::kUInt16 : DataType::kFloat64);
    for (int d = 0; d < rank; ++d) {
      const int64_t extent = 1 + static_cast<int64_t>(rng() % (rank > 3 ? 7 : 30));
      spec.shape.push_back(extent);
      spec.chunk_shape.push_back(1 + static_cast<int64_t>(rng() % std::min<int64_t>(extent + 2, 9)));
    }
    const bool sharded = rng() % 3 != 0;
    if (sharded)
      for (int d = 0; d < rank; ++d) spec.shard_chunks.push_back(precomputed ? 2 : 1 + static_cast<int64_t>(rng() % 3));
    if (precomputed) {
      spec.codec = sharded && rng() % 2 ? Codec::kGzip : Codec::kNone;
      if (spec.dtype == DataType::kUInt32 && rng() % 2) spec.precomputed.encoding = "compressed_segmentation";
    } else {
      spec.codec = codecs[rng() % 5];
      if (sharded && rng() % 3 == 0) spec.zarr.index_at_start = true;
      if (rng() % 2) spec.fill_value = 0;
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + " shape " + JoinIntegers(spec.shape) + " chunks " +
                 JoinIntegers(spec.chunk_shape) + " shards " + JoinIntegers(spec.shard_chunks) + " codec " +
                 std::string(CodecName(*spec.codec)));
    int64_t elements = 1;
    for (int64_t v : spec.shape) elements *= v;
    const std::vector<uint8_t> bytes = Values(rng, elements, ItemSize(spec.dtype));
    const std::string tag = std::to_string(trial);
    // The source: another chunking, so that regions read parts of its chunks.
    ArraySpec source_spec;
    source_spec.dtype = spec.dtype;
    source_spec.shape = spec.shape;
    for (int d = 0; d < rank; ++d) source_spec.chunk_shape.push_back(1 + static_cast<int64_t>(rng() % 6));
    source_spec.codec = Codec::kZstd;
    ASSERT_TRUE(StreamAll(Path("src" + tag), source_spec, Format::kZarr3, bytes).ok());
    Status streamed = StreamAll(Path("stream" + tag), spec, format, bytes);
    ASSERT_TRUE(streamed.ok()) << streamed.ToString();
    auto source = OpenArray(Path("src" + tag));
    ASSERT_TRUE(source.ok());
    auto resolved = api_internal::Resolve(Path("copy" + tag), spec, {.format = format, .threads = 3});
    ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
    ASSERT_TRUE(api_internal::CopiesByRegions(*resolved, {.format = format}));
    Result<StreamStatistics> copied = Convert(**source, Path("copy" + tag), spec, {.format = format, .threads = 3});
    ASSERT_TRUE(copied.ok()) << copied.status().ToString();
    EXPECT_EQ(copied->bytes_in, static_cast<int64_t>(bytes.size()));
    EXPECT_EQ(copied->rows_published, spec.shape[0]);
    const auto want = Files(Path("stream" + tag)), got = Files(Path("copy" + tag));
    EXPECT_EQ(got.size(), want.size());
    for (const auto& [key, value] : want) EXPECT_TRUE(got.count(key) && got.at(key) == value) << key;
  }
}

// The rows of a region band are published once every region of it and before it is stored: a
// copy that fails at a region keeps the bands before it, exactly, and no more. A corrupt source
// chunk is an error naming it whether the copy decodes and encodes or copies chunks as stored
// (each is decoded to check it: nothing corrupt is copied).
TEST_F(RegionCopyTest, AFailureKeepsTheBandsPublishedBeforeIt) {
  ArraySpec spec = api_test::Uint16({40, 6, 8}, {4, 6, 8});
  std::vector<uint8_t> bytes(40 * 6 * 8 * 2);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_TRUE(StreamAll(Path("src.zarr"), spec, Format::kZarr3, bytes).ok());
  fs::resize_file(fs::path(Path("src.zarr")) / "c" / "5" / "0" / "0", 3);  // rows 20..23 unreadable
  auto source = OpenArray(Path("src.zarr")).value();
  for (const bool as_stored : {true, false}) {
    SCOPED_TRACE(as_stored ? "chunks copied as stored" : "decoded and encoded");
    ArraySpec destination = spec;
    if (!as_stored) destination.codec = Codec::kGzip;
    const std::string where = Path(as_stored ? "stored.zarr" : "encoded.zarr");
    auto plan = PlanConversion(*source, where, destination, {.format = Format::kZarr3, .threads = 1});
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->find("copying its chunks as stored") != std::string::npos, as_stored) << *plan;
    // One worker: the regions in order, so the failing band is the first not published.
    Result<StreamStatistics> st = Convert(*source, where, destination, {.format = Format::kZarr3, .threads = 1});
    EXPECT_ERROR(st, ErrorKind::kCorruptData, "c/5/0/0", "region at 20,0,0");
    auto kept = OpenArray(where);
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    ASSERT_EQ((*kept)->shape()[0], 20);
    std::vector<uint8_t> got(20 * 6 * 8 * 2);
    ASSERT_TRUE((*kept)->Read(Hyperslab::All((*kept)->shape()), got.data()).ok());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), bytes.begin()));
  }
}

// A destination of the source's chunk grid and chunk codecs (sharded differently, or sharded
// where the source is not) takes the source's chunks as stored: byte for byte what a stream of
// the same values writes, as the decode-and-encode path does. Another codec, fill value or grid
// decodes and encodes.
TEST_F(RegionCopyTest, ChunksCopiedAsStoredEqualTheDecodeAndEncodePath) {
  std::mt19937 rng(7);
  const std::vector<uint8_t> bytes = Values(rng, 37 * 21 * 19, 2);
  struct Case {
    std::vector<int64_t> source_shards, shards;
    Codec source_codec, codec;
    bool as_stored;
  };
  const std::vector<Case> cases = {
      {{2, 2, 2}, {4, 1, 3}, Codec::kZstd, Codec::kZstd, true},        // re-shard
      {{}, {2, 3, 2}, Codec::kBloscLz4, Codec::kBloscLz4, true},       // shard an unsharded array
      {{3, 3, 1}, {}, Codec::kGzip, Codec::kGzip, true},               // unshard
      {{2, 2, 2}, {2, 2, 2}, Codec::kNone, Codec::kNone, true},        // the same
      {{2, 2, 2}, {4, 1, 3}, Codec::kZstd, Codec::kBloscZstd, false},  // another codec
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    SCOPED_TRACE("case " + std::to_string(c));
    ArraySpec source_spec = api_test::Uint16({37, 21, 19}, {5, 4, 6}, k.source_shards);
    source_spec.codec = k.source_codec;
    ArraySpec spec = api_test::Uint16({37, 21, 19}, {5, 4, 6}, k.shards);
    spec.codec = k.codec;
    const std::string tag = std::to_string(c);
    ASSERT_TRUE(StreamAll(Path("src" + tag), source_spec, Format::kZarr3, bytes).ok());
    ASSERT_TRUE(StreamAll(Path("stream" + tag), spec, Format::kZarr3, bytes).ok());
    auto source = OpenArray(Path("src" + tag)).value();
    auto plan = PlanConversion(*source, Path("copy" + tag), spec, {.format = Format::kZarr3, .threads = 2});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->find("copying its chunks as stored") != std::string::npos, k.as_stored) << *plan;
    Result<StreamStatistics> copied = Convert(*source, Path("copy" + tag), spec, {.format = Format::kZarr3, .threads = 2});
    ASSERT_TRUE(copied.ok()) << copied.status().ToString();
    const auto want = Files(Path("stream" + tag)), got = Files(Path("copy" + tag));
    EXPECT_EQ(got.size(), want.size());
    for (const auto& [key, value] : want) EXPECT_TRUE(got.count(key) && got.at(key) == value) << key;
  }
}

// Regions: whole shards, grown along the last dimensions to ~16 MiB; the plan says so. Pyramids,
// precomputed murmurhash3 shards, HDF5 files and the GPU backend stay on the stream.
TEST_F(RegionCopyTest, RegionsAreWholeShardsAndThePlanNamesThem) {
  ArraySpec spec = api_test::Uint16({64, 256, 2048}, {32, 32, 32}, {2, 4, 4});
  auto r = api_internal::Resolve(Path("a.zarr"), spec, {.format = Format::kZarr3, .threads = 2});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto region = api_internal::CopyRegionShape(*r);
  ASSERT_TRUE(region.ok());
  EXPECT_EQ(*region, (std::vector<int64_t>{64, 128, 1024}));  // 16 MiB: 8 shards of 64x128x128 along x
  ASSERT_TRUE(StreamAll(Path("src.zarr"), api_test::Uint16({64, 256, 2048}, {64, 256, 256}), Format::kZarr3,
                        std::vector<uint8_t>(64 * 256 * 2048 * 2, 1)).ok());
  auto plan = api_internal::PlanRegionCopy(*OpenArray(Path("src.zarr")).value(), *r);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->find("copy by regions: 4 regions of 64,128,1024 (16.0 MiB; whole shards of 64,128,128), 2 workers"),
            std::string::npos)
      << *plan;
  // Per worker: 2 x 16 MiB, a source chunk of 8 MiB, a chunk of 64 KiB; two workers.
  EXPECT_NE(plan->find("planned peak:           80.1 MiB"), std::string::npos) << *plan;
  EXPECT_TRUE(api_internal::CopiesByRegions(*r, {}));
  ArraySpec pyramid = spec;
  pyramid.pyramid.levels = 2;
  EXPECT_FALSE(api_internal::CopiesByRegions(api_internal::Resolve(Path("p.zarr"), pyramid, {}).value(), {}));
  EXPECT_FALSE(api_internal::CopiesByRegions(*r, {.backend = stream::Backend::kCuda}));
  EXPECT_FALSE(api_internal::CopiesByRegions(*r, {.discard = true}));
  EXPECT_FALSE(api_internal::CopiesByRegions(*r, {.mode = Mode::kAppend}));
  ArraySpec murmur = api_test::Uint16({64, 64, 64}, {16, 16, 16}, {2, 2, 2});
  murmur.precomputed.hash = "murmurhash3_x86_128";
  EXPECT_FALSE(api_internal::CopiesByRegions(
      api_internal::Resolve(Path("m"), murmur, {.format = Format::kPrecomputed}).value(), {}));
  EXPECT_FALSE(api_internal::CopiesByRegions(
      api_internal::Resolve(Path("f.h5"), api_test::Uint16({8, 8}, {4, 4}), {}).value(), {}));
}

}  // namespace
}  // namespace tessera
