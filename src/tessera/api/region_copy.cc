#include "tessera/api/region_copy.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "tessera/api/create_mode.h"
#include "tessera/api/driver_registry.h"
#include "tessera/api/shared_write.h"
#include "tessera/core/text.h"
#include "tessera/index/chunk_grid.h"
#include "tessera/index/index.h"

namespace tessera::api_internal {
namespace {

// A region at least this large where one shard is smaller (fewer, larger reads and writes), as
// long as it stays whole shards.
constexpr int64_t kRegionBytes = int64_t{16} << 20;

std::string Mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

int64_t BoxBytes(const std::vector<int64_t>& box, DataType dtype) {
  return index::Product(static_cast<int>(box.size()), box.data()) * static_cast<int64_t>(ItemSize(dtype));
}

int Workers(const Resolved& r, int64_t regions) {
  return static_cast<int>(std::clamp<int64_t>(regions, 1, std::max(1, r.threads)));
}

// Whether `source`'s chunks go into the array `r` resolves to as they are stored: the same format,
// dtype, fill value, shape, chunk grid and chunk codecs.
bool CopiesChunksAsStored(const Array& source, const Resolved& r) {
  if (source.format() != r.format || source.dtype() != r.spec.dtype || source.shape() != r.spec.shape) return false;
  if (source.chunk_shape() != r.spec.chunk_shape) return false;
  Result<FillValue> fill =
      r.spec.fill_value.is_null() ? ZeroFill(r.spec.dtype) : ParseFillValue(r.spec.dtype, r.spec.fill_value);
  if (!fill.ok() || fill->bytes != source.fill_value().bytes) return false;
  const driver::FormatDriver& d = DriverOf(r.format);
  const nlohmann::json codecs = d.ChunkCodecsOfSpec(r.spec);
  return !codecs.is_null() && d.ChunkCodecs(source.metadata()) == codecs;
}

// Writes the region [origin, origin + extent) of `target` (whole objects) from `source`'s chunks
// as stored: each object once, its chunks decoded only to check them, none encoded.
Status CopyStoredChunks(const ChunkSource& source, RegionTarget& target, const int64_t* origin, const int64_t* extent,
                        WriteStatistics* stats) {
  const std::vector<int64_t>& chunk = target.chunk_shape();
  const int rank = static_cast<int>(chunk.size());
  int64_t first[kMaxRank], count[kMaxRank], which[kMaxRank];
  for (int d = 0; d < rank; ++d) {
    first[d] = origin[d] / chunk[d];
    count[d] = index::CeilDiv(origin[d] + extent[d], chunk[d]) - first[d];
  }
  Bytes decoded;  // each chunk decoded to check it, not kept
  std::vector<std::string> keys;  // the region's objects, in order of first touch
  std::vector<std::vector<ChunkUpdate>> updates;
  std::unordered_map<std::string, size_t> object_of;
  for (int64_t i = 0, n = index::Product(rank, count); i < n; ++i) {
    index::Unravel(rank, count, i, which);
    std::vector<int64_t> coords(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) coords[d] = first[d] + which[d];
    auto [it, added] = object_of.try_emplace(target.ObjectOf(coords), keys.size());
    if (added) {
      keys.push_back(it->first);
      updates.emplace_back();
    }
    TESSERA_ASSIGN_OR_RETURN(std::optional<Bytes> stored, source.ReadEncodedChunk(coords, &decoded));
    updates[it->second].push_back(ChunkUpdate{std::move(coords), std::move(stored)});
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    TESSERA_RETURN_IF_ERROR(target.Write(keys[k], nullptr, updates[k]).status());
    int64_t bytes = 0;
    for (const ChunkUpdate& u : updates[k]) bytes += u.encoded ? static_cast<int64_t>(u.encoded->size()) : 0;
    stats->objects_written += bytes > 0 ? 1 : 0;
    stats->chunk_bytes += bytes;
  }
  return Status::Ok();
}

}  // namespace

bool CopiesByRegions(const Resolved& r, const StreamOptions& options) {
  if (options.discard || options.backend != stream::Backend::kCpu) return false;
  if (options.mode != Mode::kCreate && options.mode != Mode::kOverwrite) return false;
  if (r.format != Format::kZarr3 && r.format != Format::kPrecomputed) return false;
  if (r.spec.multiscale() || r.spec.shape.empty() || r.spec.shape[0] == 0) return false;
  // A murmurhash3 shard holds chunks from all over the volume: no region holds it whole.
  if (r.format == Format::kPrecomputed && !r.spec.shard_chunks.empty() && r.spec.precomputed.hash != "identity")
    return false;
  return true;
}

Result<std::vector<int64_t>> CopyRegionShape(const Resolved& r) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> region, LevelShardShape(r.spec, r.format, 0));
  const std::vector<int64_t>& shape = r.spec.shape;
  // Whole shards more along the last dimensions first (C order: contiguous in the source's rows).
  for (int d = static_cast<int>(shape.size()) - 1; d >= 1; --d) {
    const int64_t shard = region[d];
    while (BoxBytes(region, r.spec.dtype) < kRegionBytes && region[d] < shape[d]) region[d] += shard;
    if (BoxBytes(region, r.spec.dtype) >= kRegionBytes) break;
  }
  return region;
}

