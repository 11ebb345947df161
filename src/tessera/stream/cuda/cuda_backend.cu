// The CUDA backend of the streaming writer. Per epoch (Submit):
//
//   host epoch buffer (pinned with cudaHostRegister; else two pinned staging slices) ──H2D──>
//   compute stream: scatter kernel (input element -> its tile and place in the batch's tile
//   pool, fill value for padding) + all-fill test per tile.
//
// Per batch of K epochs (compressed codecs batch epochs until one nvcomp call has ~1024 tiles;
// codec none: K = 1), when the batch is full or the writer collects early:
//
//   compression stream: nvcomp batched zstd / gzip over the K * M tiles (codec none: the tile
//   pool is the output) ──event──> compute stream: aggregate by shard (permute sizes, CUB
//   exclusive scan, gather into one compacted epoch-major, shard-major buffer) ──event──> D2H
//   stream: offsets and flags, then the used bytes ──> host: EncodedTile per tile (Collect),
//   copied out on the writer's threads, epochs in submission order.
//
// Every index computation comes from tessera/index/ (chunk_grid.h, index.h) compiled for the
// device (the same StreamLayout tables the CPU backend uses). TESSERA_CUDA_TIMING=1 prints
// per-stage times.
#include <cuda_runtime.h>
#include <nvcomp/gzip.h>
#include <nvcomp/zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cub/device/device_scan.cuh>
#include <deque>
#include <sstream>
#include <vector>

#include "tessera/codec/codec.h"
#include "tessera/core/parallel.h"
#include "tessera/index/chunk_grid.h"
#include "tessera/index/index.h"
#include "tessera/stream/cuda/cuda_util.cuh"
#include "tessera/stream/cuda/stream_kernels.cuh"
#include "tessera/stream/epoch_encoder.h"

namespace tessera::stream {
namespace {

using namespace cuda_internal;

constexpr size_t kStagingSliceBytes = size_t{8} << 20;  // one pinned H2D slice

enum class GpuCodec { kNone, kZstd, kGzip };

Result<GpuCodec> GpuCodecOf(const CodecChain& chain, DataType dtype) {
  // bytes in this host's byte order (the tile pool is the array as it is), then one compressor.
  if (!chain.array_to_array.empty() || !chain.BytesStepIsCopy(dtype))
    return Unsupported("backend: cuda supports the chunk codecs bytes (little endian) [+ zstd | gzip] only")
        .WithField("backend");
  if (chain.bytes_to_bytes.empty()) return GpuCodec::kNone;
  if (chain.bytes_to_bytes.size() == 1) {
    switch (chain.bytes_to_bytes[0]->id()) {
      case CodecId::kZstd: return GpuCodec::kZstd;
      case CodecId::kGzip: return GpuCodec::kGzip;
      default: break;
    }
  }
  return Unsupported("backend: cuda: nvcomp has no encoder for this codec chain (use none, zstd or gzip; blosc "
                     "framing is CPU-only)")
      .WithField("backend");
}

size_t RoundUp(size_t v, size_t a) { return index::CeilDiv(v, a) * a; }

// Compressed codecs batch epochs until one nvcomp call has about this many tiles (nvcomp
// compresses each tile on its own, so a few dozen large tiles leave most of the GPU idle), with
// a batch's tile pool at most kMaxBatchPoolBytes. TESSERA_CUDA_BATCH_EPOCHS overrides.
constexpr int64_t kTargetBatchTiles = 1024;
constexpr int64_t kMaxBatchPoolBytes = int64_t{512} << 20;

// One batch's device and pinned buffers. Two of them: while one batch is compressed, the next
// fills the other.
struct BatchPool {
  DeviceArray<uint8_t> d_tiles, d_encoded, d_present;
  DeviceArray<size_t> d_sizes, d_permuted, d_offsets;
  DeviceArray<const void*> d_in_ptrs;
  DeviceArray<void*> d_out_ptrs;
  DeviceArray<nvcompStatus_t> d_statuses;
  PinnedArray<uint8_t> h_present;
  PinnedArray<size_t> h_offsets;
  PinnedArray<nvcompStatus_t> h_statuses;
  EventHandle meta_done;  // compressed, sizes scanned, offsets / flags / statuses on the host
  cudaEvent_t t_start = nullptr, t_compressed = nullptr, t_meta = nullptr;  // TESSERA_CUDA_TIMING
  int64_t submitted = 0, collected = 0;
  bool launched = false, downloaded = false;
};

class CudaEpochEncoder final : public EpochEncoder {
 public:
  static Result<std::unique_ptr<CudaEpochEncoder>> Create(const StreamLayout& layout, GpuCodec codec,
                                                          const FillValue& fill, int threads) {
    auto e = std::unique_ptr<CudaEpochEncoder>(new CudaEpochEncoder(layout, codec, threads));
    TESSERA_RETURN_IF_ERROR(e->Init(fill));
    return Result<std::unique_ptr<CudaEpochEncoder>>(std::move(e));
  }

  ~CudaEpochEncoder() override;
  Status Submit(const uint8_t* epoch, int64_t rows) override;
  bool Ready() const override;
  Status Collect(std::span<EncodedTile> tiles) override;
  std::string DescribeMemoryPlan() const override;
  void PinInputBuffer(uint8_t* data, size_t bytes) override;

