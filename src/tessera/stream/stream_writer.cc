#include "tessera/stream/stream_writer.h"

#include <algorithm>
#include <cstring>

#include "tessera/core/dtype.h"
#include "tessera/core/parallel.h"
#include "tessera/index/strided_copy.h"

namespace tessera::stream {
namespace {

// Writes the fill value into every tile of a tile-pool epoch buffer that the array's edge cuts
// (along dimensions 1..rank-1): the input never reaches their padding, so it keeps the fill value
// for the stream's life. A fresh buffer is zero already, which suits a zero fill.
void FillEdgePadding(const StreamLayout& L, const FillValue& fill, PageBuffer* buffer) {
  if (fill.IsZero()) return;
  const index::ChunkGrid tiles = L.TileGrid();
  int64_t t[kMaxRank];
  for (int64_t i = 0; i < L.tiles_per_epoch; ++i) {
    if (L.rank > 1) index::Unravel(L.rank - 1, L.tile_count + 1, i, t + 1);
    bool edge = false;
    for (int d = 1; d < L.rank; ++d) edge |= tiles.IsEdgeChunk(d, t[d]);
    if (edge) FillElements(buffer->data() + i * L.tile_bytes, static_cast<size_t>(L.tile_elements), fill);
  }
}

// The CUDA backend scatters row-major epochs on the device in stored order only.
Status CudaTakesStoredOrder() {
  return Unsupported("arrival_order: the cuda backend takes the input in stored order (use the cpu backend, or "
                     "append the frames transposed to the stored order)")
      .WithField("arrival_order");
}

}  // namespace

Result<std::unique_ptr<StreamWriter>> StreamWriter::Create(const StreamLayout& layout,
                                                           std::shared_ptr<const TileEncoder> tile_encoder,
                                                           FillValue fill, ShardSink* sink,
                                                           const StreamWriterOptions& options) {
  if (!sink) return InvalidArgument("StreamWriter: no sink");
  if (!tile_encoder) return InvalidArgument("StreamWriter: no tile encoder");
  if (static_cast<int64_t>(fill.bytes.size()) != layout.item_bytes)
    return InvalidArgument("StreamWriter: fill value size does not match the element size");
  const int threads = options.pool ? options.pool->size() : options.threads > 0 ? options.threads : DefaultThreadCount();
  // The CPU backend keeps each epoch as a tile pool (tiles contiguous, edges padded); the CUDA
  // backend takes row-major epochs and scatters on the device.
  const bool tile_major = options.backend != Backend::kCuda;
  if (!tile_major && !layout.ArrivesInStoredOrder()) return CudaTakesStoredOrder();
  if (options.input_buffers != 1 && options.input_buffers != 2)
    return InvalidArgument("input_buffers: 1 or 2, not " + std::to_string(options.input_buffers)).WithField("input_buffers");
  // The GPU backend pins and pipelines two buffers.
  const int64_t buffers = tile_major ? options.input_buffers : 2;
  const int64_t buffer_bytes = tile_major ? layout.epoch_buffer_bytes : layout.epoch_bytes;
  TESSERA_ASSIGN_OR_RETURN(PageBuffer buffer0, PageBuffer::Allocate(static_cast<size_t>(buffer_bytes)));
  PageBuffer buffer1;
  if (buffers == 2) {
    TESSERA_ASSIGN_OR_RETURN(buffer1, PageBuffer::Allocate(static_cast<size_t>(buffer_bytes)));
  }
  if (tile_major) {
    FillEdgePadding(layout, fill, &buffer0);
    if (buffers == 2) FillEdgePadding(layout, fill, &buffer1);
  }
  std::unique_ptr<EpochEncoder> encoder;
  if (!tile_major) {
    // The GPU implements the codec chain itself, from the chain encoder's description.
    const CodecChain* chain = tile_encoder->codec_chain();
    if (!chain) return Unsupported("backend: cuda: this format's chunk encoding runs on the CPU backend only").WithField("backend");
    TESSERA_ASSIGN_OR_RETURN(encoder, MakeCudaEpochEncoder(layout, *chain, fill, threads));
  }
  return std::unique_ptr<StreamWriter>(new StreamWriter(layout, std::move(tile_encoder), std::move(fill), sink,
                                                        threads, options.pool, std::move(buffer0),
                                                        std::move(buffer1), std::move(encoder)));
}

StreamWriter::StreamWriter(const StreamLayout& layout, std::shared_ptr<const TileEncoder> tile_encoder,
                           FillValue fill, ShardSink* sink, int threads, std::shared_ptr<WorkerPool> pool,
                           PageBuffer buffer0, PageBuffer buffer1, std::unique_ptr<EpochEncoder> encoder)
    : layout_(layout),
      tile_encoder_(std::move(tile_encoder)),
      gathers_in_place_(tile_encoder_->gathers_in_place()),
      fill_(std::move(fill)),
      sink_(sink),
      threads_(threads),
      pool_(std::move(pool)) {
  encoder_ = std::move(encoder);
  buffers_[0] = std::move(buffer0);
  buffers_[1] = std::move(buffer1);
  if (buffers_[1].size() == 0 && layout_.input_buffers == 2) {
    // One input buffer: the plan's peak loses the other.
    layout_.input_buffers = 1;
    layout_.planned_peak_bytes -= layout_.epoch_buffer_bytes;
  }
  if (encoder_)
    for (auto& b : buffers_) encoder_->PinInputBuffer(b.data(), b.size());
  if (encoder_) epoch_tiles_.resize(static_cast<size_t>(layout_.tiles_per_epoch));
  scratch_tile_.resize(threads_);  // allocated when a partial epoch first needs one
  const StreamLayout& L = layout_;
  tile_row_bytes_ = L.tile_bytes / L.tile_shape[0];
  epoch_shape_[0] = L.epoch_rows;
  for (int d = 1; d < L.rank; ++d) epoch_shape_[d] = L.shape[d];
  // Which tiles the array's edge cuts (along dimensions 1..rank-1): their padding must keep the
  // fill value, so their region of an epoch buffer is never overwritten with an encoding.
  tile_cut_.assign(static_cast<size_t>(L.tiles_per_epoch), 0);
  const index::ChunkGrid tiles = L.TileGrid();
  for (int64_t i = 0; i < L.tiles_per_epoch; ++i) {
    int64_t t[kMaxRank];
    if (L.rank > 1) index::Unravel(L.rank - 1, L.tile_count + 1, i, t + 1);
    for (int d = 1; d < L.rank; ++d) tile_cut_[i] |= tiles.IsEdgeChunk(d, t[d]) ? 1 : 0;
  }
  // Shard-major processing order and the number of tiles each shard of an epoch receives.
  tile_order_.resize(static_cast<size_t>(L.tiles_per_epoch));
  tiles_in_shard_.assign(static_cast<size_t>(L.shards_per_epoch), 0);
  for (int64_t i = 0; i < L.tiles_per_epoch; ++i) {
    tile_order_[i] = i;
    ++tiles_in_shard_[L.ShardOfPosition(L.permutation.Map(i))];
  }
  std::sort(tile_order_.begin(), tile_order_.end(),
            [&L](int64_t a, int64_t b) { return L.permutation.Map(a) < L.permutation.Map(b); });
  shard_slots_.assign(static_cast<size_t>(layout_.shards_per_epoch),
                      std::vector<EncodedTile>(static_cast<size_t>(layout_.tiles_per_shard_total)));
  worker_ = std::thread([this] { WorkerLoop(); });
}

Status StreamWriter::ForEach(int64_t n, const WorkerPool::ItemFn& fn) {
  return pool_ ? pool_->Run(n, fn) : ParallelFor(n, threads_, fn);
}

StreamWriter::~StreamWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  appender_.Drop();
  encoder_.reset();  // it may have pinned buffers_, which are unmapped after this body
}