Result<std::string> PlanRegionCopy(const Array& source, const Resolved& r) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> region, CopyRegionShape(r));
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> shard, LevelShardShape(r.spec, r.format, 0));
  const index::ChunkGrid grid(r.spec.shape, region);
  const int workers = Workers(r, grid.ChunkCount());
  const int64_t bytes = BoxBytes(region, r.spec.dtype), chunk = BoxBytes(r.spec.chunk_shape, r.spec.dtype);
  const int64_t source_chunk = BoxBytes(source.chunk_shape(), source.dtype());
  // Per worker: the region's values, a source chunk being decoded into them, the encoded objects
  // (at most about as large as the values), one destination chunk being encoded.
  std::string text = "copy by regions: " + std::to_string(grid.ChunkCount()) + " regions of " + JoinIntegers(region) +
                     " (" + Mib(bytes) + "; whole shards of " + JoinIntegers(shard) + "), " + std::to_string(workers) +
                     " workers, each ";
  int64_t per_worker;
  if (CopiesChunksAsStored(source, r)) {
    // The region's chunks as stored (at most about as large as its values), one decoded.
    per_worker = bytes + chunk;
    text += "copying its chunks as stored (the same chunk grid and codecs: each decoded to check it, none encoded)\n";
    text += "  per worker:             " + Mib(per_worker) + " (the region's chunks as stored, a chunk " + Mib(chunk) + ")\n";
  } else {
    per_worker = 2 * bytes + source_chunk + chunk;
    text += "reading its region and encoding its objects\n";
    text += "  per worker:             " + Mib(per_worker) + " (the region's values and encoded objects, a source chunk " +
            Mib(source_chunk) + ", a chunk " + Mib(chunk) + ")\n";
  }
  text += "  planned peak:           " + Mib(workers * per_worker) + "\n";
  return text;
}

