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
#include <span>
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

// One shard laid out from its slots (ShardingCodec::AssembleShard): written back to back, parts()
// are the shard's bytes. The parts view the chunks it was assembled from (which must outlive it)
// and its own encoded index; moving keeps them valid, copying is not allowed.
class ShardLayout {
 public:
  ShardLayout() = default;
  ShardLayout(ShardLayout&&) = default;
  ShardLayout& operator=(ShardLayout&&) = default;
  ShardLayout(const ShardLayout&) = delete;
  ShardLayout& operator=(const ShardLayout&) = delete;

  // True when no slot holds a chunk: a stored shard is erased rather than written (a nested
  // shard still needs its parts: the all-empty index alone).
  bool empty() const { return present_ == 0; }
  // [index] chunk chunk ... [index]: the present chunks in slot order, the index at the start or
  // the end as the codec's index_location says.
  const std::vector<ByteView>& parts() const { return parts_; }
  size_t size() const { return size_; }
  // The shard in one buffer (for callers that cannot write parts).
  Bytes Concatenate() const;

 private:
  friend class ShardingCodec;
  Bytes index_;
  std::vector<ByteView> parts_;
  size_t present_ = 0;
  size_t size_ = 0;
};

class ShardingCodec;

// Where each chunk of a shard goes, decided slot by slot in slot order: the one layout that
// AssembleShard and writers that store each chunk as soon as it is made (a stream writing its
// shard file piece by piece) share. The present chunks lie back to back in slot order, after the
// index when it is at the start.
class ShardPlacement {
 public:
  ShardPlacement(const ShardingCodec& codec, size_t num_slots);

  // Places the chunk of slot `k` (`nbytes` bytes) after the chunks placed so far and returns its
  // offset from the start of the shard. Slots must come in increasing order; a slot not placed
  // stays empty in the index.
  uint64_t Place(size_t k, uint64_t nbytes);
  size_t present() const { return present_; }
  const ShardIndex& index() const { return index_; }
  // Where the index goes: 0 (index at the start) or right after the last chunk.
  uint64_t index_offset() const { return index_at_start_ ? 0 : next_; }
  // The shard's size once its index is written.
  uint64_t shard_size() const { return next_ + (index_at_start_ ? 0 : index_size_); }
  size_t index_size() const { return index_size_; }

 private:
  ShardIndex index_;
  size_t index_size_;
  bool index_at_start_;
  uint64_t next_;  // offset of the next chunk
  size_t present_ = 0;
};

class ShardingCodec final : public ArrayToBytesCodec {
 public:
  ShardingCodec(std::vector<int64_t> inner_chunk_shape, CodecChain inner, CodecChain index_codecs,
                IndexLocation location);

  std::string_view name() const override { return "sharding_indexed"; }
  CodecId id() const override { return CodecId::kSharding; }
  const ShardingCodec* AsSharding() const override { return this; }
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
  // The one shard assembly (the streaming sink, region writes and Encode all use it): lays out a
  // shard from its slots, the encoded inner chunks in row-major chunk order (nullopt = empty),
  // without copying their bytes. Index entry k is (offset from the start of the shard, nbytes) of
  // slot k, or empty. Deterministic: the same slots give the same bytes.
  Result<ShardLayout> AssembleShard(std::span<const std::optional<ByteView>> slots) const;
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

}  // namespace tessera