void StreamWriter::Abort() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.reset();
    stop_ = true;
    if (error_.ok()) error_ = FailedPrecondition("StreamWriter: aborted");
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  appender_.Drop();
  closed_ = true;
}

StreamStats StreamWriter::stats() const {
  std::lock_guard<std::mutex> lock(const_cast<std::mutex&>(mu_));
  return stats_;
}

Status StreamWriter::StickyStatus() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

// Backs the epoch buffers with memory while the worker has nothing else to do (from the first
// input copied into a buffer until the first epoch is complete), so that the producer's first
// pass over them takes fewer page faults and the kernel's zeroing of fresh pages runs beside it.
// Buffer 0 is being filled from its start, so it is backed from its end; then buffer 1. Stops as
// soon as an epoch is waiting. A stream fed whole epochs that are encoded from the caller's memory
// never asks for it: its buffers are never touched.
void StreamWriter::PrefaultBuffers() {
  constexpr size_t kStep = size_t{8} << 20;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return stop_ || pending_.has_value() || prefault_wanted_; });
  }
  const auto idle = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return !stop_ && !pending_;
  };
  for (size_t end = buffers_[0].size(); end > 0 && idle();) {
    const size_t begin = end - std::min(end, kStep);
    buffers_[0].Prefault(begin, end - begin);
    end = begin;
  }
  for (size_t begin = 0; begin < buffers_[1].size() && idle(); begin += kStep) buffers_[1].Prefault(begin, kStep);
}

