#include "tessera/zarr/element_view_source.h"

#include <cstring>
#include <utility>
#include <vector>

namespace tessera::zarr {
namespace {

// The element type's chunks are the DataType's chunks byte for byte, along one more, trailing
// dimension of the element's bytes (always chunk 0 of it). Where the DataType's array already
// ends with the element's units (ElementBytesSource), that dimension is the same one, in bytes.
std::span<const int64_t> BitsCoords(std::span<const int64_t> coords, bool bits_have_units) {
  return bits_have_units ? coords : coords.first(coords.size() - 1);
}

std::vector<int64_t> InBytes(std::vector<int64_t> shape, size_t unit_bytes) {
  shape.back() *= static_cast<int64_t>(unit_bytes);
  return shape;
}

std::vector<int64_t> WithElementBytes(std::vector<int64_t> shape, size_t element_bytes) {
  shape.push_back(static_cast<int64_t>(element_bytes));
  return shape;
}

// An absent chunk reads as the fill value. The engine's own fill for an absent chunk is one
// byte repeated (this source's dtype is uint8), which cannot say a multi-byte pattern: so the
// chunk is filled here and reported present.
void FillChunk(const FillValue& fill, size_t chunk_bytes, Bytes* out) {
  const size_t element_bytes = fill.bytes.size();
  out->resize(chunk_bytes);
  for (size_t at = 0; at + element_bytes <= chunk_bytes; at += element_bytes)
    std::memcpy(out->data() + at, fill.bytes.data(), element_bytes);
}

class ElementViewBatch : public ChunkBatch {
 public:
  ElementViewBatch(std::unique_ptr<ChunkBatch> bits, const FillValue& fill, size_t chunk_bytes, bool bits_have_units)
      : bits_(std::move(bits)), fill_(fill), chunk_bytes_(chunk_bytes), bits_have_units_(bits_have_units) {}

  Result<bool> ReadChunkPrefix(std::span<const int64_t> coords, size_t prefix_bytes, Bytes* out) override {
    TESSERA_ASSIGN_OR_RETURN(bool stored, bits_->ReadChunkPrefix(BitsCoords(coords, bits_have_units_), prefix_bytes, out));
    if (!stored) FillChunk(fill_, chunk_bytes_, out);
    return true;
  }

 private:
  std::unique_ptr<ChunkBatch> bits_;
  const FillValue& fill_;  // the source's, which outlives its batches' reads
  size_t chunk_bytes_;
  bool bits_have_units_;
};

class ElementViewSourceImpl : public ChunkSource {
 public:
  ElementViewSourceImpl(std::shared_ptr<const ChunkSource> bits, ElementType element, bool bits_have_units)
      : bits_(std::move(bits)),
        bits_have_units_(bits_have_units),
        shape_(bits_have_units ? InBytes(bits_->shape(), ItemSize(bits_->dtype()))
                               : WithElementBytes(bits_->shape(), ItemSize(bits_->dtype()))),
        chunk_shape_(bits_have_units ? InBytes(bits_->read_chunk_shape(), ItemSize(bits_->dtype()))
                                     : WithElementBytes(bits_->read_chunk_shape(), ItemSize(bits_->dtype()))),
        element_type_(std::make_shared<ElementType>(std::move(element))) {
    chunk_bytes_ = 1;
    for (int64_t extent : chunk_shape_) chunk_bytes_ *= static_cast<size_t>(extent);
    no_fill_.bytes = {0};
    element_fill_.bytes = element_type_->fill;
  }

  const std::vector<int64_t>& shape() const override { return shape_; }
  const std::vector<int64_t>& read_chunk_shape() const override { return chunk_shape_; }
  DataType dtype() const override { return DataType::kUInt8; }
  // Never used for reading: every chunk is reported present (FillChunk).
  const FillValue& fill_value() const override { return no_fill_; }
  std::shared_ptr<const ElementType> element_type() const override { return element_type_; }
  int io_concurrency() const override { return bits_->io_concurrency(); }

  Result<bool> ReadChunk(std::span<const int64_t> coords, Bytes* out) const override {
    TESSERA_ASSIGN_OR_RETURN(bool stored, bits_->ReadChunk(BitsCoords(coords, bits_have_units_), out));
    if (!stored) FillChunk(element_fill_, chunk_bytes_, out);
    return true;
  }

  Result<bool> ReadChunkPrefix(std::span<const int64_t> coords, size_t prefix_bytes, Bytes* out) const override {
    TESSERA_ASSIGN_OR_RETURN(bool stored, bits_->ReadChunkPrefix(BitsCoords(coords, bits_have_units_), prefix_bytes, out));
    if (!stored) FillChunk(element_fill_, chunk_bytes_, out);
    return true;
  }

  std::unique_ptr<ChunkBatch> BeginBatch(std::span<const std::vector<int64_t>> chunks) const override {
    std::span<const std::vector<int64_t>> bits_chunks = bits_have_units_ ? chunks : chunks.first(chunks.size() - 1);
    std::unique_ptr<ChunkBatch> batch = bits_->BeginBatch(bits_chunks);
    if (!batch) return nullptr;
    return std::make_unique<ElementViewBatch>(std::move(batch), element_fill_, chunk_bytes_, bits_have_units_);
  }

 private:
  std::shared_ptr<const ChunkSource> bits_;
  bool bits_have_units_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> chunk_shape_;
  std::shared_ptr<const ElementType> element_type_;
  size_t chunk_bytes_ = 0;
  FillValue no_fill_;
  FillValue element_fill_;  // one element: what an absent chunk's elements read as
};

}  // namespace

std::unique_ptr<ChunkSource> ElementViewSource(std::shared_ptr<const ChunkSource> bits, std::string numpy,
                                               std::string description) {
  ElementType element{.numpy = std::move(numpy), .item_bytes = ItemSize(bits->dtype()),
                      .description = std::move(description), .fill = bits->fill_value().bytes};
  return std::make_unique<ElementViewSourceImpl>(std::move(bits), std::move(element), /*bits_have_units=*/false);
}

std::unique_ptr<ChunkSource> ElementBytesSource(std::shared_ptr<const ChunkSource> units, ElementType element) {
  return std::make_unique<ElementViewSourceImpl>(std::move(units), std::move(element), /*bits_have_units=*/true);
}

}  // namespace tessera::zarr
