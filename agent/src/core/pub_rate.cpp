// Publisher, rate mode (core/publisher.h): an absolute schedule, each sample
// stamped with its intended send time.
#include <algorithm>
#include <cmath>

#include "core/publisher.h"

namespace mwperf {

void Publisher::rate(int64_t warm_end) {
  const bool spin = o_.wait == WaitMode::spin;
  const double period = 1e9 / o_.rate_hz;
  const int64_t w0 = now_ns();
  for (uint64_t k = 0; error_.empty(); ++k) {
    const int64_t due = w0 + int64_t(std::llround(double(k) * period));
    if (due >= warm_end || now_ns() >= warm_end) break;
    wait_until(due, spin);
    if (send(kFlagWarmup, warm_seq_, stamp(due))) ++warm_seq_, ++warmup_sent_;
  }
  begin_measuring(now_ns());
  uint64_t k = 0;
  int64_t stopped = end_;
  bool counted = false;
  for (; error_.empty(); ++k) {
    const int64_t due = t0_ + int64_t(std::llround(double(k) * period));
    if (due >= end_) break;
    if (counted_out()) {  // --samples: the samples asked for are the schedule
      counted = true;
      break;
    }
    if (stop_.requested()) {
      stopped = std::max(now_ns(), t0_);
      break;
    }
    int64_t t = now_ns();
    if (t >= end_) break;  // the deadline: what is still due stays unsent
    if (t < due) {
      wait_until(due, spin);
      t = now_ns();
    }
    lag_.add(t - due);
    if (send(0, seq_, stamp(due))) {
      ++sent_;
      ++seq_;
    }
  }
  // Due by the end of the measured phase (its deadline, or the stop).
  const uint64_t due_by_end = uint64_t(std::ceil(double(std::min(stopped, end_) - t0_) / period));
  scheduled_ = counted ? k : std::max<uint64_t>(k, due_by_end);
}

}  // namespace mwperf
