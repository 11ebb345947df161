// A minimal fork-join helper: runs fn(i) for i in [0, n) on up to `threads` threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "tessera/core/status.h"

namespace tessera {

inline int DefaultThreadCount() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

// Calls fn(i, worker) for every i in [0, n), items handed out in ascending order to `threads`
// workers (0 = hardware threads); worker is in [0, threads). Stops handing out work after the
// first error and returns the error of the lowest failing i, so results are deterministic.
template <typename Fn>
Status ParallelFor(int64_t n, int threads, Fn&& fn) {
  if (threads <= 0) threads = DefaultThreadCount();
  threads = static_cast<int>(std::min<int64_t>(threads, n));
  if (n <= 0) return Status::Ok();
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  int64_t first_failed = n;
  Status first_error;
  auto work = [&](int worker) {
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return;
      int64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= n) return;
      Status st = fn(i, worker);
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < first_failed) first_failed = i, first_error = st;
        failed.store(true);
      }
    }
  };
  if (threads <= 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (int w = 1; w < threads; ++w) pool.emplace_back(work, w);
    work(0);
    for (auto& t : pool) t.join();
  }
  return first_error;
}

}  // namespace tessera
