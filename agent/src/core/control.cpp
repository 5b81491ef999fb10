#include "core/control.h"

#include <pthread.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace mwperf {

void StopSignal::start_stdin_reader(bool eof_is_stop) {
  std::thread([this, eof_is_stop] {
    pthread_setname_np(pthread_self(), "mwperf-control");
    char line[128];
    while (std::fgets(line, sizeof line, stdin)) {
      if (std::strncmp(line, "stop", 4) == 0) {
        char* end = nullptr;
        const long long n = std::strtoll(line + 4, &end, 10);
        request(end == line + 4 ? -1 : n);  // "stop" without a count: unknown
        keep_waking();
        return;
      }
    }
    if (eof_is_stop) {
      request(-1);  // the controller went away
      keep_waking();
    }
  }).detach();
}

// A wake-up can be lost (a wake datagram dropped on a lossy link, a signal
// that lands just before the blocking call): repeat it until the receive loop
// has let go of its adapter.
void StopSignal::keep_waking() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (wake_target_ == nullptr) return;
      wake_target_->wake();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void StopSignal::request(int64_t sent) {
  std::lock_guard<std::mutex> lk(mu_);
  sent_.store(sent, std::memory_order_release);
  stop_.store(true, std::memory_order_release);
  if (wake_target_ != nullptr) wake_target_->wake();  // a receive loop blocked without a timeout
  cv_.notify_all();
}

bool StopSignal::wait(int64_t timeout_ns) {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, std::chrono::nanoseconds(timeout_ns), [this] { return requested(); });
}

void StopSignal::set_wake_target(Adapter* a) {
  std::lock_guard<std::mutex> lk(mu_);
  wake_target_ = a;
  if (a != nullptr && requested()) a->wake();
}

}  // namespace mwperf
