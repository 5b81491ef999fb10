// Publisher, latency mode (core/publisher.h): one ping in flight, its owner
// sends the next; driven by the listener or pulled by this thread; lost pings
// given up on after --ping-timeout.
#include <algorithm>
#include <chrono>

#include "core/publisher.h"
#include "util/own_threads.h"

namespace mwperf {

void Publisher::next_ping() {
  const int64_t t = now_ns();
  const Phase ph = phase_.load(std::memory_order_acquire);
  if (ph == Phase::stopping || (ph == Phase::measure && done(t)) || !error_.empty()) {
    finish();
    return;
  }
  const bool warm = ph == Phase::warmup;
  const uint64_t seq = warm ? warm_seq_++ : seq_++;
  if (warm)
    ++warmup_sent_;
  else {
    ++sent_;
    ++ping_sent_;
  }
  ping_at_.store(t, std::memory_order_relaxed);
  outstanding_.store(seq, std::memory_order_release);  // before the send: a pong may come back at once
  if (send(kFlagPing | (warm ? kFlagWarmup : 0), seq, stamp(t))) return;
  uint64_t s = seq;
  if (outstanding_.compare_exchange_strong(s, kNone, std::memory_order_acq_rel)) {
    // Not sent (the middleware's blocking time ran out, e.g. a keep-all
    // history that stayed full): its count and its sequence number go back,
    // as in the other modes, or the subscriber sees a number past the sent.
    if (warm) {
      --warmup_sent_;
      --warm_seq_;
    } else {
      --sent_;
      --ping_sent_;
      --seq_;
    }
    retry_.store(true, std::memory_order_release);  // the main thread starts the next one
  }
}

void Publisher::finish() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    finished_ = true;
  }
  cv_.notify_one();
}

bool Publisher::expire(int64_t t) {
  uint64_t s = outstanding_.load(std::memory_order_acquire);
  if (s == kNone || t - ping_at_.load(std::memory_order_relaxed) < o_.ping_timeout_ns) return false;
  if (!outstanding_.compare_exchange_strong(s, kNone, std::memory_order_acq_rel)) return false;
  if (s - (o_.seq_start + kWarmSeqOffset) >= kWarmSeqOffset) ++ping_lost_;  // a measured ping
  return true;
}

void Publisher::latency_driven(int64_t warm_end) {
  drive_ = true;
  phase_.store(Phase::warmup, std::memory_order_release);
  next_ping();
  wait_driven(warm_end, false);
  begin_measuring(now_ns());
  phase_.store(Phase::measure, std::memory_order_release);
  wait_driven(end_, true);
  phase_.store(Phase::stopping, std::memory_order_release);
  // The ping in flight: its pong, or its timeout.
  const int64_t last = now_ns() + o_.ping_timeout_ns + kWatchNs;
  while (outstanding_.load(std::memory_order_acquire) != kNone && now_ns() < last) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, std::chrono::milliseconds(1));
    lk.unlock();
    expire(now_ns());
  }
}

void Publisher::wait_driven(int64_t until, bool measuring) {
  for (;;) {
    const int64_t t = now_ns();
    if (t >= until || (measuring && done(t))) return;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait_for(lk, std::chrono::nanoseconds(std::min(kWatchNs, until - t)), [this] { return finished_; });
      if (finished_) return;
    }
    const int64_t now = now_ns();
    const bool restart = expire(now) || retry_.exchange(false, std::memory_order_acq_rel);
    if (restart && outstanding_.load(std::memory_order_acquire) == kNone) next_ping();
  }
}

void Publisher::latency_pulled(int64_t warm_end) {
  phase_.store(Phase::warmup, std::memory_order_release);
  while (error_.empty() && now_ns() < warm_end) {
    next_ping();
    await_pong();
  }
  begin_measuring(now_ns());
  phase_.store(Phase::measure, std::memory_order_release);
  while (error_.empty() && !done(now_ns())) {
    next_ping();
    await_pong();
  }
}

void Publisher::await_pong() {
  const int64_t timeout = untimed() ? -1 : o_.wait == WaitMode::spin ? 0 : kBlockSliceNs;
  while (error_.empty() && outstanding_.load(std::memory_order_acquire) != kNone) {
    const uint8_t* data = nullptr;
    size_t len = 0;
    const Errc e = ad_.recv(&data, &len, timeout);
    if (e == Errc::ok) {
      on_message(data, len);
    } else if (e == Errc::too_big) {
      ++foreign_;
    } else if (e != Errc::timeout) {
      error_ = o_.mw + ": receiving echoes failed: " + ad_.last_error();
      return;
    }
    expire(now_ns());
  }
}

void Publisher::watch() {
  const OwnThread me("mwperf-watch");
  while (!quit_.load()) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(kWatchNs));
    const uint64_t s = outstanding_.load(std::memory_order_acquire);
    if (s != kNone && now_ns() - ping_at_.load(std::memory_order_relaxed) >= o_.ping_timeout_ns) ad_.wake();
  }
}

}  // namespace mwperf
