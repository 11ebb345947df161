// Pure encode/decode of neuroglancer_uint64_sharded_v1 shard files (no I/O):
//
//   shard file = shard index | per minishard: chunk data ..., minishard index
//   shard index     = 2**minishard_bits x (start u64le, end u64le): the minishard index's byte
//                     range, relative to the end of the shard index; start == end: empty minishard
//   minishard index = (after minishard_index_encoding) [3, n] u64le, C order:
//                     row 0: chunk ids, delta encoded (id_i = id_{i-1} + row0[i])
//                     row 1: data starts, delta encoded from the end of the previous chunk
//                            (start_0 = shard_index_end + row1[0],
//                             start_i = start_{i-1} + size_{i-1} + row1[i])
//                     row 2: data sizes
// Chunk data is stored encoded with data_encoding (raw or gzip).
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"
#include "tessera/precomputed/sharding_spec.h"

namespace tessera::precomputed {

// Where one chunk's (encoded) data lies in its shard file: absolute byte range [begin, end).
struct ChunkEntry {
  uint64_t chunk_id = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
  bool operator==(const ChunkEntry&) const = default;
};

// A shard file as its pieces in file order: the shard index, then per minishard its chunks' data
// and its minishard index. `parts` view `owned` (the indices, data encoded here) and, for data
// given already encoded, the caller's chunk bytes, which must outlive them. For writing a shard
// from its pieces (WritableStore::SetParts) without concatenating them first.
struct ShardPieces {
  std::deque<Bytes> owned;
  std::vector<ByteView> parts;
  uint64_t size() const;
};

// Builds the shard file holding `chunks` (id, data). Ids must be distinct; chunks whose id does not
// map to one shard are an error. Deterministic: minishards ascending, chunks by id. The data is
// encoded with spec.data_encoding here unless `data_encoded` says the caller already did it.
Result<ShardPieces> AssembleShard(const ShardingSpec& spec, std::vector<std::pair<uint64_t, ByteView>> chunks,
                                  bool data_encoded = false);
// The same, concatenated.
Result<Bytes> EncodeShard(const ShardingSpec& spec, std::vector<std::pair<uint64_t, ByteView>> chunks,
                          bool data_encoded = false);

// Encodes / decodes a minishard index (before / after minishard_index_encoding). Entries are in
// stored order; offsets are absolute within the shard file.
Bytes EncodeMinishardIndex(std::span<const ChunkEntry> entries, uint64_t shard_index_bytes);
// `where` names the file and byte range for errors (kCorruptData): a size that is not a multiple
// of 24, offsets that overflow or reach past `file_size`.
Result<std::vector<ChunkEntry>> DecodeMinishardIndex(ByteView decoded, uint64_t shard_index_bytes, uint64_t file_size,
                                                     const std::string& where);

// The absolute byte range of minishard `minishard`'s index, read from the shard index (the first
// spec.ShardIndexBytes() bytes of the file). An empty range means an empty minishard.
Result<std::pair<uint64_t, uint64_t>> MinishardIndexRange(const ShardingSpec& spec, ByteView shard_index,
                                                          uint64_t minishard, uint64_t file_size,
                                                          const std::string& where);

// The same from just the 16 bytes of shard index entry `minishard` (a single byte-range read).
Result<std::pair<uint64_t, uint64_t>> MinishardIndexRangeFromEntry(const ShardingSpec& spec, ByteView entry,
                                                                   uint64_t minishard, uint64_t file_size,
                                                                   const std::string& where);

// Every chunk entry of a whole shard file (`file`: its bytes), minishard by minishard, each chunk's
// entries in stored order. kCorruptData naming `where` and the byte range for a truncated shard
// index, a minishard index that does not decode, reaches past the file or lists a chunk of
// another minishard.
Result<std::vector<ChunkEntry>> DecodeShardEntries(const ShardingSpec& spec, ByteView file, const std::string& where);

// Undoes / applies an encoding (raw or gzip) to minishard indices and chunk data.
Result<Bytes> DecodeShardBytes(ShardEncoding encoding, ByteView data);
Result<Bytes> EncodeShardBytes(ShardEncoding encoding, ByteView data);

}  // namespace tessera::precomputed
