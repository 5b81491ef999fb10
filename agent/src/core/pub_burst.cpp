// Publisher, burst mode (core/publisher.h): --demand samples back to back,
// then --burst-gap.
#include <algorithm>

#include "core/publisher.h"

namespace mwperf {

void Publisher::burst(int64_t warm_end) {
  auto one = [this](bool warm, int64_t until) {
    for (uint64_t i = 0; i < o_.demand && error_.empty(); ++i) {
      const int64_t t = now_ns();
      if (warm ? t >= until : stop_.requested()) return;
      uint8_t flags = (i == 0 ? kFlagBurstFirst : 0) | (i + 1 == o_.demand ? kFlagBurstLast : 0);
      if (warm) flags |= kFlagWarmup;
      if (send(flags, warm ? warm_seq_ : seq_, stamp(t))) {
        if (warm)
          ++warm_seq_, ++warmup_sent_;
        else
          ++sent_, ++seq_;
      }
    }
    if (o_.qos.batch) ad_.flush();
  };
  const bool spin = o_.wait == WaitMode::spin;
  while (error_.empty() && now_ns() < warm_end) {
    one(true, warm_end);
    wait_until(std::min(warm_end, now_ns() + o_.burst_gap_ns), spin);
  }
  begin_measuring(now_ns());
  while (error_.empty() && !done(now_ns())) {
    one(false, end_);
    ++bursts_;
    wait_until(std::min(end_, now_ns() + o_.burst_gap_ns), spin);
  }
}

}  // namespace mwperf
