#include "tessera/stream/stream_writer.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "tessera/codec/bytes_codec.h"
#include "tessera/core/parallel.h"
#include "tessera/index/strided_copy.h"

namespace tessera::stream {
namespace {

// True when encoding a tile copies its bytes unchanged: no array->array or bytes->bytes codecs
// and a bytes codec that keeps this (little-endian) host's byte order.
bool IsIdentityChain(const CodecChain& chain, int64_t item_bytes) {
  static_assert(std::endian::native == std::endian::little, "tessera assumes a little-endian host");
  if (!chain.array_to_array.empty() || !chain.bytes_to_bytes.empty()) return false;
  const auto* bytes = dynamic_cast<const BytesCodec*>(chain.array_to_bytes.get());
  if (!bytes) return false;
  return item_bytes == 1 || bytes->endian().value_or(Endian::kLittle) == Endian::kLittle;
}

}  // namespace

Result<std::unique_ptr<StreamWriter>> StreamWriter::Create(const StreamLayout& layout, CodecChain tile_codecs,
                                                           FillValue fill, ShardSink* sink,
                                                           const StreamWriterOptions& options) {
  if (!sink) return InvalidArgument("StreamWriter: no sink");
  if (static_cast<int64_t>(fill.bytes.size()) != layout.item_bytes)
    return InvalidArgument("StreamWriter: fill value size does not match the element size");
  const int threads = options.threads > 0 ? options.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(PageBuffer buffer0, PageBuffer::Allocate(static_cast<size_t>(layout.epoch_bytes)));
  TESSERA_ASSIGN_OR_RETURN(PageBuffer buffer1, PageBuffer::Allocate(static_cast<size_t>(layout.epoch_bytes)));
  return std::unique_ptr<StreamWriter>(new StreamWriter(layout, std::move(tile_codecs), std::move(fill), sink, threads,
                                                        std::move(buffer0), std::move(buffer1)));
}

StreamWriter::StreamWriter(const StreamLayout& layout, CodecChain tile_codecs, FillValue fill, ShardSink* sink,
                           int threads, PageBuffer buffer0, PageBuffer buffer1)
    : layout_(layout),
      tile_codecs_(std::move(tile_codecs)),
      tile_spec_{layout.dtype, std::vector<int64_t>(layout.tile_shape, layout.tile_shape + layout.rank), std::move(fill)},
      sink_(sink),
      threads_(threads) {
  buffers_[0] = std::move(buffer0);
  buffers_[1] = std::move(buffer1);
  epoch_tiles_.resize(static_cast<size_t>(layout_.tiles_per_epoch));
  scratch_tile_.resize(threads_);
  for (auto& t : scratch_tile_) t.resize(static_cast<size_t>(layout_.tile_bytes));
  identity_chain_ = IsIdentityChain(tile_codecs_, layout_.item_bytes);
  shard_slots_.assign(static_cast<size_t>(layout_.shards_per_epoch),
                      std::vector<EncodedTile>(static_cast<size_t>(layout_.tiles_per_shard_total)));
  worker_ = std::thread([this] { WorkerLoop(); });
}

StreamWriter::~StreamWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
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

void StreamWriter::WorkerLoop() {
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

Status StreamWriter::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !busy_ && !pending_; });
  return error_;
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
    const int64_t n = std::min<int64_t>(cap - current_bytes_, static_cast<int64_t>(bytes.size()));
    std::memcpy(buffers_[current_].data() + current_bytes_, bytes.data(), static_cast<size_t>(n));
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
  int64_t taken = 0;
  for (;;) {
    const int64_t cap = CurrentEpochCapacityBytes();
    if (cap <= 0) return taken;  // a bounded array is complete
    MutableByteView dst(buffers_[current_].data() + current_bytes_, static_cast<size_t>(cap - current_bytes_));
    TESSERA_ASSIGN_OR_RETURN(size_t n, read(dst));
    if (n == 0) return taken;
    if (n > dst.size()) return InvalidArgument("StreamWriter::AppendFrom: read reported more bytes than it was given");
    current_bytes_ += static_cast<int64_t>(n);
    taken += static_cast<int64_t>(n);
    CountInput(static_cast<int64_t>(n));
    if (current_bytes_ == cap) TESSERA_RETURN_IF_ERROR(SubmitCurrent(false));
  }
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
  current_ ^= 1;
  current_bytes_ = 0;
  ++epoch_;
  return Status::Ok();
}

