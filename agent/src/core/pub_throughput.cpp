// Publisher, throughput mode (core/publisher.h): flat out, a ping every
// --latency-count samples, its pong taken by a pong thread or polled.
#include <chrono>

#include "core/publisher.h"
#include "util/own_threads.h"

namespace mwperf {

void Publisher::pull_pongs() {
  const OwnThread me("mwperf-pongs");
  const bool wakeable = ad_.can_wake();
  while (!quit_.load(std::memory_order_relaxed)) {
    const uint8_t* data = nullptr;
    size_t len = 0;
    const Errc e = ad_.recv(&data, &len, wakeable ? -1 : kBlockSliceNs);
    if (e == Errc::ok)
      on_message(data, len);
    else if (e == Errc::too_big)
      ++foreign_;
    else if (e != Errc::timeout)
      return;  // e.g. the stream closed at the end
  }
}

void Publisher::poll_pong() {
  if (outstanding_.load(std::memory_order_relaxed) == kNone) return;
  const uint8_t* data = nullptr;
  size_t len = 0;
  if (ad_.recv(&data, &len, 0) == Errc::ok) on_message(data, len);
}

void Publisher::throughput(int64_t warm_end) {
  for (uint64_t k = 0; error_.empty() && now_ns() < warm_end; ++k)
    if (send(kFlagWarmup, warm_seq_, stamp(now_ns()))) ++warm_seq_, ++warmup_sent_;
  begin_measuring(now_ns());
  for (uint64_t i = 0; error_.empty(); ++i) {
    const int64_t t = now_ns();
    if (done(t)) break;
    const bool ping =
        o_.latency_count > 0 && i % o_.latency_count == 0 && outstanding_.load(std::memory_order_relaxed) == kNone;
    if (ping) {
      ping_at_.store(t, std::memory_order_relaxed);
      outstanding_.store(seq_, std::memory_order_release);
    }
    if (send(ping ? kFlagPing : 0, seq_, stamp(t))) {
      ++sent_;
      ping_sent_ += ping;
      ++seq_;
    } else if (ping) {
      uint64_t s = seq_;
      outstanding_.compare_exchange_strong(s, kNone, std::memory_order_acq_rel);
    }
    if (!pong_thread_.joinable() && !listening_) poll_pong();  // an adapter whose recv cannot run beside send
    expire(t);
  }
  if (o_.qos.batch) ad_.flush();  // what the last packet holds goes out now
  const int64_t last = now_ns() + o_.ping_timeout_ns + kWatchNs;
  while (outstanding_.load(std::memory_order_acquire) != kNone && now_ns() < last) {
    if (!pong_thread_.joinable() && !listening_)
      poll_pong();
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    expire(now_ns());
  }
}

}  // namespace mwperf
