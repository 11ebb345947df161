// Storage order different from arrival order: a stream told its input arrives with dimensions
// 1.. reordered (SetArrivalOrder) stores exactly what a stream without one stores when given the
// same data transposed to the stored order, object for object, byte for byte; for random
// permutations of ranks 2-5, dtypes, odd sizes, edge chunks, sharded or not, compressing or not,
// in appends split anywhere (inside rows and elements), pulled (AppendFrom), flushed midway, in
// whole epochs (the direct-epoch gather) and in spans large enough for the parallel scatter.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"
#include "tessera/api/convert.h"
#include "tessera/api/create_array.h"
#include "tessera/api/stream.h"
#include "tessera/index/index.h"
#include "tessera/store/memory_store.h"
#include "tessera/stream/stream_writer.h"
#include "tessera/zarr/array.h"
#include "tessera/zarr/zarr_stream.h"

namespace tessera::stream {
namespace {

// `stored` (row-major over `shape`) as it arrives: arriving dimension i is stored dimension
// order[i], i.e. numpy's stored.transpose(order).
Bytes Arriving(const Bytes& stored, const std::vector<int64_t>& shape, const std::vector<int64_t>& order, size_t item) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> arriving_shape(rank), stored_strides(rank);
  for (int i = 0; i < rank; ++i) arriving_shape[i] = shape[order[i]];
  index::RowMajorStrides(rank, shape.data(), stored_strides.data());
  Bytes out(stored.size());
  const int64_t n = static_cast<int64_t>(stored.size() / item);
  int64_t a[kMaxRank];
  for (int64_t k = 0; k < n; ++k) {
    index::Unravel(rank, arriving_shape.data(), k, a);
    int64_t src = 0;
    for (int i = 0; i < rank; ++i) src += a[i] * stored_strides[order[i]];
    std::memcpy(out.data() + k * item, stored.data() + src * item, item);
  }
  return out;
}

enum class Feed { kRandomSplits, kPull, kWholeEpochs, kOneCall };

// Streams `data` into `path` of `store` with `order` as its arrival order (empty: none), fed as
// `feed` says (the random split sizes drawn from `seed`); `flush_at`: flush after that many bytes.
void StreamInto(std::shared_ptr<MemoryStore> store, const std::string& path, const zarr::ArrayOptions& options,
                const std::vector<int64_t>& order, const Bytes& data, Feed feed, uint32_t seed, int threads,
                size_t flush_at) {
  StreamWriterOptions wo;
  wo.threads = threads;
  auto zs = zarr::OpenZarrStream(store, path, options, wo);
  ASSERT_TRUE(zs.ok()) << zs.status().ToString();
  ASSERT_TRUE(zs->writer->SetArrivalOrder(order).ok());
  std::mt19937 rng(seed);
  size_t pos = 0;
  bool flushed = false;
  auto maybe_flush = [&] {
    if (!flushed && pos >= flush_at) {
      ASSERT_TRUE(zs->writer->Flush().ok());
      flushed = true;
    }
  };
  const StreamLayout& L = zs->writer->layout();
  const size_t epoch_bytes = static_cast<size_t>(L.epoch_bytes);
  if (feed == Feed::kPull) {
    auto read = [&](MutableByteView dst) -> Result<size_t> {
      const size_t n = std::min({dst.size(), data.size() - pos, size_t{1} + rng() % (data.size() / 3 + 1)});
      std::memcpy(dst.data(), data.data() + pos, n);
      pos += n;
      return n;
    };
    Result<int64_t> taken = zs->writer->AppendFrom(read);
    ASSERT_TRUE(taken.ok()) << taken.status().ToString();
    ASSERT_EQ(*taken, static_cast<int64_t>(data.size()));
  }
  while (pos < data.size()) {
    size_t n = data.size() - pos;
    if (feed == Feed::kRandomSplits) n = std::min(n, rng() % 4 == 0 ? size_t{1} : 1 + rng() % (data.size() / 4 + 1));
    if (feed == Feed::kWholeEpochs) n = std::min(n, epoch_bytes);
    ASSERT_TRUE(zs->writer->Append(ByteView(data.data() + pos, n)).ok());
    pos += n;
    maybe_flush();
  }
  Status st = zs->writer->Close();
  ASSERT_TRUE(st.ok()) << st.ToString();
}

// The check: the stream with arrival order `order` given the transposed data equals the stream
// without one given the stored data, object for object, and reads back as the stored data.
void ExpectSameAsStoredOrder(const zarr::ArrayOptions& options, const Bytes& stored, const std::vector<int64_t>& order,
                             Feed feed, uint32_t seed, int threads, bool flush_midway) {
  const int rank = static_cast<int>(options.shape.size());
  const size_t item = ItemSize(options.dtype);
  const int64_t row_elements = index::Product(rank - 1, options.shape.data() + 1);
  std::vector<int64_t> shape = options.shape;
  shape[0] = static_cast<int64_t>(stored.size() / item) / row_elements;
  const Bytes arriving = Arriving(stored, shape, order, item);
  const size_t flush_at = flush_midway ? stored.size() / 2 : stored.size() + 1;
  auto store = std::make_shared<MemoryStore>();
  StreamInto(store, "a", options, order, arriving, feed, seed, threads, flush_at);
  StreamInto(store, "s", options, {}, stored, feed, seed, threads, flush_at);
  auto arrived_keys = store->List("a/");
  auto stored_keys = store->List("s/");
  ASSERT_TRUE(arrived_keys.ok() && stored_keys.ok());
  ASSERT_EQ(arrived_keys->size(), stored_keys->size());
  for (size_t i = 0; i < stored_keys->size(); ++i) {
    ASSERT_EQ((*arrived_keys)[i].substr(1), (*stored_keys)[i].substr(1));
    ASSERT_EQ(**store->Get((*arrived_keys)[i]), **store->Get((*stored_keys)[i])) << (*arrived_keys)[i];
  }
  auto reopened = zarr::ZarrArray::Open(store, "a");
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  Bytes out(stored.size());
  ASSERT_TRUE((*reopened)->Read(Hyperslab::All(shape), out.data()).ok());
  EXPECT_EQ(out, stored);
}

// A random permutation of 0..rank-1 that keeps 0 first and is not the identity (rank > 2: any).
std::vector<int64_t> RandomOrder(std::mt19937& rng, int rank) {
  std::vector<int64_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  do {
    std::shuffle(order.begin() + 1, order.end(), rng);
  } while (rank > 2 && std::is_sorted(order.begin(), order.end()));
  return order;
}

class ArrivalOrderRandomTest : public ::testing::TestWithParam<int> {};

TEST_P(ArrivalOrderRandomTest, StoresWhatTheTransposedDataStores) {
  std::mt19937 rng(900 + GetParam());
  zarr::ArrayOptions o;
  const int rank = 2 + static_cast<int>(rng() % 4);
  o.dtype = std::vector<DataType>{DataType::kUInt8, DataType::kUInt16, DataType::kFloat32, DataType::kInt64,
                                  DataType::kComplex128}[rng() % 5];
  for (int d = 0; d < rank; ++d) {
    o.shape.push_back(1 + rng() % (rank > 3 ? 6 : 13));
    o.chunk_shape.push_back(1 + rng() % 4);
  }
  if (rng() % 2) for (int d = 0; d < rank; ++d) o.chunks_per_shard.push_back(1 + rng() % 3);
  o.codec = std::vector<std::string>{"none", "zstd", "blosc-lz4"}[rng() % 3];
  o.fill_value = o.dtype == DataType::kComplex128 ? nlohmann::json(nullptr) : nlohmann::json(rng() % 2);
  const int64_t rows = o.shape[0];
  if (rng() % 2) o.shape[0] = 0;  // unbounded
  Bytes stored(static_cast<size_t>(rows * index::Product(rank - 1, o.shape.data() + 1)) * ItemSize(o.dtype));
  for (auto& b : stored) b = rng() % 3 == 0 ? 0 : static_cast<uint8_t>(rng());
  const std::vector<int64_t> order = RandomOrder(rng, rank);
  const Feed feed = static_cast<Feed>(rng() % 4);
  SCOPED_TRACE("rank " + std::to_string(rank) + " codec " + o.codec + " feed " + std::to_string(static_cast<int>(feed)) +
               " sharded " + std::to_string(!o.chunks_per_shard.empty()));
  ExpectSameAsStoredOrder(o, stored, order, feed, rng(), 1 + static_cast<int>(rng() % 3), rng() % 3 == 0);
}

INSTANTIATE_TEST_SUITE_P(Random, ArrivalOrderRandomTest, ::testing::Range(0, 120));

// Spans of several MiB while the encoder is idle are scattered by several threads: with the last
// dimension kept (contiguous pieces) and moved (element-wise pieces).
TEST(ArrivalOrderTest, LargeAppendsScatteredInParallel) {
  std::mt19937 rng(3);
  zarr::ArrayOptions o;
  o.dtype = DataType::kUInt16;
  o.shape = {2, 5, 1000, 900};
  o.chunk_shape = {1, 2, 128, 100};
  o.chunks_per_shard = {1, 3, 2, 9};
  o.codec = "none";
  Bytes stored(static_cast<size_t>(2 * 5 * 1000 * 900 * 2));
  for (auto& b : stored) b = static_cast<uint8_t>(rng());
  for (const std::vector<int64_t>& order : {std::vector<int64_t>{0, 2, 1, 3}, std::vector<int64_t>{0, 3, 1, 2}}) {
    ExpectSameAsStoredOrder(o, stored, order, Feed::kOneCall, 1, 4, false);
  }
  o.codec = "zstd";  // whole epochs gathered from the caller's rows by each encoding thread
  ExpectSameAsStoredOrder(o, stored, {0, 3, 2, 1}, Feed::kWholeEpochs, 1, 4, false);
}

TEST(ArrivalOrderTest, SetBeforeTheFirstAppendOnly) {
  zarr::ArrayOptions o;
  o.dtype = DataType::kUInt8;
  o.shape = {0, 4, 6};
  o.chunk_shape = {2, 2, 3};
  o.codec = "none";
  auto store = std::make_shared<MemoryStore>();
  auto zs = zarr::OpenZarrStream(store, "a", o, StreamWriterOptions{});
  ASSERT_TRUE(zs.ok());
  EXPECT_ERROR(zs->writer->SetArrivalOrder(std::vector<int64_t>{0, 2}), ErrorKind::kInvalidArgument,
               "arrival_order", "2 entries for a rank-3 array");
  const uint8_t byte = 1;
  ASSERT_TRUE(zs->writer->Append(ByteView(&byte, 1)).ok());
  EXPECT_ERROR(zs->writer->SetArrivalOrder(std::vector<int64_t>{0, 2, 1}), ErrorKind::kFailedPrecondition,
               "before the first Append");
  zs->writer->Abort();
}

// Through the façade: CreateStream takes spec.arrival_order for every format; the CUDA backend
// refuses it, naming the field.
TEST(ArrivalOrderTest, CreateStreamTakesTheSpecsOrder) {
  ArraySpec spec;
  spec.dtype = DataType::kUInt16;
  spec.shape = {3, 4, 5};
  spec.chunk_shape = {2, 3, 2};
  spec.arrival_order = {0, 2, 1};
  StreamOptions cuda;
  cuda.format = Format::kZarr3;
  cuda.discard = true;
  cuda.backend = Backend::kCuda;
  const std::string dir = ::testing::TempDir();
  EXPECT_ERROR(CreateStream(dir + "/arrival_cuda.zarr", spec, cuda), ErrorKind::kUnsupported, "arrival_order", "cuda");
  StreamOptions plan;
  plan.format = Format::kZarr3;
  plan.discard = true;
  Result<std::string> text = PlanStream(dir + "/arrival_plan.zarr", spec, plan);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("arrival order:          0,2,1"), std::string::npos) << *text;
}

// What takes data in stored order refuses an arrival order rather than ignore it: an empty array
// for region writes (and the scale-out writers), a conversion.
TEST(ArrivalOrderTest, RegionWritesAndConversionsRefuseIt) {
  ArraySpec spec;
  spec.dtype = DataType::kUInt8;
  spec.shape = {2, 3, 4};
  spec.chunk_shape = {1, 3, 2};
  spec.arrival_order = {0, 2, 1};
  const std::string dir = ::testing::TempDir();
  EXPECT_ERROR(CreateArray(dir + "/arrival_regions.zarr", spec), ErrorKind::kUnsupported, "arrival_order",
               "stored order");
  ArraySpec plain = spec;
  plain.arrival_order.clear();
  StreamOptions overwrite;
  overwrite.mode = Mode::kOverwrite;
  Result<std::unique_ptr<Array>> source = CreateArray(dir + "/arrival_source.zarr", plain, overwrite);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_ERROR(Convert(**source, dir + "/arrival_copy.zarr", spec), ErrorKind::kUnsupported, "arrival_order",
               "stored order");
}

}  // namespace
}  // namespace tessera::stream
