#include "tessera/codec/sharding_codec.h"

#include <cstring>

#include "tessera/index/chunk_grid.h"
#include "tessera/index/index.h"
#include "tessera/index/strided_copy.h"

namespace tessera {
namespace {

std::string CoordsText(const int64_t* c, size_t rank) {
  std::string s = "(";
  for (size_t d = 0; d < rank; ++d) s += (d ? "," : "") + std::to_string(c[d]);
  return s + ")";
}

// The shard's grid of inner chunks, once ChunksPerShard has checked that they tile it exactly.
Result<index::ChunkGrid> InnerGrid(const ShardingCodec& codec, const std::vector<int64_t>& shard_shape) {
  TESSERA_RETURN_IF_ERROR(codec.ChunksPerShard(shard_shape).status());
  return index::ChunkGrid(shard_shape, codec.inner_chunk_shape());
}

// Copies inner chunk `coords` of `inner` (the shard's inner chunk grid) between a shard array and
// a chunk buffer.
void CopyInnerChunk(const ChunkSpec& shard, const index::ChunkGrid& inner, const int64_t* coords, const uint8_t* src,
                    uint8_t* dst, bool to_chunk) {
  const int rank = inner.rank;
  const int64_t item = static_cast<int64_t>(ItemSize(shard.dtype));
  int64_t shard_strides[kMaxRank], chunk_strides[kMaxRank];
  index::RowMajorStrides(rank, shard.shape.data(), shard_strides);
  index::RowMajorStrides(rank, inner.chunk_shape, chunk_strides);
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) {
    offset += inner.ChunkOrigin(d, coords[d]) * shard_strides[d];
    shard_strides[d] *= item;
    chunk_strides[d] *= item;
  }
  if (to_chunk)
    index::CopyStrided(rank, inner.chunk_shape, src + offset * item, shard_strides, dst, chunk_strides, item);
  else
    index::CopyStrided(rank, inner.chunk_shape, src, chunk_strides, dst + offset * item, shard_strides, item);
}

}  // namespace

Bytes ShardLayout::Concatenate() const {
  Bytes out;
  out.reserve(size_);
  for (ByteView part : parts_) out.insert(out.end(), part.begin(), part.end());
  return out;
}

ShardingCodec::ShardingCodec(std::vector<int64_t> inner_chunk_shape, CodecChain inner,
                             CodecChain index_codecs, IndexLocation location)
    : inner_chunk_shape_(std::move(inner_chunk_shape)),
      inner_(std::move(inner)),
      index_codecs_(std::move(index_codecs)),
      location_(location) {}

nlohmann::json ShardingCodec::ToJson() const {
  return {{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", inner_chunk_shape_},
            {"codecs", inner_.ToJson()},
            {"index_codecs", index_codecs_.ToJson()},
            {"index_location", location_ == IndexLocation::kStart ? "start" : "end"}}}};
}

Result<std::vector<int64_t>> ShardingCodec::ChunksPerShard(const std::vector<int64_t>& shard_shape) const {
  if (shard_shape.size() != inner_chunk_shape_.size())
    return InvalidArgument("sharding_indexed: chunk_shape rank " + std::to_string(inner_chunk_shape_.size()) +
                           " does not match shard rank " + std::to_string(shard_shape.size()));
  std::vector<int64_t> cps(shard_shape.size());
  for (size_t d = 0; d < shard_shape.size(); ++d) {
    if (inner_chunk_shape_[d] <= 0 || shard_shape[d] % inner_chunk_shape_[d] != 0)
      return InvalidArgument("sharding_indexed: inner chunk shape does not evenly divide the shard shape");
    cps[d] = shard_shape[d] / inner_chunk_shape_[d];
  }
  return cps;
}

ChunkSpec ShardingCodec::InnerSpec(const ChunkSpec& shard_spec) const {
  return ChunkSpec{shard_spec.dtype, inner_chunk_shape_, shard_spec.fill};
}

size_t ShardingCodec::IndexEncodedSize(size_t num_chunks) const {
  ChunkSpec spec{DataType::kUInt64, {static_cast<int64_t>(num_chunks), 2}, ZeroFill(DataType::kUInt64)};
  return index_codecs_.FixedEncodedSize(spec).value_or(16 * num_chunks);
}

