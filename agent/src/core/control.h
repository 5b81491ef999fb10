// The subscriber's side of the control channel: a thread reads `stop SENT`
// lines from stdin (EOF counts as `stop -1`) and raises a flag the receive loop
// polls with one relaxed atomic load.
#pragma once
#include <atomic>
#include <cstdint>

namespace mwperf {

class StopSignal {
 public:
  // Detached thread. eof_is_stop: EOF at stdin counts as `stop -1` (the
  // subscriber drains and reports when the controller goes away).
  void start_stdin_reader(bool eof_is_stop);
  bool requested() const { return stop_.load(std::memory_order_acquire); }
  int64_t sent() const { return sent_.load(std::memory_order_acquire); }
  void request(int64_t sent) {
    sent_.store(sent, std::memory_order_release);
    stop_.store(true, std::memory_order_release);
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> sent_{-1};
};

}  // namespace mwperf
