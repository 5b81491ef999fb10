#include "core/control.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "util/own_threads.h"

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

void StopSignal::start_stdin_reader(bool eof_is_stop, bool pair) {
  std::thread([this, eof_is_stop, pair] {
    const OwnThread me("mwperf-control");
    char line[8192];  // `stop S0,...,S63`: 64 counts of up to 20 digits; `next ARGS` with a samples path
    while (std::fgets(line, sizeof line, stdin)) {
      if (pair && std::strncmp(line, "next", 4) == 0 && (line[4] == ' ' || line[4] == '\n' || line[4] == 0)) {
        offer_next(line + 4);
        continue;
      }
      if (std::strncmp(line, "go", 2) == 0) {
        start();
        continue;
      }
      if (std::strncmp(line, "close", 5) == 0) break;
      if (std::strncmp(line, "stop", 4) == 0) {
        // "stop" without a count: unknown; "stop S0,S1,...": each publisher's (N:M)
        int64_t each[kMaxSentCounts];
        size_t n = 0;
        const char* at = line + 4;
        for (char* end = nullptr; n < kMaxSentCounts; at = end + 1) {
          const long long v = std::strtoll(at, &end, 10);
          if (end == at) break;
          each[n++] = v;
          if (*end != ',') break;
        }
        request(each, n);
        keep_waking();
        if (eof_is_stop && !pair) return;
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

void StopSignal::offer_next(const char* args) {
  std::string text(args);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  while (!text.empty() && text.front() == ' ') text.erase(0, 1);
  {
    std::lock_guard<std::mutex> lk(mu_);
    next_ = std::move(text);
    has_next_ = true;
  }
  cv_.notify_all();
}

bool StopSignal::wait_next(std::string* args) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [this] { return has_next_ || closed_; });
  if (!has_next_) return false;
  *args = std::move(next_);
  has_next_ = false;
  go_ = false;
  stop_.store(false, std::memory_order_release);
  sent_.store(-1, std::memory_order_release);
  n_each_.store(0, std::memory_order_relaxed);
  return true;
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

void StopSignal::request(int64_t sent) { request(&sent, 1); }

void StopSignal::request(const int64_t* each, size_t n) {
  std::lock_guard<std::mutex> lk(mu_);
  int64_t total = n == 0 ? -1 : 0;
  for (size_t i = 0; i < n; ++i) {
    each_[i].store(each[i], std::memory_order_relaxed);
    total = total < 0 || each[i] < 0 ? -1 : total + each[i];
  }
  n_each_.store(n, std::memory_order_relaxed);
  sent_.store(total, std::memory_order_release);
  stop_.store(true, std::memory_order_release);
  wake_all_locked();  // the receive loops blocked without a timeout
  cv_.notify_all();
}

int64_t StopSignal::sent_of(size_t p, size_t publishers) const {
  const int64_t total = sent();  // acquire: the counts before it are visible
  if (publishers <= 1) return p == 0 ? total : -1;
  return p < n_each_.load(std::memory_order_relaxed) && n_each_.load(std::memory_order_relaxed) == publishers
             ? each_[p].load(std::memory_order_relaxed)
             : -1;
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
