// The `sharding_indexed` array -> bytes codec (Zarr v3 sharding extension, ZEP 2).
//
// A shard is the encoding of one chunk of the outer grid. It holds the inner chunks, each encoded
// by the inner codec chain, back to back, and an index of (offset, nbytes) uint64 pairs, one per
// inner chunk in row-major order of the chunks-per-shard grid, encoded by the index codecs:
//
//   index_location = end:    | chunk | chunk | ... | index (16 * n bytes) | crc32c (4) |
//   index_location = start:  | index (16 * n bytes) | crc32c (4) | chunk | chunk | ... |
//
// An inner chunk that holds only the fill value is not stored: its entry is (2^64-1, 2^64-1).
// Offsets are relative to the start of the shard. The pieces are exposed separately so readers
// can fetch only the index and the byte ranges they need, and writers can keep untouched inner
// chunks' bytes as they are.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "tessera/codec/codec.h"

namespace tessera {

inline constexpr uint64_t kEmptyShardEntry = ~uint64_t{0};

enum class IndexLocation { kStart, kEnd };

// A decoded shard index: entries[2*i] = offset, entries[2*i+1] = nbytes of inner chunk i.
struct ShardIndex {
  std::vector<uint64_t> entries;

  size_t num_chunks() const { return entries.size() / 2; }
  bool IsEmpty(size_t i) const {
    return entries[2 * i] == kEmptyShardEntry && entries[2 * i + 1] == kEmptyShardEntry;
  }
  uint64_t offset(size_t i) const { return entries[2 * i]; }
  uint64_t nbytes(size_t i) const { return entries[2 * i + 1]; }
  static ShardIndex AllEmpty(size_t n) { return ShardIndex{std::vector<uint64_t>(2 * n, kEmptyShardEntry)}; }
};

class ShardingCodec final : public ArrayToBytesCodec {
 public:
  ShardingCodec(std::vector<int64_t> inner_chunk_shape, CodecChain inner, CodecChain index_codecs,
                IndexLocation location);

  std::string_view name() const override { return "sharding_indexed"; }
  nlohmann::json ToJson() const override;
  Status Encode(const ChunkSpec& shard_spec, ByteView array, Bytes* out) const override;
  Status Decode(const ChunkSpec& shard_spec, ByteView encoded, Bytes* out) const override;
  std::optional<size_t> MaxEncodedSize(const ChunkSpec& shard_spec) const override;

  const std::vector<int64_t>& inner_chunk_shape() const { return inner_chunk_shape_; }
  const CodecChain& inner_codecs() const { return inner_; }
  IndexLocation index_location() const { return location_; }

  // Chunks per shard along each dimension (shard shape / inner chunk shape).
  Result<std::vector<int64_t>> ChunksPerShard(const std::vector<int64_t>& shard_shape) const;
  // The spec of one decoded inner chunk.
  ChunkSpec InnerSpec(const ChunkSpec& shard_spec) const;
  // Encoded byte size of the index for `num_chunks` inner chunks.
  size_t IndexEncodedSize(size_t num_chunks) const;
  // Decodes an index read from the shard (exactly IndexEncodedSize bytes), validating that every
  // non-empty entry lies inside a shard of `shard_bytes` bytes (pass nullopt if unknown).
  // Errors name the inner chunk and byte range; callers add the key.
  Result<ShardIndex> DecodeIndex(ByteView index_bytes, size_t num_chunks,
                                 std::optional<uint64_t> shard_bytes) const;
  // Encodes one inner chunk; nullopt when it holds only the fill value (stored as empty).
  Result<std::optional<Bytes>> EncodeInnerChunk(const ChunkSpec& inner_spec, ByteView chunk) const;
  // Lays out a shard from encoded inner chunks (nullopt = empty) in row-major chunk order.
  // Returns nullopt when every inner chunk is empty (the shard should not be stored).
  Result<std::optional<Bytes>> AssembleShard(const std::vector<std::optional<Bytes>>& chunks) const;
  // Splits a whole shard into its index, validating it. Errors name the byte range.
  Result<ShardIndex> ReadIndexFromShard(ByteView shard, size_t num_chunks) const;

  // Encodes `index` (offsets already relative to the start of the shard) with the index codecs.
  Status EncodeIndex(const ShardIndex& index, Bytes* out) const;

 private:

  std::vector<int64_t> inner_chunk_shape_;
  CodecChain inner_;
  CodecChain index_codecs_;
  IndexLocation location_;
};

// The chain's sharding codec when it is the chain's only codec (the layout whose inner chunks can
// be read and written one by one), else null.
const ShardingCodec* ShardingOf(const CodecChain& chain);

}  // namespace tessera
