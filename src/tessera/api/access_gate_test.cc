#include "tessera/api/access_gate.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tessera {
namespace {

// Readers and writers hammer the gate: a side never runs while the other does, callers of one
// side do run together, and every caller gets through (neither side starves the other).
TEST(AccessGateTest, SidesNeverOverlapAndBothGetThrough) {
  AccessGate gate;
  std::atomic<int> active[2] = {0, 0};
  std::atomic<int> most_together[2] = {0, 0};
  std::atomic<bool> overlapped{false};
  std::atomic<int> passes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    const AccessGate::Side side = t % 2 ? AccessGate::kWrite : AccessGate::kRead;
    threads.emplace_back([&, side] {
      for (int i = 0; i < 2000; ++i) {
        AccessGate::Scope scope(gate, side);
        const int now = ++active[side];
        if (active[1 - side].load() != 0) overlapped = true;
        int seen = most_together[side].load();
        while (now > seen && !most_together[side].compare_exchange_weak(seen, now)) {}
        std::this_thread::yield();
        --active[side];
        ++passes;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(overlapped.load());
  EXPECT_EQ(passes.load(), 8 * 2000);
  EXPECT_GT(most_together[AccessGate::kRead].load() + most_together[AccessGate::kWrite].load(), 2);
}

}  // namespace
}  // namespace tessera
