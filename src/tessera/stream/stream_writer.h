// The streaming writer: row-major bytes in, complete shards out, with bounded memory.
//
//   Append / AppendFrom ──> epoch buffer (one tile row along dimension 0; two buffers: one
//   filling, one being encoded).
//   CPU backend: the epoch buffer is a tile pool: the input is scattered into the tiles as it
//   arrives (edge padding holds the fill value), so each tile is contiguous when the epoch is
//   complete. The tiles are encoded in shard-major order by the TileEncoder straight from the
//   pool, each into its shard slot (a partial epoch's tiles are padded in a per-thread scratch
//   tile first; an encoder that gathers in place gets the tile copied into its slot; with one
//   epoch per shard row, a complete epoch's encodings are copied over their own, dead input and
//   borrowed from there, so they need no memory of their own); the thread that finishes a
//   shard's last tile hands the shard to the sink, so storing overlaps encoding.
//   CUDA backend (EpochEncoder, built from the tile encoder's codec_chain()): row-major epochs
//   are encoded on the GPU (several per batch when the encoder asks for it; their tiles come back
//   in order), then the same slots and sink. At each shard-epoch boundary the sink has the
//   complete shards (EncodedShard) and the new extent of dimension 0 is published.
//
// Lifecycle: Create -> Append* [Flush] ... -> Close. Append takes any byte count and blocks
// (backpressure) while both epoch buffers are busy; memory never grows with the stream length.
// An error in a worker surfaces on the next call with its cause and makes the writer fail
// permanently (sticky status). Not thread-safe: one producer thread calls the writer.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/page_buffer.h"
#include "tessera/core/worker_pool.h"
#include "tessera/stream/epoch_encoder.h"
#include "tessera/stream/layout.h"
#include "tessera/stream/shard_appender.h"
#include "tessera/stream/shard_sink.h"
#include "tessera/stream/tile_encoder.h"

namespace tessera::stream {

struct StreamWriterOptions {
  int threads = 0;               // compression threads; 0 = hardware threads
  // kCuda: scatter + compress + aggregate on the GPU; needs a tile encoder whose codec_chain()
  // the GPU implements.
  Backend backend = Backend::kCpu;
  // Compression threads shared with other writers (an acquisition's arrays, a pyramid's levels);
  // set, it replaces `threads`: the writer's parallel work runs as batches on the pool.
  std::shared_ptr<WorkerPool> pool;
  // CPU backend: 2 epoch buffers (one filling while the other is encoded), or 1: the next epoch
  // is filled only once the previous one is encoded. One saves an epoch buffer of memory; in an
  // acquisition the other arrays' input and encoding fill the time the producer would wait.
  int input_buffers = 2;
};

struct StreamStats {
  int64_t bytes_in = 0;          // bytes appended
  int64_t bytes_out = 0;         // encoded chunk bytes handed to the sink
  int64_t rows_published = 0;    // rows of dimension 0 durably stored
  int64_t shards_written = 0;
};

class StreamWriter {
 public:
  // `layout` comes from PlanStreamLayout; `tile_encoder` encodes one tile (inner chunk) of it
  // (e.g. MakeTileEncoder for a codec chain); `fill` pads edge tiles and marks all-fill tiles
  // absent. `sink` must outlive the writer.
  static Result<std::unique_ptr<StreamWriter>> Create(const StreamLayout& layout,
                                                      std::shared_ptr<const TileEncoder> tile_encoder, FillValue fill,
                                                      ShardSink* sink, const StreamWriterOptions& options = {});
  ~StreamWriter();

  // Appends row-major bytes, dimensions in the arrival order (any count; rows may be split across calls).
  Status Append(ByteView bytes);
  // Like Append, but the writer asks for the input: calls read(dst) repeatedly, each time with
  // free space of the epoch buffer being filled (CUDA) or of a small staging buffer (CPU);
  // read returns how many bytes it placed at dst's start, 0 at the end of the input. Returns
  // when the input ends or a bounded array has all its rows; the count of bytes taken.
  using ReadFn = std::function<Result<size_t>(MutableByteView dst)>;
  Result<int64_t> AppendFrom(const ReadFn& read);
  // Stores everything appended so far (the partial epoch padded with the fill value, partial
  // shards with empty slots) and publishes it. Appending may continue afterwards.
  Status Flush();
  // Flush, then stop. Returns the final status; for a bounded dimension 0, a stream that did
  // not deliver exactly shape[0] rows is an error.
  Status Close();
  // Stops without storing anything more: drops the epoch waiting for the worker and waits for
  // the one in progress. Shards already handed to the sink stay; the caller decides what a failed
  // stream leaves behind (e.g. ZarrShardSink::Abandon). Later calls fail.
  void Abort();

  // The order the input's dimensions arrive in (ArraySpec::arrival_order: arriving dimension i is
  // stored dimension order[i]; empty: stored order), set before the first Append: Append and
  // AppendFrom then take bytes row-major in that order, and each element is scattered straight
  // into its stored tile (no copy of the input). The CPU backend only.
  Status SetArrivalOrder(std::span<const int64_t> order);

  const StreamLayout& layout() const { return layout_; }
  // The GPU backend's memory plan; empty for the CPU backend.
  std::string DescribeBackendPlan() const { return encoder_ ? encoder_->DescribeMemoryPlan() : std::string(); }
  StreamStats stats() const;

