// A batch of region writes to one Array (mode r+), stored together on Commit.
//
//   Transaction t = array->BeginTransaction().value();
//   t.Write(sel1, values1);         // copied: the caller's buffer may go right away
//   t.Write(sel2, values2);         // a later write wins where two overlap
//   Status st = t.Commit();         // one engine call: each touched object read and written once
//
// Nothing is stored before Commit; reads through the Array see committed data only. Abort (or
// destroying the transaction without committing) stores nothing. Commit writes every touched
// object atomically, but not all objects at once: a failed Commit may have rewritten some
// objects (each whole, never torn) and not others. After Commit, successful or not, or Abort,
// the transaction is closed: Write and Commit are kFailedPrecondition and nothing more is written.
// A Transaction is used from one thread at a time; the Array must outlive it.
#pragma once

#include <memory>
#include <vector>

#include "tessera/core/bytes.h"
#include "tessera/core/status.h"
#include "tessera/read/selection_read.h"
#include "tessera/write/region_write.h"

namespace tessera {

class Array;

class Transaction {
 public:
  Transaction(Transaction&&) noexcept = default;
  Transaction& operator=(Transaction&&) noexcept = default;
  ~Transaction() = default;  // an uncommitted transaction writes nothing

  // Queues a write of `values` (over selection.OutputShape(); strides may be 0 or negative) into
  // `selection`, copying the values. kOutOfRange, naming the selection and the shape, for a
  // selection outside the array (nothing is queued).
  Status Write(const Hyperslab& selection, const SourceView& values);
  // Likewise, with values C order over selection.OutputShape().
  Status Write(const Hyperslab& selection, const void* c_order_values);
  // Stores every queued write (in order) with one WriteSelections call, then closes.
  Status Commit(const WriteOptions& options = {});
  // Drops every queued write and closes.
  void Abort();

  bool open() const { return state_ == State::kOpen; }
  size_t pending_writes() const { return writes_.size(); }

 private:
  friend class Array;
  explicit Transaction(Array* array) : array_(array) {}
  Status RequireOpen(std::string_view what) const;

  enum class State { kOpen, kCommitted, kFailed, kAborted };
  Array* array_;
  State state_ = State::kOpen;
  std::vector<Bytes> buffers_;        // the copied values, one per write
  std::vector<PendingWrite> writes_;  // each viewing its buffer
};

// Copies the values `values` views over `shape` into a new buffer holding each distinct element
// once: a dimension whose stride is 0 (broadcast) is stored once, and keeps stride 0 in *copy.
Bytes CopyStridedValues(const SourceView& values, const std::vector<int64_t>& shape, size_t item_bytes,
                        SourceView* copy);

}  // namespace tessera