 private:
  using Clock = std::chrono::steady_clock;
  CudaEpochEncoder(const StreamLayout& layout, GpuCodec codec, int threads)
      : L_(layout), codec_(codec), threads_(threads) {}
  Status Init(const FillValue& fill);
  Status InitPool(BatchPool& pool);
  Status Upload(const uint8_t* epoch, size_t bytes);
  Status LaunchScatter(BatchPool& pool, const ScatterParams& p);
  Status Launch(BatchPool& pool);    // enqueues compression, size scan and the metadata download
  Status Download(BatchPool& pool);  // waits for the metadata, gathers and downloads the bytes
  Status GrowDownloadBuffer(size_t bytes);
  bool Pinned(const uint8_t* p, size_t bytes) const;
  static double MsSince(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  }

  const StreamLayout L_;
  const GpuCodec codec_;
  const int threads_;
  std::vector<std::pair<uint8_t*, size_t>> pinned_;  // the writer's epoch buffers, registered for DMA
  ScatterParams params_;
  int64_t padded_elements_ = 0;  // elements of the padded epoch (M tiles)
  int64_t tiles_ = 0;            // M: tiles per epoch
  int64_t positions_ = 0;        // P: shard-major positions per epoch (edge shards padded)
  int64_t batch_ = 1;            // K: epochs per nvcomp batch
  size_t tile_stride_ = 0;       // bytes between tiles in the pool
  size_t encoded_stride_ = 0;    // bytes between encoded tiles (worst case, aligned)
  size_t nvcomp_temp_bytes_ = 0;
  size_t scan_temp_bytes_ = 0;
  size_t h_aggregated_bytes_ = 0;  // capacity of h_aggregated_ (grows with what a batch needs)

  BatchPool pools_[2];
  std::deque<int> batches_;  // pools holding batches not fully collected, oldest first

  // TESSERA_CUDA_TIMING=1: per-stage GPU times (events) and host times, printed on destruction.
  bool timing_ = false;
  cudaEvent_t t_upload_ = nullptr, t_uploaded_ = nullptr, t_scattered_ = nullptr, t_gather_ = nullptr,
              t_downloaded_ = nullptr;
  double h2d_ms_ = 0, scatter_ms_ = 0, compress_ms_ = 0, scan_ms_ = 0, d2h_ms_ = 0;
  double submit_ms_ = 0, collect_wait_ms_ = 0, host_copy_ms_ = 0;
  int64_t timed_epochs_ = 0, timed_batches_ = 0, timed_in_ = 0, timed_out_ = 0;