Status StreamWriter::CompressTiles(const EpochJob& job) {
  const StreamLayout& L = layout_;
  const int rank = L.rank;
  const int64_t item = L.item_bytes;
  // Byte strides of the epoch buffer (rows x shape[1..]) and of one tile.
  int64_t src_strides[kMaxRank], tile_strides[kMaxRank];
  {
    int64_t epoch_shape[kMaxRank];
    epoch_shape[0] = L.epoch_rows;
    for (int d = 1; d < rank; ++d) epoch_shape[d] = L.shape[d];
    index::RowMajorStrides(rank, epoch_shape, src_strides);
    index::RowMajorStrides(rank, L.tile_shape, tile_strides);
    for (int d = 0; d < rank; ++d) src_strides[d] *= item, tile_strides[d] *= item;
  }
  const uint8_t* epoch_data = job.buffer->data();
  return ParallelFor(L.tiles_per_epoch, threads_, [&](int64_t i, int worker) -> Status {
    int64_t t[kMaxRank], extent[kMaxRank];
    t[0] = 0;
    if (rank > 1) index::Unravel(rank - 1, L.tile_count + 1, i, t + 1);
    bool edge = false;
    int64_t src_off = 0;
    for (int d = 0; d < rank; ++d) {
      const int64_t origin = t[d] * L.tile_shape[d];
      const int64_t limit = d == 0 ? job.rows : L.shape[d];
      extent[d] = std::min(L.tile_shape[d], limit - origin);
      edge |= extent[d] < L.tile_shape[d];
      src_off += origin * src_strides[d];
    }
    // An identity chain (little-endian bytes, nothing else): the gathered tile is its encoding.
    Bytes& tile = identity_chain_ ? epoch_tiles_[i].bytes : scratch_tile_[worker];
    if (identity_chain_) tile.resize(static_cast<size_t>(L.tile_bytes));
    if (edge) FillElements(tile.data(), static_cast<size_t>(L.tile_elements), tile_spec_.fill);
    index::CopyStrided(rank, extent, epoch_data + src_off, src_strides, tile.data(), tile_strides, static_cast<size_t>(item));
    if (IsAllFill(tile, tile_spec_.fill)) {
      epoch_tiles_[i].present = false;
      return Status::Ok();
    }
    if (!identity_chain_) TESSERA_RETURN_IF_ERROR(tile_codecs_.Encode(tile_spec_, tile, &epoch_tiles_[i].bytes));
    epoch_tiles_[i].present = true;
    return Status::Ok();
  });
}

Status StreamWriter::ProcessEpoch(const EpochJob& job) {
  const StreamLayout& L = layout_;
  if (job.rows > 0) {
    TESSERA_RETURN_IF_ERROR(CompressTiles(job));
    // Aggregate by shard: tile i goes to shard ShardOfPosition(P(i)), slot SlotOfPosition(P(i)).
    for (int64_t i = 0; i < L.tiles_per_epoch; ++i) {
      const int64_t pos = L.permutation.Map(i);
      std::swap(shard_slots_[L.ShardOfPosition(pos)][L.SlotOfPosition(job.epoch, pos)], epoch_tiles_[i]);
      epoch_tiles_[i].present = false;
    }
    unflushed_ = true;
  }
  const bool last_of_shard_row = job.epoch % L.epochs_per_shard == L.epochs_per_shard - 1;
  const bool last_of_array = L.shape[0] > 0 && job.epoch == L.epoch_count - 1 && !job.partial;
  if (job.partial || last_of_shard_row || last_of_array) {
    const int64_t rows_through = job.epoch * L.epoch_rows + job.rows;
    TESSERA_RETURN_IF_ERROR(EmitShards(job.epoch / L.epochs_per_shard, rows_through));
    if (!job.partial)
      for (auto& shard : shard_slots_)
        for (auto& slot : shard) slot.present = false;
  }
  return Status::Ok();
}

Status StreamWriter::EmitShards(int64_t shard_row, int64_t rows_through) {
  const StreamLayout& L = layout_;
  const int rank = L.rank;
  std::atomic<int64_t> bytes_out{0};
  TESSERA_RETURN_IF_ERROR(ParallelFor(L.shards_per_epoch, threads_, [&](int64_t s, int) -> Status {
    std::vector<int64_t> coords(rank);
    coords[0] = shard_row;
    if (rank > 1) index::Unravel(rank - 1, L.shard_count + 1, s, coords.data() + 1);
    const auto& slots = shard_slots_[s];
    ShardIndex index = ShardIndex::AllEmpty(slots.size());
    std::vector<ByteView> pieces;
    uint64_t offset = 0;
    for (size_t k = 0; k < slots.size(); ++k) {
      if (!slots[k].present) continue;
      index.entries[2 * k] = offset;
      index.entries[2 * k + 1] = slots[k].bytes.size();
      offset += slots[k].bytes.size();
      pieces.emplace_back(slots[k].bytes);
    }
    bytes_out += static_cast<int64_t>(offset);
    return sink_->WriteShard(coords, pieces, index);
  }));
  const int64_t published = L.shape[0] > 0 ? std::min(rows_through, L.shape[0]) : rows_through;
  TESSERA_RETURN_IF_ERROR(sink_->PublishRows(published));
  unflushed_ = false;
  std::lock_guard<std::mutex> lock(mu_);
  stats_.bytes_out += bytes_out.load();
  stats_.shards_written += L.shards_per_epoch;
  stats_.rows_published = published;
  return Status::Ok();
}

Status StreamWriter::Flush() {
  if (closed_) return FailedPrecondition("StreamWriter: Flush after Close");
  TESSERA_RETURN_IF_ERROR(WaitIdle());
  const int64_t row_bytes = layout_.row_elements * layout_.item_bytes;
  if (current_bytes_ >= row_bytes) return SubmitCurrent(/*partial=*/true);
  // No whole row pending: emit the shard row if earlier epochs of it are not stored yet.
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
