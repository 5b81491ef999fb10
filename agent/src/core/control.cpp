#include "core/control.h"

#include <pthread.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace mwperf {

std::string read_run_key(RunKey* key) {
  char line[128];
  if (std::fgets(line, sizeof line, stdin) == nullptr) return "--key stdin: no key line on stdin";
  std::string text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.rfind("key ", 0) != 0 || !parse_run_key(text.substr(4), key))
    return "--key stdin: the first line on stdin is not 'key' and 32 hexadecimal digits";
  return "";
}

void StopSignal::start_stdin_reader(bool eof_is_stop) {
  std::thread([this, eof_is_stop] {
    pthread_setname_np(pthread_self(), "mwperf-control");
    char line[128];
    while (std::fgets(line, sizeof line, stdin)) {
      if (std::strncmp(line, "go", 2) == 0) {
        start();
        continue;
      }
      if (std::strncmp(line, "close", 5) == 0) break;
      if (std::strncmp(line, "stop", 4) == 0) {
        char* end = nullptr;
        const long long n = std::strtoll(line + 4, &end, 10);
        request(end == line + 4 ? -1 : n);  // "stop" without a count: unknown
        keep_waking();
        if (eof_is_stop) return;
        continue;  // the publisher: its `close` is still to come
      }
    }
    start();  // no more lines: nothing to wait for
    if (eof_is_stop) {
      request(-1);  // the controller went away
      keep_waking();
    }
    close();
  }).detach();
}


bool StopSignal::wait_closed(int64_t timeout_ns) {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, std::chrono::nanoseconds(timeout_ns), [this] { return closed_; });
}

void StopSignal::raise(bool* flag) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    *flag = true;
  }
  cv_.notify_all();
}

bool StopSignal::wait_go(int64_t timeout_ns) {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, std::chrono::nanoseconds(timeout_ns), [this] { return go_ || requested(); });
}

// A wake-up can be lost (a wake datagram dropped on a lossy link, a signal
// that lands just before the blocking call): repeat it until every receive
// loop has let go of its adapter.
void StopSignal::keep_waking() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (n_wake_ == 0) return;
      wake_all_locked();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void StopSignal::wake_all_locked() {
  for (size_t i = 0; i < n_wake_; ++i) wake_targets_[i]->wake();
}

void StopSignal::request(int64_t sent) {
  std::lock_guard<std::mutex> lk(mu_);
  sent_.store(sent, std::memory_order_release);
  stop_.store(true, std::memory_order_release);
  wake_all_locked();  // the receive loops blocked without a timeout
  cv_.notify_all();
}

bool StopSignal::wait(int64_t timeout_ns) {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, std::chrono::nanoseconds(timeout_ns), [this] { return requested(); });
}

bool StopSignal::add_wake_target(Adapter* a) {
  std::lock_guard<std::mutex> lk(mu_);
  if (a == nullptr || n_wake_ == kMaxWakeTargets) return false;
  wake_targets_[n_wake_++] = a;
  if (requested()) a->wake();
  return true;
}

void StopSignal::remove_wake_target(Adapter* a) {
  std::lock_guard<std::mutex> lk(mu_);
  for (size_t i = 0; i < n_wake_; ++i) {
    if (wake_targets_[i] == a) {
      wake_targets_[i] = wake_targets_[--n_wake_];
      wake_targets_[n_wake_] = nullptr;
      return;
    }
  }
}

size_t StopSignal::wake_targets() const {
  std::lock_guard<std::mutex> lk(mu_);
  return n_wake_;
}

}  // namespace mwperf
