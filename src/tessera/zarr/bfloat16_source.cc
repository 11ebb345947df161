#include "tessera/zarr/bfloat16_source.h"

#include <cstring>
#include <utility>
#include <vector>

namespace tessera::zarr {
namespace {

constexpr int64_t kElementBytes = 2;

// The element type's chunks are the uint16 chunks byte for byte, along one more, trailing
// dimension of the element's two bytes (always chunk 0 of it).
std::span<const int64_t> BitsCoords(std::span<const int64_t> coords) { return coords.first(coords.size() - 1); }

std::vector<int64_t> WithElementBytes(std::vector<int64_t> shape) {
  shape.push_back(kElementBytes);
  return shape;
}

// An absent chunk reads as the fill value. The engine's own fill for an absent chunk is one
// byte repeated (this source's dtype is uint8), which cannot say a two-byte pattern: so the
// chunk is filled here and reported present.
void FillChunk(const FillValue& fill, size_t chunk_bytes, Bytes* out) {
  out->resize(chunk_bytes);
  for (size_t at = 0; at + kElementBytes <= chunk_bytes; at += kElementBytes)
    std::memcpy(out->data() + at, fill.bytes.data(), kElementBytes);
}

class BFloat16Batch : public ChunkBatch {
 public:
  BFloat16Batch(std::unique_ptr<ChunkBatch> bits, const FillValue& fill, size_t chunk_bytes)
      : bits_(std::move(bits)), fill_(fill), chunk_bytes_(chunk_bytes) {}

  Result<bool> ReadChunkPrefix(std::span<const int64_t> coords, size_t prefix_bytes, Bytes* out) override {
    TESSERA_ASSIGN_OR_RETURN(bool stored, bits_->ReadChunkPrefix(BitsCoords(coords), prefix_bytes, out));
    if (!stored) FillChunk(fill_, chunk_bytes_, out);
    return true;
  }

 private:
  std::unique_ptr<ChunkBatch> bits_;
  const FillValue& fill_;  // the source's, which outlives its batches' reads
  size_t chunk_bytes_;
};

class BFloat16Source : public ChunkSource {
 public:
  explicit BFloat16Source(std::shared_ptr<const ChunkSource> bits)
      : bits_(std::move(bits)),
        shape_(WithElementBytes(bits_->shape())),
        chunk_shape_(WithElementBytes(bits_->read_chunk_shape())),
        element_type_(std::make_shared<ElementType>(ElementType{
            .numpy = "bfloat16", .item_bytes = kElementBytes, .description = "bfloat16", .fill = bits_->fill_value().bytes})) {
    chunk_bytes_ = 1;
    for (int64_t extent : chunk_shape_) chunk_bytes_ *= static_cast<size_t>(extent);
    no_fill_.bytes = {0};
  }

  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_shape_; }
  DataType dtype() const override { return DataType::kUInt8; }
  // Never used for reading: every chunk is reported present (FillChunk).
  const FillValue& fill_value() const override { return no_fill_; }
  std::shared_ptr<const ElementType> element_type() const override { return element_type_; }
  int io_concurrency() const override { return bits_->io_concurrency(); }

  Result<bool> ReadChunk(std::span<const int64_t> coords, Bytes* out) const override {
    TESSERA_ASSIGN_OR_RETURN(bool stored, bits_->ReadChunk(BitsCoords(coords), out));
    if (!stored) FillChunk(bits_->fill_value(), chunk_bytes_, out);
    return true;
  }

  Result<bool> ReadChunkPrefix(std::span<const int64_t> coords, size_t prefix_bytes, Bytes* out) const override {
    TESSERA_ASSIGN_OR_RETURN(bool stored, bits_->ReadChunkPrefix(BitsCoords(coords), prefix_bytes, out));
    if (!stored) FillChunk(bits_->fill_value(), chunk_bytes_, out);
    return true;
  }

  std::unique_ptr<ChunkBatch> BeginBatch(std::span<const std::vector<int64_t>> chunks) const override {
    std::span<const std::vector<int64_t>> bits_chunks = chunks.first(chunks.size() - 1);
    std::unique_ptr<ChunkBatch> batch = bits_->BeginBatch(bits_chunks);
    if (!batch) return nullptr;
    return std::make_unique<BFloat16Batch>(std::move(batch), bits_->fill_value(), chunk_bytes_);
  }

 private:
  std::shared_ptr<const ChunkSource> bits_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> chunk_shape_;
  std::shared_ptr<const ElementType> element_type_;
  size_t chunk_bytes_ = 0;
  FillValue no_fill_;
};

}  // namespace

std::unique_ptr<ChunkSource> BFloat16ElementSource(std::shared_ptr<const ChunkSource> bits) {
  return std::make_unique<BFloat16Source>(std::move(bits));
}

}  // namespace tessera::zarr