  StreamHandle h2d_, compute_, compress_, d2h_;
  EventHandle uploaded_, scattered_, slice_done_[2];
  DeviceArray<uint8_t> d_epoch_, d_aggregated_, d_nvcomp_temp_, d_scan_temp_;
  DeviceArray<size_t> d_in_sizes_;
  PinnedArray<uint8_t> h_staging_[2], h_aggregated_;
};

Status CudaEpochEncoder::Init(const FillValue& fill) {
  if (L_.item_bytes > kMaxItemBytes || static_cast<int64_t>(fill.bytes.size()) != L_.item_bytes ||
      (L_.item_bytes & (L_.item_bytes - 1)) != 0)
    return InvalidArgument("CUDA backend: element size not supported");
  const char* timing = std::getenv("TESSERA_CUDA_TIMING");
  timing_ = timing && *timing && std::string(timing) != "0";
  if (timing_) {
    for (cudaEvent_t* e : {&t_upload_, &t_uploaded_, &t_scattered_, &t_gather_, &t_downloaded_})
      TESSERA_CUDA_TRY(cudaEventCreate(e), "creating a timing event");
    for (BatchPool& pool : pools_)
      for (cudaEvent_t* e : {&pool.t_start, &pool.t_compressed, &pool.t_meta})
        TESSERA_CUDA_TRY(cudaEventCreate(e), "creating a timing event");
  }
  tiles_ = L_.tiles_per_epoch;
  positions_ = L_.shards_per_epoch * L_.tiles_per_shard_inner;
  // Alignment nvcomp asks of its input and output buffers (8 is enough for every format here).
  size_t in_align = 8, out_align = 8;
  size_t max_encoded = static_cast<size_t>(L_.tile_bytes);
  const nvcompBatchedZstdCompressOpts_t zstd_opts = nvcompBatchedZstdCompressDefaultOpts;
  const nvcompBatchedGzipCompressOpts_t gzip_opts = nvcompBatchedGzipCompressDefaultOpts;
  if (codec_ != GpuCodec::kNone) {
    nvcompAlignmentRequirements_t a;
    if (codec_ == GpuCodec::kZstd) {
      TESSERA_NVCOMP_TRY(nvcompBatchedZstdCompressGetRequiredAlignments(zstd_opts, &a), "zstd alignments");
      TESSERA_NVCOMP_TRY(nvcompBatchedZstdCompressGetMaxOutputChunkSize(L_.tile_bytes, zstd_opts, &max_encoded),
                         "zstd max output size");
    } else {
      TESSERA_NVCOMP_TRY(nvcompBatchedGzipCompressGetRequiredAlignments(gzip_opts, &a), "gzip alignments");
      TESSERA_NVCOMP_TRY(nvcompBatchedGzipCompressGetMaxOutputChunkSize(L_.tile_bytes, gzip_opts, &max_encoded),
                         "gzip max output size");
    }
    in_align = std::max(in_align, a.input);
    out_align = std::max(out_align, a.output);
  }
  tile_stride_ = RoundUp(static_cast<size_t>(L_.tile_bytes), in_align);
  encoded_stride_ = codec_ == GpuCodec::kNone ? tile_stride_ : RoundUp(max_encoded, out_align);

  // Epochs per batch.
  if (codec_ != GpuCodec::kNone) {
    const int64_t pool = tiles_ * static_cast<int64_t>(tile_stride_);
    batch_ = std::clamp<int64_t>(index::CeilDiv(kTargetBatchTiles, tiles_), 1,
                                 std::max<int64_t>(1, kMaxBatchPoolBytes / std::max<int64_t>(pool, 1)));
  }
  if (const char* k = std::getenv("TESSERA_CUDA_BATCH_EPOCHS"); k && std::atoi(k) > 0) batch_ = std::atoi(k);
  if (L_.epoch_count > 0) batch_ = std::min(batch_, L_.epoch_count);

  // Scatter parameters from the plan: the epoch (epoch_rows = one tile row) cut into tiles.
  params_.rank = L_.rank;
  int64_t epoch_shape[kMaxRank];
  for (int d = 0; d < L_.rank; ++d) epoch_shape[d] = d == 0 ? L_.epoch_rows : L_.shape[d];
  params_.tile_grid = index::ChunkGrid(L_.rank, epoch_shape, L_.tile_shape);
  for (int d = 0; d < L_.rank; ++d) {
    params_.padded_shape[d] = params_.tile_grid.PaddedExtent(d);
    params_.limit[d] = epoch_shape[d];
  }
  index::RowMajorStrides(L_.rank, epoch_shape, params_.src_strides);
  index::RowMajorStrides(L_.rank, params_.tile_grid.chunk_count, params_.tile_index_strides);
  index::RowMajorStrides(L_.rank, L_.tile_shape, params_.within_strides);
  params_.tile_stride_bytes = static_cast<int64_t>(tile_stride_);
  std::memcpy(params_.fill, fill.bytes.data(), fill.bytes.size());
  padded_elements_ = index::Product(L_.rank, params_.padded_shape);

  TESSERA_RETURN_IF_ERROR(MakeStream(&h2d_));
  TESSERA_RETURN_IF_ERROR(MakeStream(&compute_));
  TESSERA_RETURN_IF_ERROR(MakeStream(&compress_));
  TESSERA_RETURN_IF_ERROR(MakeStream(&d2h_));
  for (EventHandle* e : {&uploaded_, &scattered_, &slice_done_[0], &slice_done_[1]})
    TESSERA_RETURN_IF_ERROR(MakeEvent(e));

  const size_t N = static_cast<size_t>(batch_ * tiles_), NP = static_cast<size_t>(batch_ * positions_);
  TESSERA_RETURN_IF_ERROR(AllocDevice(static_cast<size_t>(L_.epoch_bytes), &d_epoch_, "the epoch buffer"));
  TESSERA_RETURN_IF_ERROR(AllocDevice(N * encoded_stride_, &d_aggregated_, "the aggregated shard buffer"));
  TESSERA_RETURN_IF_ERROR(AllocDevice(N, &d_in_sizes_, "tile sizes"));
  {
    std::vector<size_t> in_sizes(N, static_cast<size_t>(L_.tile_bytes));
    TESSERA_CUDA_TRY(cudaMemcpy(d_in_sizes_.get(), in_sizes.data(), N * sizeof(size_t), cudaMemcpyHostToDevice),
                     "upload");
  }
  for (BatchPool& pool : pools_) TESSERA_RETURN_IF_ERROR(InitPool(pool));
  size_t scan_bytes = 0;
  TESSERA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, pools_[0].d_permuted.get(),
                                                 pools_[0].d_offsets.get(), static_cast<int>(NP + 1)),
                   "sizing the scan");
  scan_temp_bytes_ = scan_bytes;
  TESSERA_RETURN_IF_ERROR(AllocDevice(scan_temp_bytes_, &d_scan_temp_, "scan workspace"));
  for (auto& s : h_staging_) TESSERA_RETURN_IF_ERROR(AllocPinned(kStagingSliceBytes, &s, "staging"));
  // The pinned download buffer: exactly a batch for codec none, a quarter (zstd) or half (gzip)
  // of the input for compressed codecs (it grows when a batch needs more).
  TESSERA_RETURN_IF_ERROR(GrowDownloadBuffer(codec_ == GpuCodec::kNone   ? N * encoded_stride_
                                             : codec_ == GpuCodec::kZstd ? N * tile_stride_ / 4 + (size_t{1} << 20)
                                                                         : N * tile_stride_ / 2 + (size_t{1} << 20)));
  if (codec_ != GpuCodec::kNone) {
    const size_t total = N * static_cast<size_t>(L_.tile_bytes);
    const BatchPool& pool = pools_[0];
    if (codec_ == GpuCodec::kZstd) {
      TESSERA_NVCOMP_TRY(nvcompBatchedZstdCompressGetTempSizeSync(pool.d_in_ptrs.get(), d_in_sizes_.get(), N,
                                                                  L_.tile_bytes, zstd_opts, &nvcomp_temp_bytes_,
                                                                  total, compress_.get()),
                         "zstd temp size");
    } else {
      TESSERA_NVCOMP_TRY(nvcompBatchedGzipCompressGetTempSizeSync(pool.d_in_ptrs.get(), d_in_sizes_.get(), N,
                                                                  L_.tile_bytes, gzip_opts, &nvcomp_temp_bytes_,
                                                                  total, compress_.get()),
                         "gzip temp size");
    }
    TESSERA_RETURN_IF_ERROR(AllocDevice(nvcomp_temp_bytes_, &d_nvcomp_temp_, "nvcomp workspace"));
  }
  TESSERA_CUDA_TRY(cudaDeviceSynchronize(), "initialising");
  return Status::Ok();
}

