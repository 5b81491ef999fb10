// The measurement's bookkeeping thread: every kTickNs it closes a batch of
// the headline statistic when one is full (core/batches.h: at least 100
// samples, doubling as batches merge), so a short point still has tens of batches; every kLookNs, with
// --precision, it decides the adaptive stop. The measuring thread only polls converged() (one relaxed
// load); nothing of this runs on the send/receive/echo path.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "core/batches.h"
#include "core/stats.h"

namespace mwperf {

// A look of the adaptive stop: after how long, over how many samples, and the
// p50 / p99 intervals at that look's confidence (which met the precision if it
// is where the stop was reached).
struct Convergence {
  int64_t after_ns = -1;  // -1: no such look
  uint64_t count = 0;
  uint32_t batches = 0, look = 0;
  Interval p50, p99;
};

class Monitor {
 public:
  static constexpr int64_t kTickNs = 25'000'000;
  static constexpr int64_t kLookNs = 250'000'000;  // each look spends part of the error: not too many
  static constexpr int64_t kMinNs = 500'000'000;  // no stop decision before this much measuring

  // precision 0: batches only (for the intervals), never a stop.
  // on_converged runs once, on the monitor thread.
  Monitor(const LatencyStats& s, double precision, double confidence,
          std::function<void(int64_t after_ns)> on_converged = nullptr);
  ~Monitor() { stop(); }
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  void start(int64_t t0_ns);
  // Ends the thread; then batches() and at() are final.
  void stop();
  bool converged() const { return converged_.load(std::memory_order_relaxed); }
  const Batches& batches() const { return batches_; }
  // Where the stop was reached (its look), or after_ns -1.
  const Convergence& at() const {
    static const Convergence none;
    return converged() ? last_ : none;
  }
  // The last look made (the converging one if it converged): why a point that
  // ran its full duration went on.
  const Convergence& last_look() const { return last_; }
  // The summary of the statistic with the final intervals at the run's confidence.
  Summary summary() const;

 private:
  void run();

  const LatencyStats& s_;
  const double precision_, confidence_;
  std::function<void(int64_t)> on_converged_;
  Batches batches_;
  Convergence last_;  // looks stop at the converging one
  int64_t t0_ = 0;
  uint32_t looks_ = 0;
  int64_t last_look_ = 0;
  std::atomic<bool> converged_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace mwperf
