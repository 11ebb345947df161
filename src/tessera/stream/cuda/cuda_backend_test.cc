// The contract both backends must meet: the same input gives byte-identical shards for codec
// none and identical decoded arrays for compressed codecs. Tests that need a device skip (saying so)
// only where the machine has no GPU (found without the backend) or the build has no CUDA backend;
// with both, a backend that fails to open fails them. The error path runs everywhere else.
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "cpp_support/status_matchers.h"
#include "tessera/index/index.h"
#include "tessera/store/memory_store.h"
#include "tessera/stream/epoch_encoder.h"
#include "tessera/zarr/zarr_stream.h"
#include "tessera/zarr/array.h"

namespace tessera::stream {
namespace {

// These cases drive the writer through the Zarr driver's stream (the simplest whole sink).
using zarr::OpenZarrStream;
using zarr::ZarrSinkAndWriter;

Result<ZarrSinkAndWriter> Open(std::shared_ptr<Store> store, const std::string& path, const zarr::ArrayOptions& o,
                        Backend backend) {
  StreamWriterOptions wo;
  wo.threads = 2;
  wo.backend = backend;
  return OpenZarrStream(std::move(store), path, o, wo);
}

// Whether this machine has an NVIDIA GPU, found without asking the CUDA backend (the driver's
// /proc entries or device nodes): on a GPU machine a backend that fails to open must fail these
// tests, not skip them.
bool NvidiaGpuPresent() {
  std::error_code ec;
  for (const auto& gpu : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    (void)gpu;
    return true;
  }
  return std::filesystem::exists("/dev/nvidia0", ec);
}

// Why the device tests cannot run here (they need a GPU and a build with the CUDA backend), or
// empty when they must run.
std::string NeedsAGpu() {
  if (!NvidiaGpuPresent()) return "needs a GPU: this machine has none (/proc/driver/nvidia/gpus, /dev/nvidia0)";
  if (!CudaBackendCompiled()) return "needs a GPU build: this build has no CUDA backend (no nvcc or nvcomp at configure time)";
  return "";
}

TEST(CudaBackendTest, UnavailableBackendFailsClearly) {
  if (NeedsAGpu().empty()) GTEST_SKIP() << "a GPU and the CUDA backend are here: the failure path does not apply";
  zarr::ArrayOptions o;
  o.dtype = DataType::kUInt8;
  o.shape = {4};
  o.chunk_shape = {2};
  o.codec = "none";
  Result<ZarrSinkAndWriter> zs = Open(std::make_shared<MemoryStore>(), "probe", o, Backend::kCuda);
  ASSERT_FALSE(zs.ok()) << "the CUDA backend opened without a GPU or without being built";
  EXPECT_ERROR(zs, ErrorKind::kUnsupported, "backend: cuda");
}

// `rows_for_flush`: the rows in `data` (an unbounded stream is appended in three parts with flushes).
void StreamAll(const zarr::ArrayOptions& o, const Bytes& data, Backend backend, std::shared_ptr<MemoryStore> store,
               const std::string& path, int64_t rows_for_flush = 1) {
  auto zs = Open(store, path, o, backend);
  ASSERT_TRUE(zs.ok()) << zs.status().ToString();
  if (o.shape[0] == 0) {
    // Unbounded: a flush in the middle of an epoch (stored padded, then completed), a flush at
    // whatever point the rows reach, then the rest.
    const size_t row = data.size() / static_cast<size_t>(rows_for_flush), half = row * (rows_for_flush / 2);
    ASSERT_TRUE(zs->writer->Append(ByteView(data.data(), half)).ok());
    ASSERT_TRUE(zs->writer->Flush().ok());
    ASSERT_TRUE(zs->writer->Append(ByteView(data.data() + half, row)).ok());
    ASSERT_TRUE(zs->writer->Flush().ok());
    ASSERT_TRUE(zs->writer->Append(ByteView(data.data() + half + row, data.size() - half - row)).ok());
  } else {
    ASSERT_TRUE(zs->writer->Append(data).ok());
  }
  Status st = zs->writer->Close();
  ASSERT_TRUE(st.ok()) << st.ToString();
}

class CudaContractTest : public ::testing::TestWithParam<int> {};

TEST_P(CudaContractTest, MatchesTheCpuBackend) {
  if (const std::string why = NeedsAGpu(); !why.empty()) GTEST_SKIP() << why;
  std::mt19937 rng(900 + GetParam());
  const int rank = 1 + static_cast<int>(rng() % 5);
  zarr::ArrayOptions o;
  o.dtype = std::vector<DataType>{DataType::kUInt8, DataType::kUInt16, DataType::kFloat32, DataType::kInt64}[rng() % 4];
  for (int d = 0; d < rank; ++d) {
    o.shape.push_back(1 + rng() % (rank > 3 ? 6 : 40));
    o.chunk_shape.push_back(1 + rng() % 7);
  }
  if (rng() % 4) for (int d = 0; d < rank; ++d) o.chunks_per_shard.push_back(1 + rng() % 3);
  o.codec = std::vector<std::string>{"none", "zstd", "gzip"}[GetParam() % 3];
  o.fill_value = static_cast<int>(rng() % 2);
  const size_t item = ItemSize(o.dtype);
  Bytes data(static_cast<size_t>(index::Product(rank, o.shape.data())) * item);
  for (size_t i = 0; i < data.size(); ++i) data[i] = rng() % 5 == 0 ? 0 : static_cast<uint8_t>(rng() % 7);
  const int64_t rows = o.shape[0];
  if (rng() % 2) o.shape[0] = 0;  // unbounded

  auto store = std::make_shared<MemoryStore>();
  StreamAll(o, data, Backend::kCpu, store, "cpu", rows);
  StreamAll(o, data, Backend::kCuda, store, "gpu", rows);
  auto cpu_keys = store->List("cpu/c");
  auto gpu_keys = store->List("gpu/c");
  ASSERT_TRUE(cpu_keys.ok() && gpu_keys.ok());
  ASSERT_EQ(cpu_keys->size(), gpu_keys->size()) << "the same chunks/shards must be present";
  if (o.codec == "none") {
    for (size_t i = 0; i < cpu_keys->size(); ++i)
      EXPECT_EQ(**store->Get((*cpu_keys)[i]), **store->Get((*gpu_keys)[i])) << (*gpu_keys)[i];
  }
  auto gpu = zarr::ZarrArray::Open(store, "gpu");
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  Bytes out(data.size());
  ASSERT_TRUE((*gpu)->Read(Hyperslab::All((*gpu)->shape()), out.data()).ok());
  EXPECT_EQ(out, data);
}

INSTANTIATE_TEST_SUITE_P(Random, CudaContractTest, ::testing::Range(0, 30));

// Epochs of tens of MiB: the multi-threaded copy-out, gathers of many 64 KiB pieces per tile, a
// partial last epoch, absent tiles (a zero band) and a 16-byte element type.
class CudaLargeContractTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaLargeContractTest, MatchesTheCpuBackend) {
  if (const std::string why = NeedsAGpu(); !why.empty()) GTEST_SKIP() << why;
  for (DataType dtype : {DataType::kUInt16, DataType::kComplex128}) {
    zarr::ArrayOptions o;
    o.dtype = dtype;
    const int64_t side = dtype == DataType::kUInt16 ? 1100 : 300;
    o.shape = {21, side, side};
    o.chunk_shape = {8, 256, 128};
    o.chunks_per_shard = {2, 2, 3};
    o.codec = GetParam();
    const size_t item = ItemSize(o.dtype);
    Bytes data(static_cast<size_t>(index::Product(3, o.shape.data())) * item);
    std::mt19937 rng(7);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((i / 4096 + rng() % 3) & 0xff);
    std::fill(data.begin(), data.begin() + data.size() / 5, 0);  // whole tiles of fill value
    auto store = std::make_shared<MemoryStore>();
    StreamAll(o, data, Backend::kCpu, store, "cpu");
    StreamAll(o, data, Backend::kCuda, store, "gpu");
    auto cpu_keys = store->List("cpu/c");
    auto gpu_keys = store->List("gpu/c");
    ASSERT_TRUE(cpu_keys.ok() && gpu_keys.ok());
    ASSERT_EQ(cpu_keys->size(), gpu_keys->size());
    if (o.codec == "none") {
      for (size_t i = 0; i < cpu_keys->size(); ++i)
        EXPECT_EQ(**store->Get((*cpu_keys)[i]), **store->Get((*gpu_keys)[i])) << (*gpu_keys)[i];
    }
    auto gpu = zarr::ZarrArray::Open(store, "gpu");
    ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
    Bytes out(data.size());
    ASSERT_TRUE((*gpu)->Read(Hyperslab::All((*gpu)->shape()), out.data()).ok());
    EXPECT_TRUE(out == data) << DataTypeName(dtype);
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, CudaLargeContractTest, ::testing::Values("none", "zstd", "gzip"));

}  // namespace
}  // namespace tessera::stream