Status CudaEpochEncoder::InitPool(BatchPool& pool) {
  const size_t N = static_cast<size_t>(batch_ * tiles_), NP = static_cast<size_t>(batch_ * positions_);
  TESSERA_RETURN_IF_ERROR(MakeEvent(&pool.meta_done));
  TESSERA_RETURN_IF_ERROR(AllocDevice(N * tile_stride_, &pool.d_tiles, "the tile pool"));
  TESSERA_RETURN_IF_ERROR(AllocDevice(N, &pool.d_present, "tile flags"));
  TESSERA_RETURN_IF_ERROR(AllocDevice(N, &pool.d_sizes, "tile sizes"));
  TESSERA_RETURN_IF_ERROR(AllocDevice(NP + 1, &pool.d_permuted, "permuted sizes"));
  TESSERA_RETURN_IF_ERROR(AllocDevice(NP + 1, &pool.d_offsets, "shard offsets"));
  TESSERA_RETURN_IF_ERROR(AllocPinned(NP + 1, &pool.h_offsets, "offsets"));
  TESSERA_RETURN_IF_ERROR(AllocPinned(N, &pool.h_present, "tile flags"));
  if (codec_ == GpuCodec::kNone) {
    FillSizesKernel<<<static_cast<int>(index::CeilDiv(N, size_t{kThreads})), kThreads, 0, compute_.get()>>>(
        pool.d_sizes.get(), static_cast<int64_t>(N), static_cast<size_t>(L_.tile_bytes));
    TESSERA_CUDA_TRY(cudaGetLastError(), "launching the size fill");
    return Status::Ok();
  }
  // nvcomp's batch description: fixed for the life of the encoder.
  TESSERA_RETURN_IF_ERROR(AllocDevice(N * encoded_stride_, &pool.d_encoded, "the compressed tile pool"));
  std::vector<const void*> in(N);
  std::vector<void*> out(N);
  for (size_t i = 0; i < N; ++i) {
    in[i] = pool.d_tiles.get() + i * tile_stride_;
    out[i] = pool.d_encoded.get() + i * encoded_stride_;
  }
  TESSERA_RETURN_IF_ERROR(AllocDevice(N, &pool.d_in_ptrs, "nvcomp input pointers"));
  TESSERA_RETURN_IF_ERROR(AllocDevice(N, &pool.d_out_ptrs, "nvcomp output pointers"));
  TESSERA_RETURN_IF_ERROR(AllocDevice(N, &pool.d_statuses, "nvcomp statuses"));
  TESSERA_RETURN_IF_ERROR(AllocPinned(N, &pool.h_statuses, "nvcomp statuses"));
  TESSERA_CUDA_TRY(cudaMemcpy(pool.d_in_ptrs.get(), in.data(), N * sizeof(void*), cudaMemcpyHostToDevice), "upload");
  TESSERA_CUDA_TRY(cudaMemcpy(pool.d_out_ptrs.get(), out.data(), N * sizeof(void*), cudaMemcpyHostToDevice), "upload");
  return Status::Ok();
}

Status CudaEpochEncoder::GrowDownloadBuffer(size_t bytes) {
  const size_t worst = static_cast<size_t>(batch_ * tiles_) * encoded_stride_;
  const size_t want = std::min(worst, std::max(bytes, h_aggregated_bytes_ + h_aggregated_bytes_ / 2));
  h_aggregated_.reset();
  h_aggregated_bytes_ = 0;
  TESSERA_RETURN_IF_ERROR(AllocPinned(want, &h_aggregated_, "download buffer"));
  h_aggregated_bytes_ = want;
  return Status::Ok();
}

