// The Python objects behind tessera.Array and tessera.Stream, shared by the bindings that take them.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nanobind/nanobind.h>

#include "errors.h"
#include "tessera/api/array.h"
#include "tessera/api/stream.h"

namespace tessera::python {

struct ArrayHandle {
  std::shared_ptr<Array> array;

  // The open array; a read copies this reference so close() on another thread cannot free it.
  std::shared_ptr<Array> Get() const {
    if (!array) throw StatusError(ErrorKind::kFailedPrecondition, "the array is closed");
    return array;
  }
};

// The Python object behind tessera.Transaction: the transaction and the array it writes to (kept
// open by this reference even if the Array object is closed). `mu` serializes calls into the
// transaction (used from one thread at a time). A commit holds it with the GIL released; the
// quick calls may take it with the GIL held, which cannot deadlock: a commit never needs the GIL.
struct TransactionHandle {
  std::shared_ptr<Array> array;
  std::optional<Transaction> transaction;
  std::mutex mu;
};

// Array.transaction(): a new transaction on `array` (FailedPreconditionError when read-only).
std::unique_ptr<TransactionHandle> BeginTransaction(const std::shared_ptr<Array>& array);

// The Python object behind tessera.Stream. `mu` serializes calls into the (single-producer)
// C++ stream; it is only ever taken with the GIL released, so a call blocked on backpressure
// never holds up other Python threads.
struct StreamHandle {
  // The stream: owned (tessera.create), or an acquisition's (the pointer then keeps the
  // acquisition alive, and `mu` is the acquisition's, so one lock orders all its calls).
  std::shared_ptr<Stream> stream;
  std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
  // create(progress=...): called as progress(bytes_done, bytes_total or None, seconds) after each
  // append; tessera's own stderr line (progress=True) also takes final=True at close.
  nanobind::object progress;
  bool progress_is_line = false;
  int64_t progress_total = -1;  // bytes a bounded new array receives; -1: unbounded or continued

  // Fails early (before the argument checks) on a stream that is closed or aborted; the library
  // stream keeps that state (an error from any call aborts it).
  void RequireOpen(const char* what) const {
    const StreamState state = stream->state();
    if (state == StreamState::kClosed) throw StatusError(ErrorKind::kFailedPrecondition, std::string(what) + ": the stream is closed");
    if (state == StreamState::kAborted) throw StatusError(ErrorKind::kFailedPrecondition, std::string(what) + ": the stream was aborted");
  }
};

// Runs `call` on the stream with the GIL released and the stream's lock held.
template <typename Fn>
Status Locked(StreamHandle& h, Fn&& call) {
  nanobind::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(*h.mu);
  return call(*h.stream);
}

// What tessera.create's arguments ask for: where, the spec and the stream options.
struct CreateRequest {
  std::string location;
  ArraySpec spec;
  StreamOptions options;
};

// tessera.create's keyword arguments given as a dict (the scale-out calls take the same ones).
CreateRequest CreateRequestOfKwargs(nanobind::handle location, nanobind::dict kwargs);

}  // namespace tessera::python