void StreamWriter::WorkerLoop() {
  if (!encoder_) PrefaultBuffers();  // the CUDA backend pins (and so backs) its buffers itself
  for (;;) {
    EpochJob job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || pending_.has_value(); });
      if (!pending_) return;
      job = *pending_;
      pending_.reset();
    }
    Status st = ProcessEpoch(job);
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
      if (!st.ok() && error_.ok()) error_ = st;
    }
    cv_.notify_all();
  }
}

bool StreamWriter::WorkerIdle() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (busy_ || pending_) return false;
  }
  // A shared pool busy with another writer's epoch would queue the scatter behind it.
  return !pool_ || pool_->Idle();
}

Status StreamWriter::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !busy_ && !pending_; });
  return error_;
}

// One input buffer: before the producer writes into it again, the worker must be done with it.
Status StreamWriter::ReclaimBuffer() {
  if (!buffer_handed_) return Status::Ok();
  buffer_handed_ = false;
  return WaitIdle();
}

Status StreamWriter::Append(ByteView bytes) {
  if (closed_) return FailedPrecondition("StreamWriter: Append after Close");
  TESSERA_RETURN_IF_ERROR(StickyStatus());
  const int64_t row_bytes = layout_.row_elements * layout_.item_bytes;
  if (layout_.shape[0] > 0) {
    const int64_t limit = layout_.shape[0] * row_bytes;
    if (stats_.bytes_in + static_cast<int64_t>(bytes.size()) > limit)
      return InvalidArgument("stream: appending " + std::to_string(bytes.size()) + " bytes after " +
                             std::to_string(stats_.bytes_in) + " exceeds the declared shape's " +
                             std::to_string(limit) + " bytes");
  }
  while (!bytes.empty()) {
    const int64_t cap = CurrentEpochCapacityBytes();
    if (current_bytes_ == 0 && static_cast<int64_t>(bytes.size()) >= cap && TakesDirectEpochs()) {
      TESSERA_RETURN_IF_ERROR(EncodeDirectEpoch(bytes.first(static_cast<size_t>(cap))));
      bytes = bytes.subspan(static_cast<size_t>(cap));
      CountInput(cap);
      continue;
    }
    const int64_t n = std::min<int64_t>(cap - current_bytes_, static_cast<int64_t>(bytes.size()));
    TESSERA_RETURN_IF_ERROR(ReclaimBuffer());
    StoreInput(bytes.first(static_cast<size_t>(n)));
    current_bytes_ += n;
    bytes = bytes.subspan(static_cast<size_t>(n));
    CountInput(n);
    if (current_bytes_ == cap) TESSERA_RETURN_IF_ERROR(SubmitCurrent(false));
  }
  return Status::Ok();
}

Result<int64_t> StreamWriter::AppendFrom(const ReadFn& read) {
  if (closed_) return FailedPrecondition("StreamWriter: Append after Close");
  TESSERA_RETURN_IF_ERROR(StickyStatus());
  // Row-major epochs (CUDA) are read in place; tile pools take the input through a small staging
  // buffer that is scattered into the tiles.
  if (!encoder_ && staging_.empty()) staging_.resize(static_cast<size_t>(kInputStagingBytes));
  int64_t taken = 0;
  for (;;) {
    const int64_t cap = CurrentEpochCapacityBytes();
    if (cap <= 0) return taken;  // a bounded array is complete
    const size_t room = static_cast<size_t>(cap - current_bytes_);
    MutableByteView dst = encoder_ ? MutableByteView(buffers_[current_].data() + current_bytes_, room)
                                   : MutableByteView(staging_.data(), std::min(room, staging_.size()));
    TESSERA_ASSIGN_OR_RETURN(size_t n, read(dst));
    if (n == 0) return taken;
    if (n > dst.size()) return InvalidArgument("StreamWriter::AppendFrom: read reported more bytes than it was given");
    if (!encoder_) {
      TESSERA_RETURN_IF_ERROR(ReclaimBuffer());
      StoreInput(ByteView(staging_.data(), n));
    }
    current_bytes_ += static_cast<int64_t>(n);
    taken += static_cast<int64_t>(n);
    CountInput(static_cast<int64_t>(n));
    if (current_bytes_ == cap) TESSERA_RETURN_IF_ERROR(SubmitCurrent(false));
  }
}