CudaEpochEncoder::~CudaEpochEncoder() {
  for (cudaStream_t st : {h2d_.get(), compute_.get(), compress_.get(), d2h_.get()})
    if (st) cudaStreamSynchronize(st);
  for (const auto& [p, n] : pinned_) cudaHostUnregister(p);
  if (timing_ && timed_epochs_ > 0) {
    const auto gbps = [](double bytes, double ms) { return ms > 0 ? bytes / 1e6 / ms : 0.0; };
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(1);
    const double in = static_cast<double>(timed_in_), out = static_cast<double>(timed_out_);
    o << "cuda timing: " << timed_epochs_ << " epochs in " << timed_batches_ << " batches (" << batch_ << " epochs, "
      << batch_ * tiles_ << " tiles per batch), " << in / 1e9 << " GB in, " << out / 1e9 << " GB out, "
      << (pinned_.empty() ? "staged" : "direct") << " upload\n"
      << "  GPU:  H2D " << h2d_ms_ << " ms (" << gbps(in, h2d_ms_) << " GB/s), scatter " << scatter_ms_ << " ms ("
      << gbps(in, scatter_ms_) << " GB/s), compress " << compress_ms_ << " ms (" << gbps(in, compress_ms_)
      << " GB/s), size scan " << scan_ms_ << " ms, gather + D2H " << d2h_ms_ << " ms (" << gbps(out, d2h_ms_)
      << " GB/s)\n"
      << "  host: in Submit " << submit_ms_ << " ms, waiting in Collect " << collect_wait_ms_ << " ms, copy-out "
      << host_copy_ms_ << " ms (" << gbps(out, host_copy_ms_) << " GB/s); encoder total "
      << submit_ms_ + collect_wait_ms_ + host_copy_ms_ << " ms ("
      << gbps(in, submit_ms_ + collect_wait_ms_ + host_copy_ms_) << " GB/s of input)\n";
    std::fputs(o.str().c_str(), stderr);
  }
  for (cudaEvent_t e : {t_upload_, t_uploaded_, t_scattered_, t_gather_, t_downloaded_})
    if (e) cudaEventDestroy(e);
  for (BatchPool& pool : pools_)
    for (cudaEvent_t e : {pool.t_start, pool.t_compressed, pool.t_meta})
      if (e) cudaEventDestroy(e);
}

void CudaEpochEncoder::PinInputBuffer(uint8_t* data, size_t bytes) {
  if (!data || bytes == 0) return;
  if (cudaHostRegister(data, bytes, cudaHostRegisterDefault) == cudaSuccess) {
    pinned_.emplace_back(data, bytes);
  } else {
    (void)cudaGetLastError();  // not fatal: uploads go through the pinned staging slices instead
  }
}

bool CudaEpochEncoder::Pinned(const uint8_t* p, size_t bytes) const {
  for (const auto& [b, n] : pinned_)
    if (p >= b && p + bytes <= b + n) return true;
  return false;
}

// H2D: straight from the writer's epoch buffer when it is pinned, else through two pinned
// slices (the host copies slice k+1 while the DMA engine moves slice k).
Status CudaEpochEncoder::Upload(const uint8_t* epoch, size_t bytes) {
  if (Pinned(epoch, bytes)) {
    TESSERA_CUDA_TRY(cudaMemcpyAsync(d_epoch_.get(), epoch, bytes, cudaMemcpyHostToDevice, h2d_.get()),
                     "uploading the epoch");
  } else {
    for (size_t off = 0, k = 0; off < bytes; off += kStagingSliceBytes, ++k) {
      const size_t n = std::min(kStagingSliceBytes, bytes - off);
      const int b = static_cast<int>(k % 2);
      if (k >= 2) TESSERA_CUDA_TRY(cudaEventSynchronize(slice_done_[b].get()), "waiting for an upload slice");
      std::memcpy(h_staging_[b].get(), epoch + off, n);
      TESSERA_CUDA_TRY(
          cudaMemcpyAsync(d_epoch_.get() + off, h_staging_[b].get(), n, cudaMemcpyHostToDevice, h2d_.get()),
          "uploading the epoch");
      TESSERA_CUDA_TRY(cudaEventRecord(slice_done_[b].get(), h2d_.get()), "recording an upload event");
    }
  }
  TESSERA_CUDA_TRY(cudaEventRecord(uploaded_.get(), h2d_.get()), "recording the upload event");
  return Status::Ok();
}

Status CudaEpochEncoder::LaunchScatter(BatchPool& pool, const ScatterParams& p) {
  const int blocks = static_cast<int>(std::min<int64_t>(index::CeilDiv(padded_elements_, int64_t{kThreads}), 65535 * 4));
  const unsigned M = static_cast<unsigned>(tiles_);
  const int64_t stride = static_cast<int64_t>(tile_stride_);
  cudaStream_t s = compute_.get();
  const bool narrow = padded_elements_ < (int64_t{1} << 31);
  uint8_t* first = pool.d_tiles.get() + p.first_tile * stride;
  auto launch = [&](auto word) {
    using T = decltype(word);
    const T* in = reinterpret_cast<const T*>(d_epoch_.get());
    if (narrow) {
      ScatterKernel<T, uint32_t><<<blocks, kThreads, 0, s>>>(in, pool.d_tiles.get(), p,
                                                             static_cast<uint32_t>(padded_elements_));
    } else {
      ScatterKernel<T, int64_t><<<blocks, kThreads, 0, s>>>(in, pool.d_tiles.get(), p, padded_elements_);
    }
    PresentKernel<T><<<M, kThreads, 0, s>>>(first, L_.tile_elements, stride, p, pool.d_present.get() + p.first_tile);
  };
  switch (L_.item_bytes) {
    case 1: launch(uint8_t{}); break;
    case 2: launch(uint16_t{}); break;
    case 4: launch(uint32_t{}); break;
    case 8: launch(uint64_t{}); break;
    default: launch(Item16{}); break;
  }
  TESSERA_CUDA_TRY(cudaGetLastError(), "launching the scatter kernels");
  return Status::Ok();
}

