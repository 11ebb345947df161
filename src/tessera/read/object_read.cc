#include "tessera/read/object_read.h"

#include <algorithm>

#include "tessera/core/parallel.h"
#include "tessera/index/index.h"

namespace tessera {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t e : v) n *= e;
  return n;
}

// Copies the elements chunk `projections` selects from `chunk` (C order over `chunk_shape`) into
// `out` (C order over the selection, `out_strides` per dimension, dropped dimensions included).
void CopySelected(std::vector<std::string>& chunk, const std::vector<index::ChunkProjection>& projections,
                  const std::vector<int64_t>& chunk_shape, const std::vector<int64_t>& out_strides,
                  std::vector<std::string>* out) {
  const size_t rank = projections.size();
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * chunk_shape[d];
  std::vector<int64_t> k(rank, 0);  // position within each projection
  for (;;) {
    int64_t in = 0, at = 0;
    for (size_t d = 0; d < rank; ++d) {
      in += (projections[d].in_first + k[d] * projections[d].in_step) * in_strides[d];
      at += (projections[d].out_first + k[d] * projections[d].out_step) * out_strides[d];
    }
    // Each chunk position is selected at most once per read, so its element can be moved out.
    (*out)[at] = std::move(chunk[in]);
    size_t d = rank;
    while (d > 0 && ++k[d - 1] == projections[d - 1].count) k[--d] = 0;
    if (d == 0) return;
  }
}

class PlaceholderSource final : public ChunkSource {
 public:
  PlaceholderSource(std::shared_ptr<const ObjectChunkSource> objects, std::string where)
      : objects_(std::move(objects)), where_(std::move(where)), fill_{Bytes(1, 0)} {}
  const std::vector<int64_t>& shape() const override { return objects_->shape(); }
  const std::vector<int64_t>& read_chunk_shape() const override { return objects_->read_chunk_shape(); }
  DataType dtype() const override { return DataType::kUInt8; }
  const FillValue& fill_value() const override { return fill_; }
  Result<bool> ReadChunk(std::span<const int64_t>, Bytes*) const override {
    return Unsupported(where_ + ": its elements are variable-length (" + objects_->object_type().name +
                       "): they have no fixed-size layout; read them as objects (Array::ReadObjects, tessera.open in Python)");
  }

 private:
  std::shared_ptr<const ObjectChunkSource> objects_;
  std::string where_;
  FillValue fill_;
};

}  // namespace

Status ReadObjectHyperslab(const ObjectChunkSource& source, const Hyperslab& selection, std::vector<std::string>* out,
                           const ReadOptions& options) {
  TESSERA_RETURN_IF_ERROR(CheckSelection(selection, source.shape()));
  const int64_t n = selection.NumElements();
  out->assign(static_cast<size_t>(n), source.fill_value());
  if (n == 0) return Status::Ok();
  const size_t rank = selection.dims.size();
  const std::vector<int64_t>& chunk_shape = source.read_chunk_shape();

  // Per dimension, the chunks the selection touches and what it takes of each.
  std::vector<std::vector<index::ChunkProjection>> projections(rank);
  for (size_t d = 0; d < rank; ++d) {
    index::ForEachChunkProjection(selection.dims[d], chunk_shape[d],
                                  [&](const index::ChunkProjection& p) { projections[d].push_back(p); });
  }
  std::vector<int64_t> out_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) out_strides[d - 1] = out_strides[d] * selection.dims[d].count;
  int64_t chunks = 1;
  for (const auto& p : projections) chunks *= static_cast<int64_t>(p.size());
  const int64_t chunk_elements = Product(chunk_shape);

  int threads = options.threads > 0 ? options.threads : source.io_concurrency();
  return ParallelFor(chunks, threads, [&](int64_t i, int) -> Status {
    std::vector<index::ChunkProjection> chosen(rank);
    std::vector<int64_t> coords(rank);
    for (size_t d = rank; d-- > 0;) {
      const int64_t count = static_cast<int64_t>(projections[d].size());
      chosen[d] = projections[d][i % count];
      coords[d] = chosen[d].chunk;
      i /= count;
    }
    std::vector<std::string> chunk;
    TESSERA_ASSIGN_OR_RETURN(bool stored, source.ReadChunk(coords, &chunk));
    if (!stored) return Status::Ok();
    if (static_cast<int64_t>(chunk.size()) != chunk_elements) {
      // Sources check their chunks' element counts; this guards the copy below all the same.
      return CorruptData("an object chunk holds " + std::to_string(chunk.size()) + " elements, the chunk shape " +
                         std::to_string(chunk_elements));
    }
    CopySelected(chunk, chosen, chunk_shape, out_strides, out);
    return Status::Ok();
  });
}

std::unique_ptr<ChunkSource> ObjectArrayPlaceholder(std::shared_ptr<const ObjectChunkSource> objects, std::string where) {
  return std::make_unique<PlaceholderSource>(std::move(objects), std::move(where));
}

}  // namespace tessera