// Whether a whole epoch in the caller's memory is encoded from there (EncodeDirectEpoch) rather
// than copied into an epoch buffer first. For the CPU backend with a compressing codec: each tile
// is gathered from the caller's rows into a cache-sized scratch tile by the thread that encodes
// it, so the gather runs on every compression thread instead of the producer's alone, and the
// epoch buffers (hundreds of MiB, zeroed by the kernel on first touch) are never touched. An
// encoder that gathers in place (no compression) keeps the buffers: its tiles are their own
// encoding, borrowed from the buffer.
bool StreamWriter::TakesDirectEpochs() const { return !encoder_ && !gathers_in_place_; }

// Encodes the epoch being started from `rows` (all of its rows, row-major), synchronously: the
// caller's memory is only borrowed for the Append call. Waits for the worker to finish the epoch
// before (epochs are encoded, and shard rows emitted, in order).
Status StreamWriter::EncodeDirectEpoch(ByteView rows) {
  TESSERA_RETURN_IF_ERROR(WaitIdle());
  const int64_t row_bytes = layout_.row_elements * layout_.item_bytes;
  EpochJob job{nullptr, epoch_, static_cast<int64_t>(rows.size()) / row_bytes, false, rows.data()};
  Status st = ProcessEpoch(job);
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.ok()) error_ = st;
    return st;
  }
  ++epoch_;
  return Status::Ok();
}

Status StreamWriter::SetArrivalOrder(std::span<const int64_t> order) {
  if (encoder_ && !order.empty()) {
    StreamLayout probe = layout_;
    TESSERA_RETURN_IF_ERROR(ApplyArrivalOrder(&probe, order));
    if (!probe.ArrivesInStoredOrder()) return CudaTakesStoredOrder();
    return Status::Ok();
  }
  if (epoch_ > 0 || current_bytes_ > 0)
    return FailedPrecondition("StreamWriter: the arrival order is set before the first Append");
  return ApplyArrivalOrder(&layout_, order);
}

// Copies tile `i` of a direct epoch from the caller's rows (as they arrive: row-major over
// layout_.input_epoch_shape) into `tile` (tile_bytes), padding what lies past the rows given or
// the array's edge with the fill value.
void StreamWriter::GatherTile(const EpochJob& job, int64_t i, uint8_t* tile) const {
  const StreamLayout& L = layout_;
  const int64_t item = L.item_bytes;
  int64_t origin[kMaxRank] = {}, count[kMaxRank], src_strides[kMaxRank], dst_strides[kMaxRank];
  if (L.rank > 1) index::Unravel(L.rank - 1, L.tile_count + 1, i, origin + 1);
  count[0] = job.rows;
  for (int d = 1; d < L.rank; ++d) {
    origin[d] *= L.tile_shape[d];
    count[d] = std::min(L.tile_shape[d], epoch_shape_[d] - origin[d]);
  }
  bool cut = false;
  for (int d = 0; d < L.rank; ++d) cut |= count[d] < L.tile_shape[d];
  if (cut) FillElements(tile, static_cast<size_t>(L.tile_elements), fill_);
  L.InputStridesByStoredDimension(src_strides);
  index::RowMajorStrides(L.rank, L.tile_shape, dst_strides);
  for (int d = 0; d < L.rank; ++d) {
    src_strides[d] *= item;
    dst_strides[d] *= item;
  }
  index::CopyStrided(L.rank, count, job.rows_source + index::Dot(L.rank, origin, src_strides), src_strides,
                     tile, dst_strides, static_cast<size_t>(item));
}

