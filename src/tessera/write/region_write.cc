#include "tessera/write/region_write.h"

#include "tessera/index/index.h"

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

Status WriteSelections(RegionTarget& target, std::span<const PendingWrite> writes, const WriteOptions& options) {
  return Unsupported("region writes: the engine is being built (issue 25)");
}

}  // namespace tessera