Status ShardingCodec::EncodeIndex(const ShardIndex& index, Bytes* out) const {
  ChunkSpec spec{DataType::kUInt64, {static_cast<int64_t>(index.num_chunks()), 2}, ZeroFill(DataType::kUInt64)};
  ByteView raw(reinterpret_cast<const uint8_t*>(index.entries.data()), index.entries.size() * 8);
  return index_codecs_.Encode(spec, raw, out);
}

Result<ShardIndex> ShardingCodec::DecodeIndex(ByteView index_bytes, size_t num_chunks,
                                              std::optional<uint64_t> shard_bytes) const {
  ChunkSpec spec{DataType::kUInt64, {static_cast<int64_t>(num_chunks), 2}, ZeroFill(DataType::kUInt64)};
  Bytes raw;
  Status st = index_codecs_.Decode(spec, index_bytes, &raw);
  if (!st.ok()) return CorruptData("shard index: " + st.message());
  if (raw.size() != 16 * num_chunks)
    return CorruptData("shard index decodes to " + std::to_string(raw.size()) + " bytes, expected " +
                       std::to_string(16 * num_chunks));
  ShardIndex index;
  index.entries.resize(2 * num_chunks);
  std::memcpy(index.entries.data(), raw.data(), raw.size());
  const uint64_t index_size = index_bytes.size();
  for (size_t i = 0; i < num_chunks; ++i) {
    if (index.IsEmpty(i)) continue;
    const uint64_t off = index.offset(i), n = index.nbytes(i);
    if (off == kEmptyShardEntry || n == kEmptyShardEntry || off + n < off)
      return CorruptData("shard index entry " + std::to_string(i) + " is malformed (offset " +
                         std::to_string(off) + ", nbytes " + std::to_string(n) + ")");
    if (shard_bytes) {
      const uint64_t data_begin = location_ == IndexLocation::kStart ? index_size : 0;
      const uint64_t data_end = location_ == IndexLocation::kStart ? *shard_bytes : *shard_bytes - index_size;
      if (off < data_begin || off + n > data_end)
        return CorruptData("shard index entry " + std::to_string(i) + " points to " + ByteRangeText(off, off + n) +
                           ", outside the shard's data " + ByteRangeText(data_begin, data_end));
    }
  }
  return index;
}

Result<ShardIndex> ShardingCodec::ReadIndexFromShard(ByteView shard, size_t num_chunks) const {
  const size_t index_size = IndexEncodedSize(num_chunks);
  if (shard.size() < index_size)
    return CorruptData("shard is " + std::to_string(shard.size()) + " bytes, shorter than its index (" +
                       std::to_string(index_size) + " bytes)");
  const size_t begin = location_ == IndexLocation::kStart ? 0 : shard.size() - index_size;
  Result<ShardIndex> index = DecodeIndex(shard.subspan(begin, index_size), num_chunks, shard.size());
  if (!index.ok())
    return index.status().WithContext("index at " + ByteRangeText(begin, begin + index_size));
  return index;
}

Result<std::optional<Bytes>> ShardingCodec::EncodeInnerChunk(const ChunkSpec& inner_spec, ByteView chunk) const {
  if (IsAllFill(chunk, inner_spec.fill)) return std::optional<Bytes>();
  Bytes out;
  TESSERA_RETURN_IF_ERROR(inner_.Encode(inner_spec, chunk, &out));
  return std::optional<Bytes>(std::move(out));
}

ShardPlacement::ShardPlacement(const ShardingCodec& codec, size_t num_slots)
    : index_(ShardIndex::AllEmpty(num_slots)),
      index_size_(codec.IndexEncodedSize(num_slots)),
      index_at_start_(codec.index_location() == IndexLocation::kStart),
      next_(index_at_start_ ? index_size_ : 0) {}

uint64_t ShardPlacement::Place(size_t k, uint64_t nbytes) {
  const uint64_t offset = next_;
  index_.entries[2 * k] = offset;
  index_.entries[2 * k + 1] = nbytes;
  next_ += nbytes;
  ++present_;
  return offset;
}

