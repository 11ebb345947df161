#include "tessera/core/worker_pool.h"

#include <algorithm>

#include "tessera/core/parallel.h"

namespace tessera {

namespace {
// The pool whose thread this is (null on other threads) and its index there.
thread_local const WorkerPool* tl_pool = nullptr;
thread_local int tl_worker = 0;
}  // namespace

WorkerPool::WorkerPool(int threads) {
  const int n = threads > 0 ? threads : DefaultThreadCount();
  threads_.reserve(n);
  for (int w = 0; w < n; ++w) threads_.emplace_back([this, w] { Loop(w); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

Status WorkerPool::Run(int64_t n, const ItemFn& fn) {
  if (n <= 0) return Status::Ok();
  if (tl_pool == this) {  // nested: this thread is one of ours, and may be needed to finish it
    for (int64_t i = 0; i < n; ++i) TESSERA_RETURN_IF_ERROR(fn(i, tl_worker));
    return Status::Ok();
  }
  Batch batch;
  batch.n = n;
  batch.fn = &fn;
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(&batch);
  work_.notify_all();
  // Done when nothing is left to hand out (all handed out, or stopped by an error) and every
  // item handed out has finished.
  batch.done.wait(lock, [&] { return batch.finished == batch.next && (batch.next == n || batch.failed); });
  return batch.failed ? batch.first_error : Status::Ok();
}

bool WorkerPool::Idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.empty() && running_ == 0;
}

void WorkerPool::Loop(int worker) {
  tl_pool = this;
  tl_worker = worker;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and nothing queued
    Batch* b = queue_.front();
    const int64_t i = b->next++;
    if (b->next == b->n) queue_.pop_front();  // its last item: nothing left to hand out
    ++running_;
    lock.unlock();
    Status st = (*b->fn)(i, worker);
    lock.lock();
    --running_;
    if (!st.ok() && (!b->failed || i < b->first_failed)) {
      if (!b->failed && b->next < b->n) queue_.erase(std::find(queue_.begin(), queue_.end(), b));
      b->failed = true;
      b->first_failed = i;
      b->first_error = std::move(st);
    }
    ++b->finished;
    if (b->finished == b->next && (b->next == b->n || b->failed)) b->done.notify_all();
  }
}

}  // namespace tessera
