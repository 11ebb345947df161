// Reading a selection of any chunked array (the generic hyperslab engine): reads any
// (start, stop, step) selection from any chunked source.
//
// Per dimension, the selection is projected onto the chunk grid (index::ForEachChunkProjection):
// which chunks it touches, which positions inside each and where they land in the output. The
// cross product of the per-dimension projections is the set of chunks to read; each chunk is read
// and decoded once (in parallel) and its selected elements are copied into the output as strided
// runs. Absent chunks produce the fill value. Only touched chunks are requested from the source.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/dtype.h"
#include "tessera/core/element_type.h"
#include "tessera/core/status.h"
#include "tessera/index/index.h"

namespace tessera {

// A numpy basic-indexing selection: one normalized slice per dimension; `dropped[d]` is true
// when the user gave an integer for dimension d (it selects one position and drops the axis).
struct Hyperslab {
  std::vector<index::DimSlice> dims;
  std::vector<bool> dropped;

  // The output shape (dropped dimensions removed).
  std::vector<int64_t> OutputShape() const;
  int64_t NumElements() const;
  static Hyperslab All(const std::vector<int64_t>& shape);
};

// Parses numpy basic indexing ("3, -1, 1:10:2, ::-1, :") against `shape`. Missing trailing
// entries select whole dimensions. Integers out of range, too many entries, step 0 and malformed
// text are errors (kOutOfRange / kInvalidArgument) that quote the expression.
Result<Hyperslab> ParseSliceExpression(std::string_view expr, const std::vector<int64_t>& shape);

// One read's worth of chunks from a source that fetches them in fewer requests than chunks (see
// ChunkSource::BeginBatch). Thread-safe; each chunk of the batch is read once.
class ChunkBatch {
 public:
  virtual ~ChunkBatch() = default;
  // As ChunkSource::ReadChunkPrefix, for a chunk of the batch.
  virtual Result<bool> ReadChunkPrefix(std::span<const int64_t> coords, size_t prefix_bytes, Bytes* out) = 0;
};

// Where decoded chunks come from. Implementations must be thread-safe.
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  virtual const std::vector<int64_t>& shape() const = 0;
  // The chunk grid reads are done on (for sharded Zarr: the inner chunks).
  virtual const std::vector<int64_t>& read_chunk_shape() const = 0;
  virtual DataType dtype() const = 0;
  virtual const FillValue& fill_value() const = 0;
  // Non-null for a source whose elements are no DataType: dtype() is then kUInt8 and the last
  // dimension of shape() and read_chunk_shape() holds the element's bytes (core/element_type.h).
  virtual std::shared_ptr<const ElementType> element_type() const { return nullptr; }
  // Decodes chunk `coords` into *out (resized to the full chunk's bytes, C order). Returns false
  // (leaving *out unspecified) when the chunk is not stored, i.e. holds the fill value.
  virtual Result<bool> ReadChunk(std::span<const int64_t> coords, Bytes* out) const = 0;
  // How many chunk reads to keep in flight (0: as many as there are cores); a source on an object
  // store asks for more, since its reads wait on the network.
  virtual int io_concurrency() const { return 0; }
  // Like ReadChunk, for a caller that needs only the first `prefix_bytes` of the decoded chunk
  // (C order): a source may stop decoding there, leaving the rest of *out (still sized to the
  // full chunk) unspecified. By default, ReadChunk.
  virtual Result<bool> ReadChunkPrefix(std::span<const int64_t> coords, size_t prefix_bytes, Bytes* out) const {
    (void)prefix_bytes;
    return ReadChunk(coords, out);
  }
  // Chunk `coords`'s bytes as stored (a copy into an array of the same chunk grid and codecs
  // stores them as they are), checked by decoding them into *decoded (so that nothing corrupt is
  // copied: an error names the chunk as ReadChunk's would); nullopt when the chunk is not stored.
  // kUnsupported where a source has no such bytes to give (the default).
  virtual Result<std::optional<Bytes>> ReadEncodedChunk(std::span<const int64_t> coords, Bytes* decoded) const {
    (void)coords;
    (void)decoded;
    return Unsupported("reading chunks as stored is not supported by this source");
  }
  // A read is about to ask once for each chunk of the cross product of `chunks` (per dimension,
  // the chunk indices it touches, ascending). A source on an object store may return a batch that
  // fetches them in coalesced requests (the byte ranges of nearby chunks of one shard together);
  // null (the default): each chunk is read alone.
  virtual std::unique_ptr<ChunkBatch> BeginBatch(std::span<const std::vector<int64_t>> chunks) const {
    (void)chunks;
    return nullptr;
  }
};

// Splits `selection` along its dimension 0 into pieces of at most ~`max_piece_bytes` of output
// each (never less than one chunk row), cut at chunk boundaries of `chunk0` (the read chunk
// extent along dimension 0) so no chunk is decoded for two pieces. Pieces are in output order;
// concatenated, their outputs are the selection's output. Rank-0 selections give one piece.
std::vector<Hyperslab> SplitIntoPieces(const Hyperslab& selection, int64_t chunk0, int64_t item_bytes,
                                       int64_t max_piece_bytes);

struct ReadOptions {
  int threads = 0;  // 0 = hardware threads, or more when the source's reads wait on a network
};

// Whether `selection` fits an array of `shape`: one entry per dimension, each slice's positions
// inside the dimension (checked without overflow), dropped dimensions selecting one position.
// kInvalidArgument for a malformed selection, kOutOfRange for one that leaves the array.
Status CheckSelection(const Hyperslab& selection, const std::vector<int64_t>& shape);

// Reads `selection` into `out`, which holds selection.NumElements() elements, C order over
// selection.OutputShape(). The selection is checked first (CheckSelection).
Status ReadHyperslab(const ChunkSource& source, const Hyperslab& selection, uint8_t* out,
                     const ReadOptions& options = {});

}  // namespace tessera