Result<StreamStatistics> CopyByRegions(const Array& source, const Resolved& r, const StreamOptions& options,
                                       const CopyOptions& copy) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int64_t>& shape = r.spec.shape;
  const std::string what = "copying " + source.location().ToString();
  if (source.element_type())
    return InvalidArgument(what + ": its elements are " + source.element_type()->description + ", which no format writes");
  if (source.dtype() != r.spec.dtype || source.shape() != shape)
    return InvalidArgument(what + ": the destination is " + std::string(DataTypeName(r.spec.dtype)) + " " +
                           JoinIntegers(shape) + ", the source " + std::string(DataTypeName(source.dtype())) + " " +
                           JoinIntegers(source.shape()) + " (conversion does not change them)");
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> region_shape, CopyRegionShape(r));
  TESSERA_RETURN_IF_ERROR(PrepareToCreate(r.location, r.format, options.mode));
  TESSERA_ASSIGN_OR_RETURN(driver::CopyTarget target, DriverOf(r.format).OpenCopyTarget(r.spec, r.location));
  TESSERA_RETURN_IF_ERROR(target.publish_rows(0));

  const bool as_stored = CopiesChunksAsStored(source, r);
  const std::shared_ptr<const ChunkSource> chunks = source.source();
  const index::ChunkGrid grid(shape, region_shape);
  const int64_t regions = grid.ChunkCount(), bands = grid.chunk_count[0];
  const int64_t per_band = bands > 0 ? regions / bands : 0;
  const int workers = Workers(r, regions);
  const size_t item = ItemSize(r.spec.dtype);
  int64_t total_bytes = static_cast<int64_t>(item);
  for (int64_t v : shape) total_bytes *= v;

  std::mutex mu;
  std::condition_variable changed;
  std::vector<int64_t> done_in_band(static_cast<size_t>(bands), 0);
  int64_t published_bands = 0, bytes_done = 0, workers_left = workers;
  Status failure;  // the first error (its region's), under mu
  WriteStatistics written;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};

  auto work = [&] {
    Bytes values;
    WriteStatistics mine;
    for (;;) {
      const int64_t i = next.fetch_add(1);
      if (i >= regions || failed.load()) break;
      int64_t at[kMaxRank], origin[kMaxRank], extent[kMaxRank];
      grid.Unravel(i, at);
      grid.ChunkBox(at, origin, extent);
      Hyperslab box = Hyperslab::All(shape);
      for (size_t d = 0; d < shape.size(); ++d) box.dims[d] = {origin[d], 1, extent[d]};
      const int64_t bytes = box.NumElements() * static_cast<int64_t>(item);
      Status st;
      if (as_stored) {
        st = CopyStoredChunks(*chunks, *target.target, origin, extent, &mine);
      } else {
        values.resize(static_cast<size_t>(bytes));
        ReadOptions read;
        read.threads = 1;
        st = source.Read(box, values.data(), read);
      }
      if (st.ok() && !as_stored) {
        WriteOptions write;
        write.threads = 1;
        write.chunk_threads = 1;
        write.statistics = &mine;
        PendingWrite w{box, SourceView::Contiguous(values.data(), box, item)};
        st = WriteSelections(*target.target, {&w, 1}, write);
      }
      std::lock_guard<std::mutex> lock(mu);
      if (!st.ok()) {
        if (failure.ok()) {
          std::vector<int64_t> o(origin, origin + shape.size()), e(extent, extent + shape.size());
          failure = st.WithContext(what + " (region at " + JoinIntegers(o) + " of shape " + JoinIntegers(e) + ")");
        }
        failed.store(true);
        break;
      }
      bytes_done += bytes;
      ++done_in_band[static_cast<size_t>(at[0])];
      // The rows of every band stored whole, and of all bands before it, are published in order.
      int64_t bands_whole = published_bands;
      while (bands_whole < bands && done_in_band[static_cast<size_t>(bands_whole)] == per_band) ++bands_whole;
      if (bands_whole > published_bands) {
        const int64_t rows = std::min(shape[0], bands_whole * region_shape[0]);
        Status published = target.publish_rows(rows);
        if (!published.ok()) {
          if (failure.ok()) failure = published.WithContext(what + " (publishing " + std::to_string(rows) + " rows)");
          failed.store(true);
          break;
        }
        published_bands = bands_whole;
      }
      changed.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu);
    written.objects_written += mine.objects_written;
    written.chunk_bytes += mine.chunk_bytes;
    --workers_left;
    changed.notify_all();
  };
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w) pool.emplace_back(work);
  {
    // The caller's thread reports progress as regions complete.
    std::unique_lock<std::mutex> lock(mu);
    int64_t reported = -1;
    while (workers_left > 0) {
      changed.wait(lock);
      if (copy.progress && bytes_done != reported && failure.ok()) {
        reported = bytes_done;
        CopyProgress p;
        p.bytes_done = bytes_done;
        p.bytes_total = total_bytes;
        p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        lock.unlock();
        copy.progress(p);
        lock.lock();
      }
    }
  }
  for (std::thread& t : pool) t.join();
  if (!failure.ok()) return failure;
  // An array of no elements has no regions: its rows are published at the end.
  if (published_bands < bands) TESSERA_RETURN_IF_ERROR(target.publish_rows(shape[0]));
  StreamStatistics stats;
  stats.bytes_in = total_bytes;
  stats.bytes_out = written.chunk_bytes;
  stats.rows_published = shape[0];
  stats.shards_written = written.objects_written;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace tessera::api_internal