bool CudaEpochEncoder::Ready() const {
  if (batches_.empty()) return false;
  const BatchPool& front = pools_[batches_.front()];
  if (!front.launched) return false;
  if (front.downloaded) return front.collected < front.submitted;
  // Both pools hold launched batches: the next Submit needs the oldest collected first.
  if (batches_.size() == 2 && pools_[batches_.back()].launched) return true;
  return cudaEventQuery(front.meta_done.get()) == cudaSuccess;
}

Status CudaEpochEncoder::Submit(const uint8_t* epoch, int64_t rows) {
  const Clock::time_point start = Clock::now();
  // The open batch (the newest, not launched yet), or a new one in the free pool.
  int p;
  if (!batches_.empty() && !pools_[batches_.back()].launched) {
    p = batches_.back();
  } else {
    if (batches_.size() == 2)
      return FailedPrecondition("CUDA backend: an epoch was submitted while both batches await collection");
    p = batches_.empty() ? 0 : 1 - batches_.back();
    BatchPool& fresh = pools_[p];
    fresh.submitted = fresh.collected = 0;
    fresh.launched = fresh.downloaded = false;
    batches_.push_back(p);
  }
  BatchPool& pool = pools_[p];
  const size_t in_bytes = static_cast<size_t>(rows * L_.row_elements * L_.item_bytes);
  // d_epoch_ is overwritten only after the previous scatter has read it.
  TESSERA_CUDA_TRY(cudaStreamWaitEvent(h2d_.get(), scattered_.get(), 0), "ordering streams");
  if (timing_) cudaEventRecord(t_upload_, h2d_.get());
  TESSERA_RETURN_IF_ERROR(Upload(epoch, in_bytes));
  if (timing_) cudaEventRecord(t_uploaded_, h2d_.get());

  // Scatter and presence on the compute stream, after the upload, into batch slot `submitted`.
  ScatterParams sp = params_;
  sp.limit[0] = rows;
  sp.first_tile = pool.submitted * tiles_;
  TESSERA_CUDA_TRY(cudaStreamWaitEvent(compute_.get(), uploaded_.get(), 0), "ordering streams");
  TESSERA_RETURN_IF_ERROR(LaunchScatter(pool, sp));
  TESSERA_CUDA_TRY(cudaEventRecord(scattered_.get(), compute_.get()), "recording the scatter event");
  if (timing_) cudaEventRecord(t_scattered_, compute_.get());
  // The caller refills its buffer once this returns.
  TESSERA_CUDA_TRY(cudaEventSynchronize(uploaded_.get()), "waiting for the upload");
  ++pool.submitted;
  if (timing_) {
    TESSERA_CUDA_TRY(cudaEventSynchronize(t_scattered_), "waiting for the scatter");
    float ms[2];
    TESSERA_CUDA_TRY(cudaEventElapsedTime(&ms[0], t_upload_, t_uploaded_), "reading a timing event");
    TESSERA_CUDA_TRY(cudaEventElapsedTime(&ms[1], t_uploaded_, t_scattered_), "reading a timing event");
    h2d_ms_ += ms[0];
    scatter_ms_ += ms[1];
    ++timed_epochs_;
    timed_in_ += static_cast<int64_t>(in_bytes);
  }
  Status st = pool.submitted == batch_ ? Launch(pool) : Status::Ok();
  if (timing_) submit_ms_ += MsSince(start);
  return st;
}