// Places `in`, the next bytes of the epoch being filled (row-major in the arrival order, starting
// at byte current_bytes_), into its buffer: a plain copy for a row-major epoch, a scatter into the
// tiles for a tile pool, each element to its stored place (an element split across calls waits in
// partial_item_).
void StreamWriter::StoreInput(ByteView in) {
  if (!prefault_requested_) {
    prefault_requested_ = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      prefault_wanted_ = true;
    }
    cv_.notify_all();
  }
  uint8_t* buffer = buffers_[current_].data();
  if (encoder_) {
    std::memcpy(buffer + current_bytes_, in.data(), in.size());
    return;
  }
  const StreamLayout& L = layout_;
  const size_t item = static_cast<size_t>(L.item_bytes);
  // An epoch buffer much larger than the caches is encoded only after it has been filled whole:
  // its lines would be gone from the cache by then, so the scatter writes around the cache.
  const bool streaming = L.epoch_buffer_bytes >= index::kStreamingStoreMinBytes;
  const auto scatter = [&](int64_t first, int64_t count, const uint8_t* src) {
    index::ScatterRunToTiles(L.rank, L.input_epoch_shape, L.scatter, first, count, src, buffer, item, streaming);
  };
  int64_t pos = current_bytes_;
  if (const size_t part = static_cast<size_t>(pos) % item; part != 0) {
    const size_t k = std::min(item - part, in.size());
    std::memcpy(partial_item_ + part, in.data(), k);
    in = in.subspan(k);
    pos += static_cast<int64_t>(k);
    if (static_cast<size_t>(pos) % item == 0) scatter(pos / L.item_bytes - 1, 1, partial_item_);
  }
  const int64_t whole = static_cast<int64_t>(in.size() / item);
  const int64_t first = pos / L.item_bytes;
  // A large input while the worker has nothing to encode (codec none, or it is ahead): split the
  // scatter over the compression threads; the pieces write disjoint tile bytes.
  const int parts = static_cast<int>(std::min<int64_t>(threads_, whole * L.item_bytes / kParallelScatterMinBytes));
  if (parts > 1 && WorkerIdle()) {
    (void)ForEach(parts, [&](int64_t k, int) -> Status {
      const int64_t begin = whole * k / parts, end = whole * (k + 1) / parts;
      scatter(first + begin, end - begin, in.data() + begin * L.item_bytes);
      return Status::Ok();
    });
  } else if (whole > 0) {
    scatter(first, whole, in.data());
  }
  if (const size_t rest = in.size() - static_cast<size_t>(whole) * item; rest != 0)
    std::memcpy(partial_item_, in.data() + whole * L.item_bytes, rest);
}

// Bytes the epoch being filled holds when complete: epoch_rows rows, fewer for the last epoch of
// a bounded array, 0 once a bounded array has all its rows.
int64_t StreamWriter::CurrentEpochCapacityBytes() const {
  int64_t rows_cap = layout_.epoch_rows;
  if (layout_.shape[0] > 0) rows_cap = std::clamp<int64_t>(layout_.shape[0] - epoch_ * layout_.epoch_rows, 0, rows_cap);
  return rows_cap * layout_.row_elements * layout_.item_bytes;
}

void StreamWriter::CountInput(int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.bytes_in += n;
}

Status StreamWriter::SubmitCurrent(bool partial) {
  const int64_t row_bytes = layout_.row_elements * layout_.item_bytes;
  EpochJob job{&buffers_[current_], epoch_, current_bytes_ / row_bytes, partial};
  if (partial) {
    // Synchronous: the worker is idle, the buffer keeps filling afterwards.
    TESSERA_RETURN_IF_ERROR(WaitIdle());
    Status st = ProcessEpoch(job);
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.ok()) error_ = st;
    }
    return st;
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !busy_ && !pending_; });  // backpressure: the other buffer is free
    if (!error_.ok()) return error_;
    pending_ = job;
    busy_ = true;
  }
  cv_.notify_all();
  if (buffers_[1].size() > 0) {
    current_ ^= 1;
  } else {
    buffer_handed_ = true;  // refilled once the worker is done with it (ReclaimBuffer)
  }
  current_bytes_ = 0;
  ++epoch_;
  return Status::Ok();
}

