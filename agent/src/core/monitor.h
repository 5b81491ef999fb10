// The measurement's bookkeeping thread: every kTickNs it closes a batch of
// the headline statistic when one is full (core/batches.h: at least 100
// samples, doubling as batches merge), so a short point still has tens of
// batches; with --precision, every kLookNs, it decides the adaptive stop on
// what the point exists for: p50 and p99 of latency, or (a flow: throughput
// mode) the received rate and the loss, or (a rate point judged on its loss,
// --stop-loss) whether the loss lies below or above the share it is judged
// against. The measuring thread only polls
// converged() (one relaxed load); nothing of this runs on the
// send/receive/echo path.
#pragma once
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "core/batches.h"
#include "core/stats.h"

namespace mwperf {

// A look of the adaptive stop: after how long, over how many samples, the
// intervals at that look's confidence (which met the precision if it is where
// the stop was reached), and how long the measurement would need to meet it,
// extrapolated from its own batches (-1: not known, `why`).
struct Convergence {
  int64_t after_ns = -1;  // -1: no such look
  uint64_t count = 0;
  uint32_t batches = 0, look = 0;
  Interval p50, p99;  // latency
  Range rate, loss;   // a flow
  bool flow = false;
  int64_t needed_ns = -1;
  const char* why = nullptr;
};

// A look of the stop rule: its number, when it comes into the measurement,
// when the previous one (that could stop) came, and the maximum duration,
// over which the error is spent (spent_alpha).
struct Look {
  uint32_t index = 1;
  int64_t from_ns = 0, at_ns = 0, max_ns = 0;
};

// One look: the intervals at the look's share of the error, whether each
// lies within `precision` of its estimate (*done), and, if not, how long the
// measurement would need (half-widths shrink as 1/sqrt(samples); a point of
// that maximum duration would spend, at its last look, 13.5 % of the error).
// The latency's p50 and p99, or a flow's rate and loss (the loss to within
// the precision of itself, or of 1 % below 1 %).
Convergence judge(const Batches& b, const LatencyStats& s, double precision, double confidence, const Look& look,
                  bool* done);
Convergence judge(const FlowBatches& f, double precision, double confidence, const Look& look, bool* done);
// A flow's loss against the share `against` a rate point is judged by: done
// once its interval lies wholly at or below it, or above it.
Convergence judge_loss(const FlowBatches& f, double against, double confidence, const Look& look, bool* done);

// A flow's counters, written on the receive path (relaxed).
struct Flow {
  const std::atomic<uint64_t>* received = nullptr;  // unique samples
  const std::atomic<uint64_t>* missing = nullptr;   // gaps not (yet) filled
};

class Monitor {
 public:
  static constexpr int64_t kTickNs = 25'000'000;
  static constexpr int64_t kMinNs = 500'000'000;  // no stop decision before this much measuring
  // Each look spends part of the error, so looks thin out: 250 ms apart, and
  // at least a quarter of the time measured so far (a 30 s point looks ~20
  // times). The look after one at `elapsed_ns` (the first: kMinNs).
  static constexpr int64_t kLookNs = 250'000'000;
  static int64_t next_look(int64_t elapsed_ns) {
    return elapsed_ns < kMinNs ? kMinNs : elapsed_ns + std::max(kLookNs, elapsed_ns / 4);
  }

  // precision 0 and stop_loss 0: batches only (for the intervals), never a
  // stop. max_ns: the measurement's maximum duration. With a flow, the stop
  // watches it instead of the latency; with stop_loss, the flow's loss
  // against that share (and the latency too with a precision). on_converged
  // runs once, on the monitor thread.
  Monitor(const LatencyStats& s, double precision, double confidence, int64_t max_ns,
          std::function<void(int64_t after_ns)> on_converged = nullptr, Flow flow = {}, double stop_loss = 0);
  ~Monitor() { stop(); }
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // The measured phase started at t0_ns; t0_ns < 0: it starts with the first
  // sample the monitor sees (a subscriber's: its warm-up is not measured).
  void start(int64_t t0_ns);
  // Ends the thread; then batches() and at() are final.
  void stop();
  bool converged() const { return converged_.load(std::memory_order_relaxed); }
  const Batches& batches() const { return batches_; }
  size_t memory_bytes() const { return sizeof(*this) + batches_.memory_bytes(); }
  // Where the stop was reached (its look), or after_ns -1.
  const Convergence& at() const {
    static const Convergence none;
    return converged() ? last_ : none;
  }
  // The last look made (the converging one if it converged): why a point that
  // ran its full duration went on, and how long it would have needed.
  const Convergence& last_look() const { return last_; }
  // The summary of the statistic with the final intervals at the run's confidence.
  Summary summary() const;

 private:
  void run();
  void look(int64_t t);
  uint64_t seen() const;

  const LatencyStats& s_;
  const double precision_, confidence_, stop_loss_;
  const int64_t max_ns_;
  std::function<void(int64_t)> on_converged_;
  const Flow flow_;
  Batches batches_;
  FlowBatches flows_;
  Convergence last_;  // looks stop at the converging one
  int64_t t0_ = -1;
  uint32_t looks_ = 0;
  int64_t next_look_ = kMinNs, spent_to_ = 0;  // into the measurement
  std::atomic<bool> converged_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace mwperf
