// One drainer at a time, without a lock.
//
// A listener callback and the agent's own first drain (what arrived before the
// listener was set) may both want to take samples. A mutex around the take
// deadlocks with middlewares that call the listener holding their own reader
// lock (Fast DDS: the callback waits for ours while our take waits for theirs).
// Here no caller ever waits: one that finds a drain in progress counts itself
// and returns, and the drainer goes round once more for everyone who came
// meanwhile, so no sample is left behind. The uncontended cost is two atomic
// operations, on the receive path.
#pragma once

#include <atomic>
#include <cstdint>

namespace mwperf {

class SerialDrain {
 public:
  template <class F>
  void run(F&& drain) {
    if (pending_.fetch_add(1, std::memory_order_acq_rel) != 0) return;  // the drainer will go round for us
    int64_t served = 1;
    for (;;) {
      drain();
      const int64_t before = pending_.fetch_sub(served, std::memory_order_acq_rel);
      if (before == served) return;
      served = before - served;  // those who came during this pass: one more pass serves them
    }
  }

 private:
  std::atomic<int64_t> pending_{0};
};

}  // namespace mwperf
