#include "tessera/hdf5/hdf5_stream.h"

#include <libdeflate.h>

#include "tessera/codec/registry.h"
#include "tessera/hdf5/h5_chunk_log.h"
#include "tessera/core/parallel.h"
#include "tessera/index/index.h"
#include "tessera/stream/tile_encoder.h"

namespace tessera::hdf5 {
namespace {

// Filters one padded tile with the dataset's pipeline.
class FilterTileEncoder final : public stream::TileEncoder {
 public:
  FilterTileEncoder(FilterPipeline pipeline, size_t item) : pipeline_(std::move(pipeline)), item_(item) {}
  Status Encode(const int64_t*, ByteView tile, Bytes* out) const override {
    return EncodeChunk(pipeline_, item_, tile, out);
  }

 private:
  const FilterPipeline pipeline_;
  const size_t item_;
};

Result<stream::StreamLayout> Plan(const DatasetOptions& d, int threads) {
  stream::LayoutRequest r;
  r.dtype = d.dtype;
  r.shape = d.shape;
  if (d.unlimited0) r.shape[0] = 0;
  r.tile_shape = d.chunk_shape;
  r.tiles_per_shard.assign(d.shape.size(), 1);
  int64_t tile_bytes = static_cast<int64_t>(ItemSize(d.dtype));
  for (int64_t c : d.chunk_shape) tile_bytes *= c;
  int64_t worst = tile_bytes;
  for (const Filter& f : d.filters) {
    if (f.id == kFilterDeflate) worst = static_cast<int64_t>(libdeflate_zlib_compress_bound(nullptr, worst));
    if (f.id == kFilterFletcher32) worst += 4;
  }
  r.max_compressed_tile_bytes = worst;
  r.threads = threads;
  return stream::PlanStreamLayout(r);
}

}  // namespace

Result<DatasetOptions> Hdf5StreamOptions::ToDatasetOptions() const {
  DatasetOptions d;
  d.dtype = dtype;
  d.shape = shape;
  d.unlimited0 = !shape.empty() && shape[0] == 0;
  const size_t item = ItemSize(dtype);
  d.chunk_shape = chunk_shape.empty() ? AutoChunkShape(shape, d.unlimited0, item) : chunk_shape;
  if (shuffle) d.filters.push_back(ShuffleFilter(static_cast<uint32_t>(item)));
  if (deflate_level >= 0) {
    if (deflate_level > 9) return InvalidArgument("HDF5 deflate level " + std::to_string(deflate_level) + " is not in 0..9");
    d.filters.push_back(DeflateFilter(static_cast<uint32_t>(deflate_level)));
  }
  if (fletcher32) d.filters.push_back(Fletcher32Filter());
  d.fill = fill;
  d.attributes = attributes;
  return d;
}

Result<stream::StreamLayout> PlanHdf5Stream(const Hdf5StreamOptions& options, int threads) {
  TESSERA_ASSIGN_OR_RETURN(DatasetOptions d, options.ToDatasetOptions());
  return Plan(d, threads);
}

Hdf5ChunkSink::Hdf5ChunkSink(ChunkSpace* space, H5DatasetWriter* dataset, const stream::StreamLayout& layout,
                             std::shared_ptr<ChunkLog> log)
    : space_(space),
      dataset_(dataset),
      log_(std::move(log)),
      chunks_per_row_(layout.shards_per_epoch),
      grid_(layout.shard_count + 1, layout.shard_count + layout.rank) {}

Result<Hdf5ChunkSink::Placed> Hdf5ChunkSink::PlaceLocked(const std::vector<int64_t>& coords, ByteView bytes) {
  const int64_t position = next_++;
  const Placed placed{coords, bytes.empty() ? kUndefinedAddress : space_->Allocate(bytes.size()), bytes};
  if (log_ != nullptr) {
    TESSERA_RETURN_IF_ERROR(log_->Append(static_cast<uint64_t>(coords[0]), static_cast<uint64_t>(position),
                                         placed.address, static_cast<uint32_t>(bytes.size())));
  }
  return placed;
}

Status Hdf5ChunkSink::WriteShard(const stream::EncodedShard& shard) {
  if (shard.slots.size() != 1)
    return FailedPrecondition(dataset_->path() + ": the stream's shards must be single chunks, got " +
                              std::to_string(shard.slots.size()) + " slots");
  const std::vector<int64_t> coords(shard.coords.begin(), shard.coords.end());
  // An absent slot (all fill value) is laid out as an empty chunk, which removes it from the
  // index (a filtered chunk of at least one element is never empty).
  const ByteView mine = shard.slots[0].present ? shard.slots[0].encoding() : ByteView();
  if (mine.size() > UINT32_MAX) {
    return Unsupported(dataset_->path() + ": a filtered chunk of " + std::to_string(mine.size()) +
                       " bytes exceeds HDF5's 4 GiB chunk size field");
  }
  const int64_t position = grid_.empty() ? 0 : index::Ravel(static_cast<int>(grid_.size()), grid_.data(), coords.data() + 1);
  std::vector<Placed> placed;
  std::vector<Bytes> held;  // early chunks taken out of early_, kept alive until written
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (position != next_) {
      early_.emplace(position, std::make_pair(coords, Bytes(mine.begin(), mine.end())));
      return Status::Ok();
    }
    TESSERA_ASSIGN_OR_RETURN(Placed first, PlaceLocked(coords, mine));
    placed.push_back(std::move(first));
    for (auto it = early_.find(next_); it != early_.end(); it = early_.find(next_)) {
      held.push_back(std::move(it->second.second));
      TESSERA_ASSIGN_OR_RETURN(Placed next, PlaceLocked(it->second.first, held.back()));
      placed.push_back(std::move(next));
      early_.erase(it);
    }
  }
  for (const Placed& p : placed) {
    if (p.address == kUndefinedAddress) {
      // All fill value (possibly replacing a flushed version); a log has it already.
      if (log_ == nullptr) dataset_->RemoveChunk(p.coords);
      continue;
    }
    TESSERA_RETURN_IF_ERROR(space_->WriteAt(p.address, p.bytes));
    if (log_ == nullptr) dataset_->RecordChunk(p.coords, p.address, static_cast<uint32_t>(p.bytes.size()), 0);
  }
  return Status::Ok();
}