// Encodes tile `i` of the epoch in `job` into *out; an all-fill tile is marked absent. The epoch
// buffer is a tile pool, so a full epoch's tile is contiguous already (its edge padding holds the
// fill value); a partial epoch's tile is its first job.rows rows, copied and padded. An encoder
// that gathers in place has the tile itself as its encoding: borrowed from the epoch buffer when
// the tile's shard is handed to the sink before the buffer is reused (one epoch per shard row),
// else copied into *out.
Status StreamWriter::EncodeTile(const EpochJob& job, int64_t i, int worker, EncodedTile* out) {
  const StreamLayout& L = layout_;
  const size_t tile_bytes = static_cast<size_t>(L.tile_bytes);
  out->borrowed = {};
  if (job.rows_source) {  // a direct epoch (never one that gathers in place)
    Bytes& scratch = scratch_tile_[worker];
    ReserveHugePages(&scratch, tile_bytes);
    scratch.resize(tile_bytes);
    GatherTile(job, i, scratch.data());
    return EncodeGathered(job, i, scratch, out);
  }
  if (EncodesOverInput(job, i)) return EncodeOverInput(job, i, worker, out);
  const uint8_t* src = job.buffer->data() + i * L.tile_bytes;
  ByteView tile(src, tile_bytes);
  const size_t valid = static_cast<size_t>(job.rows * tile_row_bytes_);
  if (valid == tile_bytes && gathers_in_place_ && L.epochs_per_shard == 1) {
    out->present = !IsAllFill(tile, fill_);
    if (out->present) out->borrowed = tile;
    return Status::Ok();
  }
  if (valid < tile_bytes || gathers_in_place_) {
    Bytes& copy = gathers_in_place_ ? out->bytes : scratch_tile_[worker];
    ReserveHugePages(&copy, tile_bytes);  // written whole below
    copy.resize(tile_bytes);
    std::memcpy(copy.data(), src, valid);
    FillElements(copy.data() + valid, (tile_bytes - valid) / static_cast<size_t>(L.item_bytes), fill_);
    tile = copy;
  }
  return EncodeGathered(job, i, tile, out);
}

// Whether tile `i` of the epoch in `job` is encoded over its own input (EncodeOverInput): a whole
// tile of a complete epoch, compressed (an identity encoding borrows the tile as it is), whose shard
// is handed to the sink before the epoch buffer is refilled (one epoch per shard row: the shard
// row is emitted within this epoch's ProcessEpoch), and that holds no edge padding (the padding
// must keep the fill value for the stream's life; the rows of a full tile are all rewritten by
// the next epoch, and a partial epoch reads only the rows it was given).
bool StreamWriter::EncodesOverInput(const EpochJob& job, int64_t i) const {
  return !gathers_in_place_ && !job.partial && job.rows_source == nullptr && job.rows == layout_.epoch_rows &&
         layout_.epochs_per_shard == 1 && !tile_cut_[i];
}

// Encodes tile `i` into this thread's scratch and copies the encoding over the tile's input in the
// epoch buffer (dead once encoded), where the shard borrows it. The encodings then take no memory
// of their own: per-slot buffers of the worst-case size would be fresh memory the kernel zeroes on
// first touch (a page fault per 4 KiB written), and more resident memory. An encoding longer than
// the tile (incompressible data, plus the codec's header) keeps a buffer of its own instead.
Status StreamWriter::EncodeOverInput(const EpochJob& job, int64_t i, int worker, EncodedTile* out) {
  const StreamLayout& L = layout_;
  const size_t tile_bytes = static_cast<size_t>(L.tile_bytes);
  uint8_t* region = job.buffer->data() + i * L.tile_bytes;
  const ByteView tile(region, tile_bytes);
  if (IsAllFill(tile, fill_)) {
    out->present = false;
    return Status::Ok();
  }
  int64_t t[kMaxRank];
  t[0] = job.epoch;
  if (L.rank > 1) index::Unravel(L.rank - 1, L.tile_count + 1, i, t + 1);
  Bytes& encoded = scratch_tile_[worker];
  TESSERA_RETURN_IF_ERROR(tile_encoder_->Encode(t, tile, &encoded));
  out->present = true;
  if (encoded.size() > tile_bytes) {
    out->bytes.swap(encoded);  // the scratch takes the slot's old buffer for the next tile
    return Status::Ok();
  }
  std::memcpy(region, encoded.data(), encoded.size());
  out->borrowed = ByteView(region, encoded.size());
  return Status::Ok();
}

