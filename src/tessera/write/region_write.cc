#include "tessera/write/region_write.h"

#include <algorithm>
#include <atomic>
#include <array>
#include <chrono>
#include <random>
#include <thread>
#include <unordered_map>

#include "tessera/core/parallel.h"
#include "tessera/core/text.h"
#include "tessera/index/index.h"
#include "tessera/index/strided_copy.h"

namespace tessera {

SourceView SourceView::Contiguous(const void* values, const Hyperslab& selection, size_t item_bytes) {
  SourceView v;
  v.base = static_cast<const uint8_t*>(values);
  const std::vector<int64_t> shape = selection.OutputShape();
  int64_t stride = static_cast<int64_t>(item_bytes);
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    v.byte_strides[d] = stride;
    stride *= shape[d];
  }
  return v;
}

namespace {

// One write projected onto the write grid: per dimension, the chunks it touches (ascending chunk
// order, as ForEachChunkProjection gives them), and the source's byte stride along each target
// dimension (0 for a dropped dimension, which has no source axis).
struct ProjectedWrite {
  const PendingWrite* write = nullptr;
  std::vector<std::vector<index::ChunkProjection>> dims;
  int64_t source_strides[kMaxRank] = {};

  // The projection of dimension d onto chunk c, or null when the write does not touch it.
  const index::ChunkProjection* Find(int d, int64_t c) const {
    const auto& v = dims[d];
    auto it = std::lower_bound(v.begin(), v.end(), c,
                               [](const index::ChunkProjection& p, int64_t chunk) { return p.chunk < chunk; });
    return it != v.end() && it->chunk == c ? &*it : nullptr;
  }
};

// A write's part in one chunk: its projection per dimension.
struct ChunkPart {
  const ProjectedWrite* write = nullptr;
  std::array<const index::ChunkProjection*, kMaxRank> dims{};
};

struct TouchedChunk {
  std::vector<int64_t> coords;
  bool wholly_covered = false;  // some write selects every position of the chunk inside the array
  std::vector<ChunkPart> parts;  // in the order the writes were given
};

// The chunks of one stored object that the writes touch.
struct TouchedObject {
  std::string key;
  std::vector<std::vector<int64_t>> chunks;
  std::vector<size_t> writes;  // the projected writes touching it, in their order
};

// The grid geometry the engine needs, in bytes.
struct Geometry {
  int rank = 0;
  int64_t item = 0;
  std::vector<int64_t> shape, chunk_shape;
  int64_t chunk_strides[kMaxRank] = {};  // bytes, C order over the full chunk box
  int64_t chunk_bytes = 0;
};

// Copies write `part` into the decoded chunk `chunk` (full box, C order).
void ApplyPart(const Geometry& g, const ChunkPart& part, uint8_t* chunk) {
  int64_t count[kMaxRank], src_strides[kMaxRank], dst_strides[kMaxRank];
  int64_t src_off = 0, dst_off = 0;
  for (int d = 0; d < g.rank; ++d) {
    const index::ChunkProjection& p = *part.dims[d];
    count[d] = p.count;
    dst_off += p.in_first * g.chunk_strides[d];
    src_off += p.out_first * part.write->source_strides[d];
    // One position in a chunk may have any step; its stride is never used (and might overflow).
    dst_strides[d] = p.count > 1 ? p.in_step * g.chunk_strides[d] : 0;
    src_strides[d] = p.count > 1 ? p.out_step * part.write->source_strides[d] : 0;
  }
  index::CopyStrided(g.rank, count, part.write->write->values.base + src_off, src_strides, chunk + dst_off,
                     dst_strides, static_cast<size_t>(g.item));
}

// Per chunk of `object`: which writes touch it and whether one covers it wholly.
std::vector<TouchedChunk> CollectParts(const Geometry& g, const std::vector<ProjectedWrite>& writes,
                                       const TouchedObject& object) {
  std::vector<TouchedChunk> out;
  out.reserve(object.chunks.size());
  for (const std::vector<int64_t>& coords : object.chunks) {
    TouchedChunk chunk{coords, false, {}};
    for (size_t j : object.writes) {
      const ProjectedWrite& w = writes[j];
      ChunkPart part{&w, {}};
      bool touches = true, covers = true;
      for (int d = 0; d < g.rank && touches; ++d) {
        part.dims[d] = w.Find(d, coords[d]);
        if (!part.dims[d]) {
          touches = false;
          break;
        }
        const int64_t origin = coords[d] * g.chunk_shape[d];
        const int64_t inside = std::min(g.chunk_shape[d], g.shape[d] - origin);
        // The positions a projection selects are distinct, so as many of them as the clipped box
        // holds are all of it.
        if (part.dims[d]->count != inside) covers = false;
      }
      if (!touches) continue;
      chunk.wholly_covered = chunk.wholly_covered || covers;
      chunk.parts.push_back(part);
    }
    out.push_back(std::move(chunk));
  }
  return out;
}

// Whether no part of `chunk`'s box lies past the array's end (an edge chunk's padding holds the
// fill value, which no write sets).
bool InsideTheArray(const Geometry& g, const TouchedChunk& chunk) {
  for (int d = 0; d < g.rank; ++d)
    if ((chunk.coords[d] + 1) * g.chunk_shape[d] > g.shape[d]) return false;
  return true;
}

// The values of a chunk that one write covers wholly when they already lie in memory as the
// decoded chunk (C order over the whole chunk box, none of it past the array's end): a copy's
// region made of whole chunks. Empty otherwise.
ByteView ValuesAsChunk(const Geometry& g, const TouchedChunk& chunk) {
  if (!chunk.wholly_covered || chunk.parts.size() != 1 || !InsideTheArray(g, chunk)) return {};
  const ChunkPart& part = chunk.parts[0];
  int64_t src_off = 0;
  for (int d = 0; d < g.rank; ++d) {
    const index::ChunkProjection& p = *part.dims[d];
    if (p.in_first != 0 || p.count != g.chunk_shape[d]) return {};
    if (p.count > 1 && (p.in_step != 1 || p.out_step * part.write->source_strides[d] != g.chunk_strides[d])) return {};
    src_off += p.out_first * part.write->source_strides[d];
  }
  return ByteView(part.write->write->values.base + src_off, static_cast<size_t>(g.chunk_bytes));
}

// The new encoding of one touched chunk: decoded from `base` (unless some write covers it wholly
// or it is not stored), every write applied in order, encoded (nullopt: dropped as all fill).
// `scratch` holds the decoded chunk; a chunk whose values lie in memory as it is encoded from them.
Result<ChunkUpdate> MergeChunk(const RegionTarget& target, const Geometry& g, const TouchedChunk& chunk,
                               const StoredObject* base, const std::string& key, const Bytes& fill_chunk,
                               Bytes& scratch) {
  if (const ByteView values = ValuesAsChunk(g, chunk); !values.empty()) {
    ChunkUpdate update{chunk.coords, std::nullopt};
    if (!target.drops_fill_chunks() || !IsAllFill(values, target.fill_value())) {
      TESSERA_ASSIGN_OR_RETURN(Bytes encoded, target.EncodeChunk(chunk.coords, values));
      update.encoded = std::move(encoded);
    }
    return update;
  }
  bool decoded = false;
  if (!chunk.wholly_covered && base && base->exists()) {
    TESSERA_ASSIGN_OR_RETURN(decoded, target.DecodeChunk(*base, chunk.coords, &scratch));
    if (decoded && static_cast<int64_t>(scratch.size()) != g.chunk_bytes)
      return CorruptData(key + ": chunk (" + JoinIntegers(chunk.coords, ", ") + ") decodes to " +
                         std::to_string(scratch.size()) + " bytes, expected " + std::to_string(g.chunk_bytes));
  }
  if (!decoded) {
    // A chunk some write covers wholly, inside the array, takes every element from the writes.
    if (chunk.wholly_covered && InsideTheArray(g, chunk)) {
      scratch.resize(fill_chunk.size());
    } else {
      scratch = fill_chunk;
    }
  }
  for (const ChunkPart& part : chunk.parts) ApplyPart(g, part, scratch.data());
  ChunkUpdate update{chunk.coords, std::nullopt};
  if (!target.drops_fill_chunks() || !IsAllFill(scratch, target.fill_value())) {
    TESSERA_ASSIGN_OR_RETURN(Bytes encoded, target.EncodeChunk(chunk.coords, scratch));
    update.encoded = std::move(encoded);
  }
  return update;
}

// Waits before the next attempt at an object another writer just changed: a random time up to
// 1 ms * 2^attempt (at most 256 ms; "full jitter"), so writers that keep colliding on one shard
// spread out instead of retrying in lockstep until they run out of attempts.
void BackOffAfterConflict(int attempt) {
  thread_local std::minstd_rand rng(std::random_device{}());
  const int64_t ceiling_us = int64_t{1000} << std::min(attempt, 8);
  std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int64_t>(0, ceiling_us)(rng)));
}

