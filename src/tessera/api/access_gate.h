// Two groups of callers that must not overlap, each running together: an Array's reads and its
// writes. A read fetches a shard's index and then its chunks' byte ranges; a write replacing the
// shard in between would make the read decode new bytes at old offsets. Reads run together and
// writes run together (the engine's conditional writes keep concurrent writers apart); the two
// groups take turns: a group waiting for the other goes next, so neither starves.
#pragma once

#include <condition_variable>
#include <mutex>

namespace tessera {

class AccessGate {
 public:
  enum Side { kRead = 0, kWrite = 1 };

  void Enter(Side side) {
    std::unique_lock<std::mutex> lock(mu_);
    const int s = side, o = 1 - side;
    ++waiting_[s];
    while (active_[o] > 0 || (waiting_[o] > 0 && turn_ != s)) {
      if (active_[o] > 0) turn_ = s;  // the other group is running: this one goes next
      cv_.wait(lock);
    }
    --waiting_[s];
    ++active_[s];
  }

  void Leave(Side side) {
    std::lock_guard<std::mutex> lock(mu_);
    if (--active_[side] == 0) {
      turn_ = 1 - side;
      cv_.notify_all();
    }
  }

  // Holds one side of the gate for a scope.
  class Scope {
   public:
    Scope(AccessGate& gate, Side side) : gate_(gate), side_(side) { gate_.Enter(side_); }
    ~Scope() { gate_.Leave(side_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    AccessGate& gate_;
    Side side_;
  };

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int active_[2] = {0, 0};
  int waiting_[2] = {0, 0};
  int turn_ = kRead;  // which group enters first when both wait
};

}  // namespace tessera