// Encodes tile `i` of the epoch, gathered whole into `tile`, into *out (absent when all fill).
Status StreamWriter::EncodeGathered(const EpochJob& job, int64_t i, ByteView tile, EncodedTile* out) {
  const StreamLayout& L = layout_;
  if (IsAllFill(tile, fill_)) {
    out->present = false;
    return Status::Ok();
  }
  if (!gathers_in_place_) {
    int64_t t[kMaxRank];
    t[0] = job.epoch;
    if (L.rank > 1) index::Unravel(L.rank - 1, L.tile_count + 1, i, t + 1);
    TESSERA_RETURN_IF_ERROR(tile_encoder_->Encode(t, tile, &out->bytes));
  }
  out->present = true;
  return Status::Ok();
}

// Encodes the epoch's tiles in shard-major order, each straight into its shard slot (whose buffer
// the previous shard row left for reuse). When the epoch completes a shard row, the thread that
// finishes a shard's last tile writes that shard right away, so storing one shard overlaps
// encoding the next (no extra buffers).
Status StreamWriter::ProcessEpoch(const EpochJob& job) {
  const StreamLayout& L = layout_;
  const bool last_of_shard_row = job.epoch % L.epochs_per_shard == L.epochs_per_shard - 1;
  const bool last_of_array = L.shape[0] > 0 && job.epoch == L.epoch_count - 1 && !job.partial;
  const bool emit = job.partial || last_of_shard_row || last_of_array;
  const int64_t shard_row = job.epoch / L.epochs_per_shard;
  const int64_t rows_through = job.epoch * L.epoch_rows + job.rows;
  if (encoder_) {
    // GPU backend: whole epochs go to the encoder; their tiles come back in order (possibly a
    // batch of epochs later) and are accumulated exactly as below. A flush or the array's last
    // epoch collects everything.
    if (job.rows > 0) {
      TESSERA_RETURN_IF_ERROR(encoder_->Submit(job.buffer->data(), job.rows));
      submitted_.push_back({job.epoch, job.partial, emit, shard_row, rows_through});
    }
    TESSERA_RETURN_IF_ERROR(CollectEncoded(job.partial || last_of_array || job.rows == 0));
    return job.rows == 0 && emit ? EmitShards(shard_row, rows_through) : Status::Ok();
  }
  if (job.rows == 0) return emit ? EmitShards(shard_row, rows_through) : Status::Ok();
  // A complete epoch's slots go to the shards' writers as they are encoded; a flush's partial
  // epoch is encoded again once complete, so its slots are stored only in whole shards.
  const bool streams = !job.partial;
  if (streams) {
    TESSERA_RETURN_IF_ERROR(appender_.BeginRow(sink_, shard_row, job.epoch));
    if (emit) appender_.MarkLaterEpochsReady(job.epoch);
  }
  std::vector<std::atomic<int64_t>> tiles_left(static_cast<size_t>(L.shards_per_epoch));
  for (int64_t s = 0; s < L.shards_per_epoch; ++s) tiles_left[s] = tiles_in_shard_[s];
  std::atomic<int64_t> bytes_out{0};
  unflushed_ = true;
  TESSERA_RETURN_IF_ERROR(ForEach(L.tiles_per_epoch, [&](int64_t k, int worker) -> Status {
    const int64_t i = tile_order_[k];
    const int64_t pos = L.permutation.Map(i);
    const int64_t s = L.ShardOfPosition(pos);
    const int64_t slot = L.SlotOfPosition(job.epoch, pos);
    TESSERA_RETURN_IF_ERROR(EncodeTile(job, i, worker, &shard_slots_[s][slot]));
    if (streams && appender_.Appends(s)) return appender_.SlotEncoded(s, slot, shard_slots_[s], &bytes_out);
    if (emit && tiles_left[s].fetch_sub(1) == 1) return WriteShard(shard_row, s, &bytes_out);
    return Status::Ok();
  }));
  if (!emit) return Status::Ok();
  TESSERA_RETURN_IF_ERROR(PublishShardRow(rows_through, bytes_out.load()));
  if (!job.partial) ClearShardSlots();
  return Status::Ok();
}

// Moves the GPU encoder's finished epochs (all submitted ones when `drain`) into their shard
// slots, oldest first, emitting each shard row when its last epoch is in.
Status StreamWriter::CollectEncoded(bool drain) {
  const StreamLayout& L = layout_;
  while (!submitted_.empty() && (drain || encoder_->Ready())) {
    const SubmittedEpoch e = submitted_.front();
    submitted_.pop_front();
    TESSERA_RETURN_IF_ERROR(encoder_->Collect(epoch_tiles_));
    unflushed_ = true;
    for (int64_t i = 0; i < L.tiles_per_epoch; ++i) {
      const int64_t pos = L.permutation.Map(i);
      std::swap(shard_slots_[L.ShardOfPosition(pos)][L.SlotOfPosition(e.epoch, pos)], epoch_tiles_[i]);
      epoch_tiles_[i].present = false;
    }
    if (!e.emit) continue;
    TESSERA_RETURN_IF_ERROR(EmitShards(e.shard_row, e.rows_through));
    if (!e.partial) ClearShardSlots();
  }
  return Status::Ok();
}