// Everything up to the metadata download on the compression stream, so the next batch's uploads
// and scatters (h2d and compute streams) overlap it.
Status CudaEpochEncoder::Launch(BatchPool& pool) {
  const size_t N = static_cast<size_t>(pool.submitted * tiles_), NP = static_cast<size_t>(pool.submitted * positions_);
  cudaStream_t s = compress_.get();
  TESSERA_CUDA_TRY(cudaStreamWaitEvent(s, scattered_.get(), 0), "ordering streams");
  if (timing_) cudaEventRecord(pool.t_start, s);
  if (codec_ == GpuCodec::kZstd) {
    TESSERA_NVCOMP_TRY(nvcompBatchedZstdCompressAsync(pool.d_in_ptrs.get(), d_in_sizes_.get(), L_.tile_bytes, N,
                                                      d_nvcomp_temp_.get(), nvcomp_temp_bytes_, pool.d_out_ptrs.get(),
                                                      pool.d_sizes.get(), nvcompBatchedZstdCompressDefaultOpts,
                                                      pool.d_statuses.get(), s),
                       "zstd compression");
  } else if (codec_ == GpuCodec::kGzip) {
    TESSERA_NVCOMP_TRY(nvcompBatchedGzipCompressAsync(pool.d_in_ptrs.get(), d_in_sizes_.get(), L_.tile_bytes, N,
                                                      d_nvcomp_temp_.get(), nvcomp_temp_bytes_, pool.d_out_ptrs.get(),
                                                      pool.d_sizes.get(), nvcompBatchedGzipCompressDefaultOpts,
                                                      pool.d_statuses.get(), s),
                       "gzip compression");
  }
  if (timing_) cudaEventRecord(pool.t_compressed, s);
  // Sizes in shard-major position order and their exclusive scan: the epoch-major, shard-major
  // offsets of every tile in the aggregated buffer.
  TESSERA_CUDA_TRY(cudaMemsetAsync(pool.d_permuted.get(), 0, (NP + 1) * sizeof(size_t), s), "clearing sizes");
  PermuteSizesKernel<<<static_cast<int>(index::CeilDiv(N, size_t{kThreads})), kThreads, 0, s>>>(
      pool.d_sizes.get(), pool.d_present.get(), L_.permutation, tiles_, positions_, static_cast<int64_t>(N),
      pool.d_permuted.get());
  TESSERA_CUDA_TRY(cudaGetLastError(), "launching the size permutation");
  TESSERA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(d_scan_temp_.get(), scan_temp_bytes_, pool.d_permuted.get(),
                                                 pool.d_offsets.get(), static_cast<int>(NP + 1), s),
                   "scanning sizes");
  TESSERA_CUDA_TRY(
      cudaMemcpyAsync(pool.h_offsets.get(), pool.d_offsets.get(), (NP + 1) * sizeof(size_t), cudaMemcpyDeviceToHost, s),
      "downloading offsets");
  TESSERA_CUDA_TRY(cudaMemcpyAsync(pool.h_present.get(), pool.d_present.get(), N, cudaMemcpyDeviceToHost, s),
                   "downloading tile flags");
  if (codec_ != GpuCodec::kNone)
    TESSERA_CUDA_TRY(cudaMemcpyAsync(pool.h_statuses.get(), pool.d_statuses.get(), N * sizeof(nvcompStatus_t),
                                     cudaMemcpyDeviceToHost, s),
                     "downloading nvcomp statuses");
  if (timing_) cudaEventRecord(pool.t_meta, s);
  TESSERA_CUDA_TRY(cudaEventRecord(pool.meta_done.get(), s), "recording the batch event");
  pool.launched = true;
  return Status::Ok();
}

// Waits for the batch's metadata, then gathers its encoded tiles into one compacted buffer and
// downloads the bytes used (d2h stream).
Status CudaEpochEncoder::Download(BatchPool& pool) {
  const size_t N = static_cast<size_t>(pool.submitted * tiles_), NP = static_cast<size_t>(pool.submitted * positions_);
  const size_t M = static_cast<size_t>(tiles_);
  TESSERA_CUDA_TRY(cudaEventSynchronize(pool.meta_done.get()), "waiting for the batch");
  if (codec_ != GpuCodec::kNone) {
    for (size_t i = 0; i < N; ++i)
      if (pool.h_present.get()[i] && pool.h_statuses.get()[i] != nvcompSuccess)
        return Status(ErrorKind::kIo, "CUDA backend: nvcomp failed on tile " + std::to_string(i % M) + " of epoch " +
                                          std::to_string(i / M) + " of the batch with status " +
                                          std::to_string(static_cast<int>(pool.h_statuses.get()[i])));
  }
  const size_t total = pool.h_offsets.get()[NP];
  if (total > h_aggregated_bytes_) TESSERA_RETURN_IF_ERROR(GrowDownloadBuffer(total));
  cudaStream_t s = d2h_.get();
  TESSERA_CUDA_TRY(cudaStreamWaitEvent(s, pool.meta_done.get(), 0), "ordering streams");
  if (timing_) cudaEventRecord(t_gather_, s);
  const uint8_t* encoded = codec_ == GpuCodec::kNone ? pool.d_tiles.get() : pool.d_encoded.get();
  const dim3 gather_grid(static_cast<unsigned>(N),
                         static_cast<unsigned>(std::clamp<size_t>(index::CeilDiv(encoded_stride_, kGatherPiece),
                                                                  1, 65535)));
  GatherKernel<<<gather_grid, kThreads, 0, s>>>(encoded, static_cast<int64_t>(encoded_stride_), pool.d_permuted.get(),
                                                pool.d_offsets.get(), L_.permutation, tiles_, positions_,
                                                d_aggregated_.get());
  TESSERA_CUDA_TRY(cudaGetLastError(), "launching the gather");
  TESSERA_CUDA_TRY(cudaMemcpyAsync(h_aggregated_.get(), d_aggregated_.get(), total, cudaMemcpyDeviceToHost, s),
                   "downloading encoded tiles");
  if (timing_) cudaEventRecord(t_downloaded_, s);
  TESSERA_CUDA_TRY(cudaStreamSynchronize(s), "waiting for the download");
  pool.downloaded = true;
  if (timing_) {
    float ms[3];
    TESSERA_CUDA_TRY(cudaEventElapsedTime(&ms[0], pool.t_start, pool.t_compressed), "reading a timing event");
    TESSERA_CUDA_TRY(cudaEventElapsedTime(&ms[1], pool.t_compressed, pool.t_meta), "reading a timing event");
    TESSERA_CUDA_TRY(cudaEventElapsedTime(&ms[2], t_gather_, t_downloaded_), "reading a timing event");
    compress_ms_ += ms[0];
    scan_ms_ += ms[1];
    d2h_ms_ += ms[2];
    ++timed_batches_;
    timed_out_ += static_cast<int64_t>(total);
  }
  return Status::Ok();
}