// Reads (unless every chunk of it is covered), merges and conditionally rewrites one object,
// retrying on conflicts. Its chunks are merged on `threads` threads, each holding one decoded
// chunk at a time.
Status RewriteObject(RegionTarget& target, const Geometry& g, const std::vector<ProjectedWrite>& writes,
                     const TouchedObject& object, const Bytes& fill_chunk, int max_attempts, int threads,
                     std::atomic<int64_t>* objects_written, std::atomic<int64_t>* chunk_bytes) {
  const std::vector<TouchedChunk> chunks = CollectParts(g, writes, object);
  const bool whole_object =
      static_cast<int64_t>(chunks.size()) == target.ChunksInObject(object.key) &&
      std::all_of(chunks.begin(), chunks.end(), [](const TouchedChunk& c) { return c.wholly_covered; });
  threads = static_cast<int>(std::clamp<int64_t>(static_cast<int64_t>(chunks.size()), 1, threads));
  std::vector<Bytes> scratch(static_cast<size_t>(threads));
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    std::unique_ptr<StoredObject> base;
    if (!whole_object) {
      TESSERA_ASSIGN_OR_RETURN(base, target.Read(object.key));
    }
    std::vector<ChunkUpdate> updates(chunks.size());
    TESSERA_RETURN_IF_ERROR(ParallelFor(static_cast<int64_t>(chunks.size()), threads, [&](int64_t i, int worker) {
      const size_t c = static_cast<size_t>(i);
      Result<ChunkUpdate> update =
          MergeChunk(target, g, chunks[c], base.get(), object.key, fill_chunk, scratch[static_cast<size_t>(worker)]);
      if (!update.ok()) return update.status();
      updates[c] = std::move(update).value();
      return Status::Ok();
    }));
    TESSERA_ASSIGN_OR_RETURN(bool written, target.Write(object.key, base.get(), updates));
    if (written) {
      int64_t bytes = 0;
      for (const ChunkUpdate& u : updates) bytes += u.encoded ? static_cast<int64_t>(u.encoded->size()) : 0;
      if (bytes > 0) ++*objects_written;
      *chunk_bytes += bytes;
      return Status::Ok();
    }
    if (attempt + 1 < max_attempts) BackOffAfterConflict(attempt);
  }
  return IoError("gave up after " + std::to_string(max_attempts) + " conflicting writes to " + object.key +
                 " (another writer kept changing it)");
}

}  // namespace

