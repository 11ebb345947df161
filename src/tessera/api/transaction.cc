#include "tessera/api/transaction.h"

#include <cstring>

#include "tessera/api/array.h"

namespace tessera {
namespace {

// Copies dimension `d` onward of the compact box (shape `extent`) from `src` to `dst`, C order.
void CopyDims(const uint8_t* src, const int64_t* src_strides, uint8_t* dst, const int64_t* dst_strides,
              const int64_t* extent, int rank, int d, size_t item_bytes) {
  if (d == rank) {
    std::memcpy(dst, src, item_bytes);
    return;
  }
  if (d == rank - 1 && src_strides[d] == static_cast<int64_t>(item_bytes)) {  // a contiguous run
    std::memcpy(dst, src, static_cast<size_t>(extent[d]) * item_bytes);
    return;
  }
  for (int64_t i = 0; i < extent[d]; ++i) {
    CopyDims(src + i * src_strides[d], src_strides, dst + i * dst_strides[d], dst_strides, extent, rank, d + 1,
             item_bytes);
  }
}

}  // namespace

Bytes CopyStridedValues(const SourceView& values, const std::vector<int64_t>& shape, size_t item_bytes,
                        SourceView* copy) {
  const int rank = static_cast<int>(shape.size());
  int64_t extent[kMaxRank] = {};
  int64_t dense[kMaxRank] = {};
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    extent[d] = values.byte_strides[d] == 0 ? std::min<int64_t>(shape[d], 1) : shape[d];
    count *= extent[d];
  }
  int64_t stride = static_cast<int64_t>(item_bytes);
  for (int d = rank - 1; d >= 0; --d) {
    dense[d] = stride;
    stride *= extent[d];
  }
  Bytes buffer(static_cast<size_t>(count) * item_bytes);
  if (count > 0) CopyDims(values.base, values.byte_strides, buffer.data(), dense, extent, rank, 0, item_bytes);
  copy->base = buffer.data();
  for (int d = 0; d < rank; ++d) copy->byte_strides[d] = values.byte_strides[d] == 0 ? 0 : dense[d];
  return buffer;
}

Status Transaction::RequireOpen(std::string_view what) const {
  switch (state_) {
    case State::kOpen: return Status::Ok();
    case State::kCommitted: return FailedPrecondition(std::string(what) + ": the transaction is already committed");
    case State::kFailed:
      return FailedPrecondition(std::string(what) + ": the transaction's commit failed; it writes nothing more");
    case State::kAborted: return FailedPrecondition(std::string(what) + ": the transaction was aborted");
  }
  return Status::Ok();
}

Status Transaction::Write(const Hyperslab& selection, const SourceView& values) {
  TESSERA_RETURN_IF_ERROR(RequireOpen("transaction write"));
  TESSERA_RETURN_IF_ERROR(CheckSelection(selection, array_->shape()));
  PendingWrite write{selection, {}};
  buffers_.push_back(CopyStridedValues(values, selection.OutputShape(), ItemSize(array_->dtype()), &write.values));
  writes_.push_back(std::move(write));
  return Status::Ok();
}

Status Transaction::Write(const Hyperslab& selection, const void* c_order_values) {
  return Write(selection, SourceView::Contiguous(c_order_values, selection, ItemSize(array_->dtype())));
}

Status Transaction::Commit(const WriteOptions& options) {
  TESSERA_RETURN_IF_ERROR(RequireOpen("transaction commit"));
  Status st = writes_.empty() ? Status::Ok() : array_->WriteAll(writes_, options);
  state_ = st.ok() ? State::kCommitted : State::kFailed;
  writes_.clear();
  buffers_.clear();
  return st;
}

void Transaction::Abort() {
  if (state_ == State::kOpen) state_ = State::kAborted;
  writes_.clear();
  buffers_.clear();
}

}  // namespace tessera
