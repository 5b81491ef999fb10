#include "core/monitor.h"

#include <pthread.h>

#include <chrono>

#include "util/clock.h"

namespace mwperf {

Monitor::Monitor(const LatencyStats& s, double precision, double confidence,
                 std::function<void(int64_t)> on_converged)
    : s_(s), precision_(precision), confidence_(confidence), on_converged_(std::move(on_converged)) {}

void Monitor::start(int64_t t0_ns) {
  t0_ = t0_ns;
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "mwperf-monitor");
    run();
  });
}

void Monitor::run() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!quit_) {
    cv_.wait_for(lk, std::chrono::nanoseconds(kTickNs), [this] { return quit_; });
    if (quit_) break;
    lk.unlock();
    batches_.observe(s_);
    const int64_t t = now_ns();
    if (precision_ > 0 && !converged() && t - t0_ >= kMinNs && t - last_look_ >= kLookNs &&
        batches_.count() >= Batches::kMinBatches) {
      last_look_ = t;
      const uint64_t n = s_.count();
      Interval a, b;
      const bool done = batches_.converged(s_, precision_, confidence_, ++looks_, &a, &b);
      last_ = Convergence{t - t0_, n, batches_.count(), looks_, a, b};
      if (done) {
        converged_.store(true, std::memory_order_relaxed);
        if (on_converged_) on_converged_(last_.after_ns);
      }
    }
    lk.lock();
  }
}

void Monitor::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    quit_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) {
    thread_.join();
    batches_.close(s_);  // what arrived since the last batch
  }
}

Summary Monitor::summary() const {
  Summary s = s_.summarize();
  batches_.fill(&s, s_, confidence_);
  return s;
}

}  // namespace mwperf