Status WriteSelections(RegionTarget& target, std::span<const PendingWrite> writes, const WriteOptions& options) {
  Geometry g;
  g.shape = target.shape();
  g.chunk_shape = target.chunk_shape();
  g.rank = static_cast<int>(g.shape.size());
  g.item = static_cast<int64_t>(ItemSize(target.dtype()));
  if (static_cast<int>(g.chunk_shape.size()) != g.rank)
    return InvalidArgument("region write: chunk shape of rank " + std::to_string(g.chunk_shape.size()) +
                           " for an array of rank " + std::to_string(g.rank));
  if (options.max_attempts < 1)
    return InvalidArgument("region write: max_attempts is " + std::to_string(options.max_attempts) +
                           ", must be at least 1");
  // Every selection is checked before anything is written.
  for (size_t i = 0; i < writes.size(); ++i) {
    const Hyperslab& s = writes[i].selection;
    if (Status st = CheckSelection(s, g.shape); !st.ok())
      return st.WithContext("region write " + std::to_string(i));
    if (s.NumElements() > 0 && writes[i].values.base == nullptr)
      return InvalidArgument("region write " + std::to_string(i) + ": no values for " +
                             std::to_string(s.NumElements()) + " elements");
  }
  index::RowMajorStrides(g.rank, g.chunk_shape.data(), g.chunk_strides);
  for (int d = 0; d < g.rank; ++d) g.chunk_strides[d] *= g.item;
  g.chunk_bytes = index::Product(g.rank, g.chunk_shape.data()) * g.item;

  std::vector<ProjectedWrite> projected;
  projected.reserve(writes.size());
  for (const PendingWrite& w : writes) {
    if (w.selection.NumElements() == 0) continue;
    ProjectedWrite p;
    p.write = &w;
    p.dims.resize(g.rank);
    int source_axis = 0;
    for (int d = 0; d < g.rank; ++d) {
      index::ForEachChunkProjection(w.selection.dims[d], g.chunk_shape[d],
                                    [&](const index::ChunkProjection& c) { p.dims[d].push_back(c); });
      p.source_strides[d] = w.selection.dropped[d] ? 0 : w.values.byte_strides[source_axis++];
    }
    projected.push_back(std::move(p));
  }
  if (projected.empty()) return Status::Ok();

  // The touched chunks, grouped by the object that holds them (objects in order of first touch).
  std::vector<TouchedObject> objects;
  std::unordered_map<std::string, size_t> object_index;
  for (size_t j = 0; j < projected.size(); ++j) {
    const ProjectedWrite& w = projected[j];
    int64_t counts[kMaxRank], which[kMaxRank];
    for (int d = 0; d < g.rank; ++d) counts[d] = static_cast<int64_t>(w.dims[d].size());
    const int64_t total = index::Product(g.rank, counts);
    std::vector<int64_t> coords(g.rank);
    for (int64_t i = 0; i < total; ++i) {
      index::Unravel(g.rank, counts, i, which);
      for (int d = 0; d < g.rank; ++d) coords[d] = w.dims[d][which[d]].chunk;
      std::string key = target.ObjectOf(coords);
      auto [it, inserted] = object_index.try_emplace(key, objects.size());
      if (inserted) objects.push_back(TouchedObject{std::move(key), {}, {}});
      TouchedObject& o = objects[it->second];
      o.chunks.push_back(coords);
      if (o.writes.empty() || o.writes.back() != j) o.writes.push_back(j);
    }
  }
  for (TouchedObject& o : objects) {
    std::sort(o.chunks.begin(), o.chunks.end());
    o.chunks.erase(std::unique(o.chunks.begin(), o.chunks.end()), o.chunks.end());
  }

  Bytes fill_chunk(static_cast<size_t>(g.chunk_bytes));
  FillElements(fill_chunk.data(), static_cast<size_t>(g.chunk_bytes / std::max<int64_t>(g.item, 1)),
               target.fill_value());
  int threads = options.threads > 0 ? options.threads : std::max(DefaultThreadCount(), target.io_concurrency());
  // Objects on as many threads as there are objects (at most `threads`), and each object's chunks
  // merged on threads of its own, so that about twice the cores are busy in all: while one
  // object's thread reads or writes its file, or when a few objects are left for more cores (a
  // block touching 3 shards on 2 cores), the cores still have chunks to encode. Measured on 2 cores,
  // 256 non-aligned 64^3 blocks into 128^3 shards, one call each: 2.98 s with one thread per object,
  // 2.45 s so.
  const int64_t object_count = static_cast<int64_t>(objects.size());
  const int object_threads = static_cast<int>(std::clamp<int64_t>(object_count, 1, threads));
  const int cpu = DefaultThreadCount();
  const int chunk_threads =
      options.chunk_threads > 0 ? options.chunk_threads : std::max(1, (2 * cpu + object_threads - 1) / object_threads);
  std::atomic<int64_t> objects_written{0}, chunk_bytes{0};
  const Status st = ParallelFor(object_count, object_threads, [&](int64_t i, int) {
    return RewriteObject(target, g, projected, objects[static_cast<size_t>(i)], fill_chunk, options.max_attempts,
                         chunk_threads, &objects_written, &chunk_bytes);
  });
  if (options.statistics) {
    options.statistics->objects_written += objects_written.load();
    options.statistics->chunk_bytes += chunk_bytes.load();
  }
  return st;
}

}  // namespace tessera