Status CudaEpochEncoder::Collect(std::span<EncodedTile> tiles) {
  if (static_cast<int64_t>(tiles.size()) != tiles_) return InvalidArgument("CUDA backend: tile count mismatch");
  if (batches_.empty()) return FailedPrecondition("CUDA backend: nothing to collect");
  const Clock::time_point start = Clock::now();
  const int p = batches_.front();
  BatchPool& pool = pools_[p];
  if (!pool.launched) TESSERA_RETURN_IF_ERROR(Launch(pool));  // a partial batch (flush or end of stream)
  if (!pool.downloaded) TESSERA_RETURN_IF_ERROR(Download(pool));
  // Copy out on the host threads: tile i's bytes from its shard-major position.
  const Clock::time_point copy_start = Clock::now();
  const int64_t e = pool.collected;
  const uint8_t* present = pool.h_present.get() + e * tiles_;
  const size_t* offsets = pool.h_offsets.get() + e * positions_;
  const size_t epoch_bytes = offsets[positions_] - offsets[0];
  const int64_t per_task = std::max<int64_t>(1, static_cast<int64_t>((size_t{4} << 20) /
                                                                     std::max<size_t>(encoded_stride_, 1)));
  const int64_t tasks = index::CeilDiv(tiles_, per_task);
  const int threads = epoch_bytes >= (size_t{16} << 20) ? threads_ : 1;  // small epochs: not worth the threads
  TESSERA_RETURN_IF_ERROR(ParallelFor(tasks, threads, [&](int64_t task, int) -> Status {
    for (int64_t i = task * per_task; i < std::min<int64_t>(tiles_, (task + 1) * per_task); ++i) {
      EncodedTile& t = tiles[i];
      t.present = present[i] != 0;
      if (!t.present) continue;
      const int64_t pos = L_.permutation.Map(i);
      t.bytes.assign(h_aggregated_.get() + offsets[pos], h_aggregated_.get() + offsets[pos + 1]);
    }
    return Status::Ok();
  }));
  if (++pool.collected == pool.submitted) batches_.pop_front();  // its buffers are free
  if (timing_) {
    collect_wait_ms_ += std::chrono::duration<double, std::milli>(copy_start - start).count();
    host_copy_ms_ += MsSince(copy_start);
  }
  return Status::Ok();
}

std::string CudaEpochEncoder::DescribeMemoryPlan() const {
  const auto mib = [](double b) {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(1);
    s << b / (1 << 20) << " MiB";
    return s.str();
  };
  const double N = static_cast<double>(batch_ * tiles_), NP = static_cast<double>(batch_ * positions_ + 1);
  const double pool = N * static_cast<double>(tile_stride_);
  const double compressed = codec_ != GpuCodec::kNone ? N * static_cast<double>(encoded_stride_) : 0.0;
  const double aggregated = N * static_cast<double>(encoded_stride_);
  const double workspaces = static_cast<double>(nvcomp_temp_bytes_ + scan_temp_bytes_);
  const double device = static_cast<double>(L_.epoch_bytes) + 2 * (pool + compressed) + aggregated + workspaces +
                        2 * N * (1 + 2 * sizeof(size_t) + 2 * sizeof(void*)) + 4 * NP * sizeof(size_t);
  const double pinned = 2.0 * kStagingSliceBytes + static_cast<double>(h_aggregated_bytes_) + 2 * (NP * sizeof(size_t) + 5 * N);
  std::ostringstream o;
  o << "GPU plan (" << (codec_ == GpuCodec::kNone ? "none" : codec_ == GpuCodec::kZstd ? "nvcomp zstd" : "nvcomp gzip")
    << "): batches of " << batch_ << " epochs x " << tiles_ << " tiles, two in flight\n"
    << "  device epoch buffer:    " << mib(static_cast<double>(L_.epoch_bytes)) << "\n"
    << "  device tile pools:      2 x " << mib(pool) << "\n"
    << "  device compressed pools: 2 x " << mib(compressed) << "\n"
    << "  device aggregated:      " << mib(aggregated) << "\n"
    << "  device workspaces:      " << mib(workspaces) << "\n"
    << "  device total:           " << mib(device) << "\n"
    << "  pinned host total:      " << mib(pinned) << " (the download buffer grows if a batch needs more)\n";
  return o.str();
}

}  // namespace

bool CudaBackendCompiled() { return true; }

Result<std::unique_ptr<EpochEncoder>> MakeCudaEpochEncoder(const StreamLayout& layout, const CodecChain& tile_codecs,
                                                           const FillValue& fill, int threads) {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0)
    return Unsupported(std::string("backend: cuda: no CUDA device is available (cudaGetDeviceCount: ") +
                       (err != cudaSuccess ? cudaGetErrorString(err) : "no devices") + ")")
        .WithField("backend");
  TESSERA_ASSIGN_OR_RETURN(GpuCodec codec, GpuCodecOf(tile_codecs, layout.dtype));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<CudaEpochEncoder> e, CudaEpochEncoder::Create(layout, codec, fill, threads));
  return std::unique_ptr<EpochEncoder>(std::move(e));
}

}  // namespace tessera::stream