Status Hdf5ChunkSink::PublishRows(int64_t rows) {
  std::lock_guard<std::mutex> lock(mu_);
  if (next_ != chunks_per_row_ || !early_.empty()) {
    return FailedPrecondition(dataset_->path() + ": chunk row published with " + std::to_string(next_) + " of " +
                    std::to_string(chunks_per_row_) + " chunks laid out");
  }
  next_ = 0;
  if (dataset_->options().unlimited0) dataset_->SetExtent0(rows);
  return Status::Ok();
}

Result<Hdf5SinkAndWriter> OpenHdf5Stream(H5Writer* file, const Hdf5StreamOptions& options,
                                  const stream::StreamWriterOptions& writer_options) {
  return OpenHdf5Stream(file, std::make_unique<FileChunkSpace>(file), nullptr, options, writer_options);
}

Result<Hdf5SinkAndWriter> OpenHdf5Stream(H5Writer* file, std::unique_ptr<ChunkSpace> space,
                                         std::shared_ptr<ChunkLog> log, const Hdf5StreamOptions& options,
                                         const stream::StreamWriterOptions& writer_options) {
  const int threads = writer_options.threads > 0 ? writer_options.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(DatasetOptions d, options.ToDatasetOptions());
  TESSERA_ASSIGN_OR_RETURN(stream::StreamLayout layout, Plan(d, threads));
  if (d.unlimited0) d.shape[0] = 0;
  const FilterPipeline pipeline = d.filters;
  const std::vector<int64_t> chunk_shape = d.chunk_shape;
  Hdf5SinkAndWriter s;
  s.space = std::move(space);
  TESSERA_ASSIGN_OR_RETURN(s.dataset, file->CreateDataset(options.dataset, std::move(d)));
  if (log != nullptr) s.dataset->UseChunkLog(log);
  s.sink = std::make_unique<Hdf5ChunkSink>(s.space.get(), s.dataset, layout, std::move(log));
  std::shared_ptr<const stream::TileEncoder> encoder;
  if (pipeline.empty()) {
    // No filters: the padded tile is the chunk; the little-endian bytes codec gathers in place
    // (the writer gathers each tile straight into its chunk buffer).
    const ChunkSpec spec{options.dtype, chunk_shape, s.dataset->options().fill};
    TESSERA_ASSIGN_OR_RETURN(CodecChain identity,
                             ParseCodecChain(nlohmann::json::array({{{"name", "bytes"},
                                                                     {"configuration", {{"endian", "little"}}}}}),
                                             spec));
    encoder = std::make_shared<stream::CodecChainTileEncoder>(std::move(identity), spec);
  } else {
    encoder = std::make_shared<FilterTileEncoder>(pipeline, ItemSize(options.dtype));
  }
  TESSERA_ASSIGN_OR_RETURN(s.writer, stream::StreamWriter::Create(layout, std::move(encoder), s.dataset->options().fill,
                                                                  s.sink.get(), writer_options));
  return s;
}

}  // namespace tessera::hdf5
