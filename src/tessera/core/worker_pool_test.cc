#include "tessera/core/worker_pool.h"

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(WorkerPoolTest, RunsEveryItemOnceWithWorkersInRange) {
  WorkerPool pool(3);
  EXPECT_EQ(pool.size(), 3);
  std::vector<std::atomic<int>> seen(1000);
  std::atomic<bool> bad_worker{false};
  ASSERT_TRUE(pool.Run(1000, [&](int64_t i, int worker) {
    if (worker < 0 || worker >= 3) bad_worker = true;
    ++seen[i];
    return Status::Ok();
  }).ok());
  EXPECT_FALSE(bad_worker);
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
  EXPECT_TRUE(pool.Run(0, [](int64_t, int) { return Status::Ok(); }).ok());
}

TEST(WorkerPoolTest, ReturnsTheLowestFailingItemsError) {
  WorkerPool pool(4);
  for (int round = 0; round < 20; ++round) {
    Status st = pool.Run(200, [&](int64_t i, int) {
      if (i == 37 || i == 150) return InvalidArgument("item " + std::to_string(i));
      return Status::Ok();
    });
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.message(), "item 37");
  }
}

// Several callers at once share the threads: never more items run at once than the pool has
// threads, and every caller's items all run.
TEST(WorkerPoolTest, ConcurrentCallersShareThePoolsThreads) {
  WorkerPool pool(2);
  std::atomic<int> running{0}, most{0};
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 5; ++c)
    callers.emplace_back([&] {
      for (int r = 0; r < 10; ++r)
        ASSERT_TRUE(pool.Run(50, [&](int64_t, int) {
          const int now = ++running;
          int m = most.load();
          while (now > m && !most.compare_exchange_weak(m, now)) {
          }
          std::this_thread::yield();
          --running;
          ++total;
          return Status::Ok();
        }).ok());
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 5 * 10 * 50);
  EXPECT_LE(most.load(), 2);
}

// An item that runs a batch of its own on the same pool runs it inline instead of waiting for
// threads that are all busy with the outer batch.
TEST(WorkerPoolTest, NestedRunsDoNotDeadlock) {
  WorkerPool pool(2);
  std::atomic<int64_t> inner{0};
  ASSERT_TRUE(pool.Run(8, [&](int64_t, int worker) {
    return pool.Run(10, [&](int64_t, int w) {
      EXPECT_EQ(w, worker);
      ++inner;
      return Status::Ok();
    });
  }).ok());
  EXPECT_EQ(inner.load(), 80);
}

}  // namespace
}  // namespace tessera
