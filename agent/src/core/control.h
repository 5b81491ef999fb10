// The subscriber's side of the control channel: a thread reads `stop SENT`
// lines from stdin (EOF counts as `stop -1`) and raises a flag the receive loop
// polls with one relaxed atomic load.
#pragma once
#include <atomic>
#include <cstdint>

#include "adapters/adapter.h"

namespace mwperf {

class StopSignal {
 public:
  // Detached thread. eof_is_stop: EOF at stdin counts as `stop -1` (the
  // subscriber drains and reports when the controller goes away).
  void start_stdin_reader(bool eof_is_stop);
  bool requested() const { return stop_.load(std::memory_order_acquire); }
  int64_t sent() const { return sent_.load(std::memory_order_acquire); }
  void request(int64_t sent) {
    waking_.store(true);
    sent_.store(sent, std::memory_order_release);
    stop_.store(true);
    if (Adapter* a = wake_target_.load()) a->wake();  // a receive loop blocked without a timeout
    waking_.store(false);
  }
  // The receive loop that blocks without a timeout registers its adapter, and
  // unregisters it before the adapter may go (after which no wake() runs).
  void set_wake_target(Adapter* a) {
    wake_target_.store(a);
    if (a == nullptr)
      while (waking_.load()) {
      }
  }

 private:
  std::atomic<Adapter*> wake_target_{nullptr};
  std::atomic<bool> waking_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> sent_{-1};
};

}  // namespace mwperf