// A shard row is stored: its slots are free for the next (buffers kept for reuse), and its
// shards' writers are done.
void StreamWriter::ClearShardSlots() {
  for (auto& shard : shard_slots_)
    for (auto& slot : shard) slot.present = false;
  appender_.Drop();
}

// Hands shard `s` of the active shard row to the sink.
Status StreamWriter::WriteShard(int64_t shard_row, int64_t s, std::atomic<int64_t>* bytes_out) {
  const StreamLayout& L = layout_;
  int64_t coords[kMaxRank];
  L.ShardCoords(shard_row, s, coords);
  EncodedShard shard;
  shard.coords = std::span<const int64_t>(coords, static_cast<size_t>(L.rank));
  shard.slots = shard_slots_[s];
  shard.stored_bytes = StoredBytes(shard.slots);
  *bytes_out += shard.stored_bytes;
  return sink_->WriteShard(shard);
}

Status StreamWriter::EmitShards(int64_t shard_row, int64_t rows_through) {
  std::atomic<int64_t> bytes_out{0};
  TESSERA_RETURN_IF_ERROR(ForEach(layout_.shards_per_epoch, [&](int64_t s, int) -> Status {
    return WriteShard(shard_row, s, &bytes_out);
  }));
  return PublishShardRow(rows_through, bytes_out.load());
}

// Publishes the array's new extent once every shard of the row is stored.
Status StreamWriter::PublishShardRow(int64_t rows_through, int64_t bytes_out) {
  const StreamLayout& L = layout_;
  const int64_t published = L.shape[0] > 0 ? std::min(rows_through, L.shape[0]) : rows_through;
  TESSERA_RETURN_IF_ERROR(sink_->PublishRows(published));
  unflushed_ = false;
  std::lock_guard<std::mutex> lock(mu_);
  stats_.bytes_out += bytes_out;
  stats_.shards_written += L.shards_per_epoch;
  stats_.rows_published = published;
  return Status::Ok();
}

Status StreamWriter::Flush() {
  if (closed_) return FailedPrecondition("StreamWriter: Flush after Close");
  TESSERA_RETURN_IF_ERROR(WaitIdle());
  const int64_t row_bytes = layout_.row_elements * layout_.item_bytes;
  if (current_bytes_ >= row_bytes) return SubmitCurrent(/*partial=*/true);
  // No whole row pending: emit the shard row if earlier epochs of it are not stored yet (after
  // collecting what the GPU encoder still holds; the worker is idle).
  if (encoder_ && !submitted_.empty()) {
    Status st = CollectEncoded(/*drain=*/true);
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.ok()) error_ = st;
      return st;
    }
  }
  if (unflushed_) {
    Status st = EmitShards(epoch_ / layout_.epochs_per_shard, epoch_ * layout_.epoch_rows);
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.ok()) error_ = st;
    }
    return st;
  }
  return Status::Ok();
}

Status StreamWriter::Close() {
  if (closed_) return FailedPrecondition("StreamWriter: Close called twice");
  Status st = Flush();
  closed_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  appender_.Drop();
  TESSERA_RETURN_IF_ERROR(st);
  const int64_t row_bytes = layout_.row_elements * layout_.item_bytes;
  const std::string partial_row =
      stats_.bytes_in % row_bytes != 0
          ? " (not a whole number of rows of " + std::to_string(row_bytes) + " bytes)"
          : "";
  if (layout_.shape[0] > 0 && stats_.bytes_in != layout_.shape[0] * row_bytes)
    return InvalidArgument("stream ended after " + std::to_string(stats_.bytes_in) + " bytes" + partial_row +
                           " but the declared shape needs " + std::to_string(layout_.shape[0] * row_bytes));
  if (!partial_row.empty())
    return InvalidArgument("stream ended after " + std::to_string(stats_.bytes_in) + " bytes" + partial_row);
  return Status::Ok();
}

}  // namespace tessera::stream
