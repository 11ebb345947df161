// tessera.Transaction: a batch of region writes to one Array, stored together on commit.
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <nanobind/nanobind.h>

#include "bindings.h"
#include "errors.h"
#include "handles.h"
#include "selection.h"
#include "write_values.h"

namespace nb = nanobind;

namespace tessera::python {
namespace {

constexpr const char* kTransactionDoc = R"doc(A batch of region writes to one Array, stored together.

Made by :meth:`Array.transaction`, used as a context manager::

    with a.transaction() as t:
        t[0:10, 5] = 1
        t[3, ::-1] = row          # the value is copied: row may change afterwards

Writes to ``t`` are buffered and stored on a clean exit of the ``with`` block (or
:meth:`commit`), with every touched shard (or chunk) read and written once; an exception in
the block aborts: nothing is stored. Until then reads (``a[...]``) see the data as it was;
``a[...] = v`` inside the block is an ordinary write, stored at once, outside the transaction.
Each shard is replaced atomically, but a commit that fails part-way may have stored some
shards and not others. After commit or abort the transaction is closed.)doc";

void WithTransaction(TransactionHandle& h, const char* what, const std::function<Status(Transaction&)>& call) {
  Status st;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(h.mu);
    st = h.transaction ? call(*h.transaction) : FailedPrecondition(std::string(what) + ": the transaction is closed");
  }
  ThrowIfError(st);
}

}  // namespace

void BindTransaction(nb::module_& m) {
  nb::class_<TransactionHandle>(m, "Transaction", kTransactionDoc)
      .def(
          "__setitem__",
          [](TransactionHandle& h, nb::handle key, nb::handle value) {
            const Selection sel = ParseSelection(key, h.array->shape());
            WriteValues values = PrepareWriteValues(value, h.array->dtype(), sel);
            // The transaction copies the values, so `values` may go once Write returns.
            WithTransaction(h, "transaction write", [&](Transaction& t) { return t.Write(sel.slab, values.view); });
          },
          nb::arg("key").none(), nb::arg("value").none(),
          nb::sig("def __setitem__(self, key: typing.Any, value: typing.Any, /) -> None"),
          "Queues ``a[key] = value`` (as :meth:`Array.__setitem__` takes them), copying the value.")
      .def("commit",
           [](TransactionHandle& h) { WithTransaction(h, "transaction commit", [](Transaction& t) { return t.Commit(); }); },
           "Stores every queued write (a later write wins where two overlap) and closes the\n"
           "transaction. The GIL is released while writing.")
      .def("abort",
           [](TransactionHandle& h) {
             nb::gil_scoped_release release;
             std::lock_guard<std::mutex> lock(h.mu);
             if (h.transaction) h.transaction->Abort();
           },
           "Drops every queued write and closes the transaction; nothing is stored. Idempotent.")
      .def_prop_ro("pending",
                   [](TransactionHandle& h) {
                     std::lock_guard<std::mutex> lock(h.mu);
                     return h.transaction ? h.transaction->pending_writes() : size_t{0};
                   },
                   "How many writes are queued.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); },
           nb::sig("def __enter__(self, /) -> Transaction"))
      .def(
          "__exit__",
          [](TransactionHandle& h, nb::handle exc_type, nb::handle, nb::handle) {
            bool open;
            {
              std::lock_guard<std::mutex> lock(h.mu);
              open = h.transaction && h.transaction->open();
            }
            if (!open) return;
            if (exc_type.is_none()) {
              WithTransaction(h, "transaction commit", [](Transaction& t) { return t.Commit(); });
            } else {
              std::lock_guard<std::mutex> lock(h.mu);
              h.transaction->Abort();
            }
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("traceback").none(),
          nb::sig("def __exit__(self, exc_type: typing.Any, exc: typing.Any, traceback: typing.Any, /) -> None"),
          "Commits on a clean exit, aborts when the block raised.");
}

// Array.transaction(): see array_binding.cc.
std::unique_ptr<TransactionHandle> BeginTransaction(const std::shared_ptr<Array>& array) {
  Result<Transaction> t = array->BeginTransaction();
  ThrowIfError(t.status());
  auto h = std::make_unique<TransactionHandle>();
  h->array = array;
  h->transaction.emplace(std::move(t).value());
  return h;
}

}  // namespace tessera::python