 private:
  StreamWriter(const StreamLayout& layout, std::shared_ptr<const TileEncoder> tile_encoder, FillValue fill,
               ShardSink* sink, int threads, std::shared_ptr<WorkerPool> pool, PageBuffer buffer0,
               PageBuffer buffer1, std::unique_ptr<EpochEncoder> encoder);

  struct EpochJob {
    const PageBuffer* buffer = nullptr;
    int64_t epoch = 0;
    int64_t rows = 0;      // valid rows in the buffer
    bool partial = false;  // a flush of an incomplete epoch: do not recycle the buffer
    const uint8_t* rows_source = nullptr;  // a direct epoch: its rows, row-major, in the caller's memory
  };
  void WorkerLoop();
  // fn(i, worker) for i in [0, n) on the shared pool, or on threads_ threads of the writer's own.
  Status ForEach(int64_t n, const WorkerPool::ItemFn& fn);
  void PrefaultBuffers();
  Status ProcessEpoch(const EpochJob& job);
  Status EncodeTile(const EpochJob& job, int64_t i, int worker, EncodedTile* out);
  Status EncodeGathered(const EpochJob& job, int64_t i, ByteView tile, EncodedTile* out);
  bool EncodesOverInput(const EpochJob& job, int64_t i) const;
  Status EncodeOverInput(const EpochJob& job, int64_t i, int worker, EncodedTile* out);
  void StoreInput(ByteView in);
  Status WriteShard(int64_t shard_row, int64_t s, std::atomic<int64_t>* bytes_out);
  Status EmitShards(int64_t shard_row, int64_t rows_through);
  Status PublishShardRow(int64_t rows_through, int64_t bytes_out);
  void ClearShardSlots();
  Status CollectEncoded(bool drain);
  Status SubmitCurrent(bool partial);
  Status ReclaimBuffer();
  bool TakesDirectEpochs() const;
  Status EncodeDirectEpoch(ByteView rows);
  void GatherTile(const EpochJob& job, int64_t i, uint8_t* tile) const;
  int64_t CurrentEpochCapacityBytes() const;
  void CountInput(int64_t n);
  bool WorkerIdle();
  Status WaitIdle();
  Status StickyStatus();

  StreamLayout layout_;  // its input side changes only in SetArrivalOrder, before any input
  const std::shared_ptr<const TileEncoder> tile_encoder_;  // never null
  const bool gathers_in_place_;  // tile_encoder_->gathers_in_place(): tiles are gathered into their slots
  const FillValue fill_;
  ShardSink* sink_;
  const int threads_;                  // workers: the pool's size when shared
  const std::shared_ptr<WorkerPool> pool_;  // null: ParallelFor on threads of the writer's own
  std::unique_ptr<EpochEncoder> encoder_;  // null: the fused CPU path
  int64_t epoch_shape_[kMaxRank] = {};  // epoch_rows x shape[1..] (stored order)
  int64_t tile_row_bytes_ = 0;          // bytes of one row (along dimension 0) of a tile
  std::vector<int64_t> tile_order_;      // the epoch's tiles in shard-major (position) order
  std::vector<int64_t> tiles_in_shard_;  // tiles of one epoch that land in each active shard

  // Producer side. CPU backend: each buffer is a tile pool (layout_.scatter), filled by scattering
  // the input; CUDA backend: row-major epochs.
  PageBuffer buffers_[2];
  Bytes staging_;               // AppendFrom's reads into a tile pool go through here
  uint8_t partial_item_[16] = {};  // an element split across Append calls
  int current_ = 0;
  int64_t current_bytes_ = 0;   // bytes in buffers_[current_]
  int64_t epoch_ = 0;           // epoch being filled
  bool closed_ = false;
  bool prefault_requested_ = false;  // producer's copy of prefault_wanted_
  bool buffer_handed_ = false;  // one input buffer: it was handed to the worker and may still be in use

  // CUDA backend: the encoded tiles of the epoch being collected, in tile order.
  std::vector<EncodedTile> epoch_tiles_;
  // One per thread: the padded tiles of partial epochs, and the encodings of tiles encoded over
  // their input (EncodeOverInput) on their way into the epoch buffer.
  std::vector<Bytes> scratch_tile_;
  std::vector<char> tile_cut_;  // per tile of an epoch: the array's edge cuts it (it holds padding)
  // Active shards: per shard in the epoch, per slot, the encoded chunk.
  std::vector<std::vector<EncodedTile>> shard_slots_;
  bool unflushed_ = false;  // shard_slots_ holds tiles not yet handed to the sink
  // The active shard row's shards that the sink stores slot by slot as they are encoded.
  ShardAppender appender_{layout_};
  // Epochs submitted to the GPU encoder and not collected yet (oldest first), with what to do
  // with each once its tiles are back.
  struct SubmittedEpoch {
    int64_t epoch = 0;
    bool partial = false;
    bool emit = false;
    int64_t shard_row = 0;
    int64_t rows_through = 0;
  };
  std::deque<SubmittedEpoch> submitted_;

  // Hand-off between the producer and the worker thread.
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<EpochJob> pending_;
  bool busy_ = false;
  bool stop_ = false;
  bool prefault_wanted_ = false;  // input has been copied into an epoch buffer (PrefaultBuffers)
  Status error_;
  StreamStats stats_;
  std::thread worker_;
};

}  // namespace tessera::stream
