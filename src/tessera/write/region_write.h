// Writing a selection of any chunked array (the generic region-write engine; the mirror of
// read/selection_read.h).
//
//   RegionTarget& target = ...;                       // a format's stored array, open for writing
//   PendingWrite w{selection, SourceView::Contiguous(values, selection, item)};
//   Status st = WriteSelections(target, {&w, 1});    // or many writes at once: a transaction
//
// Per dimension each selection is projected onto the write grid (index::ForEachChunkProjection),
// exactly as a read is; the chunks the writes touch are grouped by the stored object that holds
// them (a shard, or the chunk itself when unsharded). Per object, in parallel over objects:
//   - every touched chunk that some write covers wholly starts from the fill value and is not
//     read; when every chunk of the object is covered so, the object is not read at all;
//   - otherwise the object is read once (RegionTarget::Read: one GET with its generation), the
//     partly covered chunks are decoded, every write is applied in the order given, and each
//     chunk is encoded again (a chunk left holding only the fill value is dropped when the target
//     says so: zarr-python's write_empty_chunks=False);
//   - the object is written once (RegionTarget::Write), atomically and conditionally on the
//     generation read; a conflict (another writer changed it meanwhile) reads it again and
//     re-applies the writes, up to WriteOptions::max_attempts times, then fails naming the key.
// Untouched chunks of a rewritten object keep their encoded bytes. A failure leaves every object
// as it was or as written whole: never a torn object.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/core/limits.h"
#include "tessera/core/status.h"
#include "tessera/read/selection_read.h"

namespace tessera {

// The values a write stores: element k (over the selection's OutputShape, dropped dimensions
// removed) is at base + sum_d k_d * byte_strides[d]. Strides may be zero (numpy broadcasting) or
// negative. Elements are little-endian, of the target's dtype.
struct SourceView {
  const uint8_t* base = nullptr;
  int64_t byte_strides[kMaxRank] = {};

  // A C-order contiguous block of selection.OutputShape() elements of `item_bytes` each.
  static SourceView Contiguous(const void* values, const Hyperslab& selection, size_t item_bytes);
};

struct PendingWrite {
  Hyperslab selection;  // one entry per dimension of the target, each inside its shape
  SourceView values;
};

// One stored object (a shard, or an unsharded chunk) as read: its generation and its chunks'
// encoded bytes. Format-specific: only the target that read it interprets it.
class StoredObject {
 public:
  virtual ~StoredObject() = default;
  // False when the key did not exist (every chunk of it then holds the fill value).
  virtual bool exists() const = 0;
};

// What the engine writes for one chunk of an object: its new encoding, or nullopt to remove it
// (the chunk holds only the fill value).
struct ChunkUpdate {
  std::vector<int64_t> chunk;  // write-grid coordinates
  std::optional<Bytes> encoded;
};

// A format's stored array as the engine sees it. Thread-safe: the engine calls it for several
// objects at once (never Read or Write of one object from two threads within one
// WriteSelections call; DecodeChunk and EncodeChunk of different chunks of one object may run on
// several threads at once, as they only read the object); an
// Array opened r+ runs several WriteSelections on one target at once (writes from many threads),
// so two threads may then read and write one object together: the conditional Write makes one
// of them retry.
class RegionTarget {
 public:
  virtual ~RegionTarget() = default;
  virtual const std::vector<int64_t>& shape() const = 0;
  // The write grid: the chunks that are encoded one by one (Zarr sharded: the inner chunks).
  virtual const std::vector<int64_t>& chunk_shape() const = 0;
  virtual DataType dtype() const = 0;
  virtual const FillValue& fill_value() const = 0;
  // Whether a chunk left holding only the fill value is removed rather than stored.
  virtual bool drops_fill_chunks() const = 0;
  // The key of the stored object that holds chunk `chunk` (a shard, or the chunk's own key).
  virtual std::string ObjectOf(std::span<const int64_t> chunk) const = 0;
  // How many chunks of the array live in object `key` (so a write covering them all skips the read).
  virtual int64_t ChunksInObject(const std::string& key) const = 0;
  // Reads object `key` whole, once (its generation too, for the conditional write).
  virtual Result<std::unique_ptr<StoredObject>> Read(const std::string& key) const = 0;
  // Decodes chunk `chunk` of `object` into *out: the full chunk box, C order, padded with the fill
  // value past the array's edge. False (leaving *out unspecified) when the chunk is not stored.
  // Errors name the key and the byte range.
  virtual Result<bool> DecodeChunk(const StoredObject& object, std::span<const int64_t> chunk, Bytes* out) const = 0;
  // Encodes the full chunk box `decoded` (C order) of chunk `chunk`.
  virtual Result<Bytes> EncodeChunk(std::span<const int64_t> chunk, ByteView decoded) const = 0;
  // Rewrites object `key`: the chunks of `base` (null: the object was not read, `updates` hold all
  // of its chunks) with `updates` applied; an object left with no chunk is removed. Atomic, and
  // conditional on `base`'s generation (absent: the key must still not exist). Returns false,
  // having written nothing, on a conflict.
  virtual Result<bool> Write(const std::string& key, const StoredObject* base, std::span<const ChunkUpdate> updates) = 0;
  // Changes the array's shape (resize) and publishes it: the elements outside the new shape are
  // cleared to the fill value first (so growing again shows the fill value, not old data), objects
  // wholly outside are removed, then the metadata is rewritten. kUnsupported naming the reason
  // where the format cannot (a sharded precomputed volume whose shard layout depends on its size).
  virtual Status Resize(const std::vector<int64_t>& shape) = 0;
  // How many objects to rewrite at once: 0 for as many as there are cores (local stores); more
  // where a read or write waits on the network.
  virtual int io_concurrency() const { return 0; }
};

// What a WriteSelections call stored (added to, so that one may count many calls; thread-safe
// only per call).
struct WriteStatistics {
  int64_t objects_written = 0;  // objects stored (not those erased as all fill)
  int64_t chunk_bytes = 0;      // encoded bytes of the chunks stored
};

struct WriteOptions {
  // Objects rewritten at once (with fewer objects than threads, their chunks are merged and
  // encoded at once); 0: hardware threads, or the target's io_concurrency when larger.
  int threads = 0;
  // Threads merging and encoding one object's chunks; 0: about twice the cores over the objects
  // rewritten at once. 1 with threads 1: the whole call on the calling thread (a copy's workers).
  int chunk_threads = 0;
  int max_attempts = 16;  // reads and writes of one object before a conflict is an error
  WriteStatistics* statistics = nullptr;  // added to when set
};

// Writes `writes` in order (a later write wins where two overlap): each touched object is read at
// most once and written once (per attempt). Checks every selection against the target's shape
// first (kOutOfRange) and writes nothing if one is outside. An object still conflicting after
// max_attempts is kIo: "gave up after N conflicting writes to KEY". Objects are independent: when
// one fails, others may already be written (each whole).
Status WriteSelections(RegionTarget& target, std::span<const PendingWrite> writes, const WriteOptions& options = {});

}  // namespace tessera
