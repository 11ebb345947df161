#include "tessera/zarr/zarr_stream.h"

#include "tessera/codec/registry.h"
#include "tessera/core/parallel.h"

namespace tessera::zarr {
namespace {

// A stream's codecs are parsed once, here: the sink stores with `codecs`, the tile encoder (and
// through it the GPU backend) encodes with `tile_codecs`, the sharding codec's inner chain (or
// the whole chain, unsharded), which shares its codec objects.
struct Plan {
  zarr::ArrayMetadata metadata;
  CodecChain codecs;
  CodecChain tile_codecs;
  stream::StreamLayout layout;
};

Result<Plan> MakePlan(const zarr::ArrayOptions& options, int threads) {
  Plan p;
  TESSERA_ASSIGN_OR_RETURN(p.metadata, zarr::BuildArrayMetadata(options));
  const ChunkSpec grid_spec{p.metadata.dtype, p.metadata.chunk_shape, p.metadata.fill_value};
  TESSERA_ASSIGN_OR_RETURN(p.codecs, ParseCodecChain(p.metadata.codecs, grid_spec));
  stream::LayoutRequest r;
  r.dtype = options.dtype;
  r.shape = options.shape;
  r.tile_shape = options.chunk_shape;
  r.tiles_per_shard = options.chunks_per_shard.empty() ? std::vector<int64_t>(options.shape.size(), 1)
                                                       : options.chunks_per_shard;
  r.threads = threads;
  const ChunkSpec tile_spec{options.dtype, options.chunk_shape, p.metadata.fill_value};
  if (!options.chunks_per_shard.empty()) {
    const ShardingCodec* sharding = p.codecs.sharding();
    if (!sharding) return InvalidArgument("stream: sharded metadata without a sharding codec");
    p.tile_codecs = sharding->inner_codecs();
    r.index_bytes = static_cast<int64_t>(sharding->IndexEncodedSize(static_cast<size_t>(
        index::Product(static_cast<int>(r.tiles_per_shard.size()), r.tiles_per_shard.data()))));
  } else {
    p.tile_codecs = p.codecs;
  }
  r.max_compressed_tile_bytes = static_cast<int64_t>(p.tile_codecs.MaxEncodedSize(tile_spec).value_or(tile_spec.NumBytes() * 2));
  TESSERA_ASSIGN_OR_RETURN(p.layout, stream::PlanStreamLayout(r));
  return p;
}

}  // namespace

Result<stream::StreamLayout> PlanZarrStream(const zarr::ArrayOptions& options, int threads) {
  TESSERA_ASSIGN_OR_RETURN(Plan p, MakePlan(options, threads));
  return p.layout;
}

Result<ZarrSinkAndWriter> OpenZarrStream(std::shared_ptr<Store> store, const std::string& path,
                                  const zarr::ArrayOptions& options, const stream::StreamWriterOptions& writer_options) {
  const int threads = writer_options.threads > 0 ? writer_options.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(Plan p, MakePlan(options, threads));
  ZarrSinkAndWriter s;
  TESSERA_ASSIGN_OR_RETURN(s.sink, ZarrShardSink::Create(std::move(store), path, p.metadata, std::move(p.codecs)));
  Result<std::unique_ptr<stream::StreamWriter>> writer =
      stream::StreamWriter::Create(p.layout, stream::MakeTileEncoder(std::move(p.tile_codecs), p.layout, p.metadata.fill_value),
                           p.metadata.fill_value, s.sink.get(), writer_options);
  if (!writer.ok()) {
    (void)s.sink->RemoveMetadata();  // no backend, no stream: leave no zarr.json behind
    return writer.status();
  }
  s.writer = std::move(writer).value();
  return s;
}

Result<ZarrSinkAndWriter> OpenZarrAppendStream(std::shared_ptr<Store> store, const std::string& path,
                                               const zarr::ArrayOptions& options, int64_t first_row,
                                               int64_t stored_rows, const stream::StreamWriterOptions& writer_options) {
  const int threads = writer_options.threads > 0 ? writer_options.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(Plan p, MakePlan(options, threads));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<zarr::ZarrArray> existing, zarr::ZarrArray::Open(store, path));
  // What the stream stores must be what the array's zarr.json says: everything but the extent
  // and the descriptive members (attributes, dimension names, kept as stored).
  zarr::ArrayMetadata stored = existing->metadata();
  zarr::ArrayMetadata planned = p.metadata;
  planned.shape = stored.shape;
  planned.attributes = stored.attributes;
  planned.dimension_names = stored.dimension_names;
  const std::string key = path.empty() ? "zarr.json" : path + "/zarr.json";
  if (planned.ToJson() != stored.ToJson())
    return Unsupported(store->Describe(key) + ": its chunk grid, codecs or fill value are not what tessera writes for "
                       "its spec (" + stored.ToJson().dump() + "); continuing it would store other bytes");
  const int64_t shard_rows = options.chunk_shape[0] * (options.chunks_per_shard.empty() ? 1 : options.chunks_per_shard[0]);
  if (first_row % shard_rows != 0)
    return InvalidArgument(store->Describe(key) + ": a resumed stream starts at a shard row (" +
                           std::to_string(shard_rows) + " rows), not at row " + std::to_string(first_row));
  ZarrSinkAndWriter s;
  s.sink = ZarrShardSink::Attach(store, path, std::move(stored), std::move(p.codecs));
  s.region_sink = std::make_unique<stream::ResumedShardSink>(s.sink.get(), first_row / shard_rows, first_row, stored_rows);
  TESSERA_ASSIGN_OR_RETURN(s.writer, stream::StreamWriter::Create(
                                         p.layout, stream::MakeTileEncoder(std::move(p.tile_codecs), p.layout, p.metadata.fill_value),
                                         p.metadata.fill_value, s.region_sink.get(), writer_options));
  return s;
}

Result<ZarrSinkAndWriter> OpenZarrRegionStream(std::shared_ptr<Store> store, const std::string& path,
                                        const zarr::ArrayOptions& array, const zarr::ArrayOptions& region,
                                        std::vector<int64_t> shard_offset, const stream::StreamWriterOptions& writer_options) {
  const int threads = writer_options.threads > 0 ? writer_options.threads : DefaultThreadCount();
  TESSERA_ASSIGN_OR_RETURN(zarr::ArrayMetadata whole, zarr::BuildArrayMetadata(array));
  TESSERA_ASSIGN_OR_RETURN(Plan p, MakePlan(region, threads));
  // The region's chain serves the whole array: a region differs from it in shape only.
  if (whole.codecs != p.metadata.codecs || whole.chunk_shape != p.metadata.chunk_shape ||
      whole.dtype != p.metadata.dtype)
    return InvalidArgument("stream: a region must have its array's dtype, chunk shape and codecs");
  ZarrSinkAndWriter s;
  s.sink = ZarrShardSink::Attach(std::move(store), path, std::move(whole), std::move(p.codecs));
  s.region_sink = std::make_unique<stream::OffsetShardSink>(s.sink.get(), std::move(shard_offset));
  TESSERA_ASSIGN_OR_RETURN(
      s.writer, stream::StreamWriter::Create(p.layout, stream::MakeTileEncoder(std::move(p.tile_codecs), p.layout, p.metadata.fill_value),
                                     p.metadata.fill_value, s.region_sink.get(), writer_options));
  return s;
}

}  // namespace tessera::zarr