Result<ShardLayout> ShardingCodec::AssembleShard(std::span<const std::optional<ByteView>> slots) const {
  const size_t n = slots.size();
  ShardPlacement placement(*this, n);
  const bool index_at_start = location_ == IndexLocation::kStart;
  ShardLayout layout;
  layout.parts_.reserve(n + 1);
  if (index_at_start) layout.parts_.emplace_back();  // the index, once encoded
  for (size_t k = 0; k < n; ++k) {
    if (!slots[k]) continue;
    placement.Place(k, slots[k]->size());
    layout.parts_.push_back(*slots[k]);
  }
  layout.present_ = placement.present();
  TESSERA_RETURN_IF_ERROR(EncodeIndex(placement.index(), &layout.index_));
  if (layout.index_.size() != placement.index_size())
    return Unsupported("sharding_indexed: index codecs must have a fixed encoded size");
  if (index_at_start)
    layout.parts_.front() = layout.index_;
  else
    layout.parts_.emplace_back(layout.index_);
  layout.size_ = placement.shard_size();
  return layout;
}

Status ShardingCodec::Encode(const ChunkSpec& shard_spec, ByteView array, Bytes* out) const {
  TESSERA_ASSIGN_OR_RETURN(const index::ChunkGrid inner, InnerGrid(*this, shard_spec.shape));
  const int64_t n = inner.ChunkCount();
  const ChunkSpec inner_spec = InnerSpec(shard_spec);
  std::vector<std::optional<Bytes>> chunks(static_cast<size_t>(n));
  std::vector<std::optional<ByteView>> slots(static_cast<size_t>(n));
  Bytes scratch(inner_spec.NumBytes());
  int64_t coords[kMaxRank];
  for (int64_t i = 0; i < n; ++i) {
    inner.Unravel(i, coords);
    CopyInnerChunk(shard_spec, inner, coords, array.data(), scratch.data(), true);
    TESSERA_ASSIGN_OR_RETURN(chunks[i], EncodeInnerChunk(inner_spec, scratch));
    if (chunks[i]) slots[i] = ByteView(*chunks[i]);
  }
  // An all-fill shard (nested inside another shard) is its all-empty index alone.
  TESSERA_ASSIGN_OR_RETURN(const ShardLayout layout, AssembleShard(slots));
  *out = layout.Concatenate();
  return Status::Ok();
}

Status ShardingCodec::Decode(const ChunkSpec& shard_spec, ByteView encoded, Bytes* out) const {
  TESSERA_ASSIGN_OR_RETURN(const index::ChunkGrid inner, InnerGrid(*this, shard_spec.shape));
  const int rank = inner.rank;
  const int64_t n = inner.ChunkCount();
  TESSERA_ASSIGN_OR_RETURN(ShardIndex index, ReadIndexFromShard(encoded, static_cast<size_t>(n)));
  const ChunkSpec inner_spec = InnerSpec(shard_spec);
  out->resize(shard_spec.NumBytes());
  Bytes chunk;
  Bytes fill_chunk;
  int64_t coords[kMaxRank];
  for (int64_t i = 0; i < n; ++i) {
    inner.Unravel(i, coords);
    const Bytes* src;
    if (index.IsEmpty(i)) {
      if (fill_chunk.empty()) {
        fill_chunk.resize(inner_spec.NumBytes());
        FillElements(fill_chunk.data(), inner_spec.NumElements(), inner_spec.fill);
      }
      src = &fill_chunk;
    } else {
      const uint64_t off = index.offset(i), nb = index.nbytes(i);
      Status st = inner_.Decode(inner_spec, encoded.subspan(off, nb), &chunk);
      if (!st.ok())
        return Status(st.kind(), "inner chunk " + CoordsText(coords, rank) + " at " + ByteRangeText(off, off + nb) +
                                     ": " + st.message());
      src = &chunk;
    }
    CopyInnerChunk(shard_spec, inner, coords, src->data(), out->data(), false);
  }
  return Status::Ok();
}

std::optional<size_t> ShardingCodec::MaxEncodedSize(const ChunkSpec& shard_spec) const {
  auto cps = ChunksPerShard(shard_spec.shape);
  if (!cps.ok()) return std::nullopt;
  const int64_t n = index::Product(static_cast<int>(cps->size()), cps->data());
  auto inner = inner_.MaxEncodedSize(InnerSpec(shard_spec));
  if (!inner) return std::nullopt;
  return static_cast<size_t>(n) * *inner + IndexEncodedSize(static_cast<size_t>(n));
}

}  // namespace tessera
