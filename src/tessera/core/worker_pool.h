// A pool of compression threads that several writers share (an acquisition's arrays, a pyramid's
// levels): each Run is a fork-join batch like ParallelFor, and the batches of all callers queue on
// the same threads, so N arrays streaming at once use the pool's threads, not N times as many.
//
//   auto pool = std::make_shared<WorkerPool>(8);
//   Status st = pool->Run(tiles, [&](int64_t i, int worker) { return Encode(i, scratch[worker]); });
//
// Batches are served first come, first served; within one, items are handed out in ascending
// order. `worker` is the pool thread's index in [0, size()), so per-worker scratch space sized
// size() is never used by two items at once. A Run called from one of the pool's own threads (a
// sink that parallelizes inside an item) runs its items inline on that thread, so nested runs
// cannot deadlock waiting for threads that are all waiting themselves.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "tessera/core/status.h"

namespace tessera {

class WorkerPool {
 public:
  using ItemFn = std::function<Status(int64_t i, int worker)>;

  explicit WorkerPool(int threads);  // 0: hardware threads
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }
  // True when no batch is queued or running: a Run now starts at once on every thread.
  bool Idle();

  // Calls fn(i, worker) for every i in [0, n) on the pool's threads and waits for them. Stops
  // handing out items after the first error and returns the error of the lowest failing i, so the
  // result is deterministic (as ParallelFor's). Thread-safe: any number of callers at once.
  Status Run(int64_t n, const ItemFn& fn);

 private:
  struct Batch {
    int64_t n = 0;
    const ItemFn* fn = nullptr;
    int64_t next = 0;      // the next item to hand out
    int64_t finished = 0;  // items handed out and done
    int64_t first_failed = 0;
    Status first_error;
    bool failed = false;
    std::condition_variable done;
  };
  void Loop(int worker);

  std::mutex mu_;
  std::condition_variable work_;
  std::deque<Batch*> queue_;  // batches with items left to hand out, oldest first
  int64_t running_ = 0;       // items handed out and not finished
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tessera
