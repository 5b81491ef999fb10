// Publisher: latency (ping-pong), throughput (flat out, a ping every N samples)
// and rate (absolute deadlines, stamped with the intended send time).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/header.h"
#include "core/json.h"
#include "core/session.h"
#include "core/stats.h"
#include "core/sysinfo.h"

namespace mwperf {
namespace {

constexpr uint64_t kMaxConsecutiveSendErrors = 1000;

class Publisher {
 public:
  Publisher(const Options& o, Adapter& ad, StopSignal& stop)
      : o_(o), ad_(ad), stop_(stop), tx_(o.size), rx_(o.size), rtt_(o.mode == Mode::rate ? 1 : o.max_samples),
        lag_(o.mode == Mode::rate ? std::min<size_t>(o.max_samples, 1u << 16) : 1),
        slice_(o.wait == WaitMode::spin ? 0 : kBlockSliceNs) {
    if (o.precision > 0) rtt_.reserve_scratch();  // keep the samples in arrival order
    hdr_ = Header{kMagic, kHeaderVersion, 0, 0, o.run_id, uint32_t(o.size), 0, 0};
    for (size_t i = kHeaderSize; i < tx_.size(); ++i) tx_[i] = uint8_t(i);
  }

  ~Publisher() { stop_watchdog(); }

  Outcome run(int64_t discovery_ns) {
    const bool spin = o_.wait == WaitMode::spin;
    if (untimed_) watchdog_ = std::thread([this] { watch(); });
    warmup(spin);
    if (!error_.empty()) return {3, error_event(o_, error_)};
    const Usage u0 = usage_now();
    const int64_t t0 = now_ns();
    t0_ = t0;
    next_check_ = t0 + kConvergenceMinNs;
    switch (o_.mode) {
      case Mode::latency: latency(t0 + o_.duration_ns); break;
      case Mode::throughput: throughput(t0 + o_.duration_ns); break;
      case Mode::rate: rate(t0, t0 + o_.duration_ns, spin); break;
    }
    const int64_t elapsed = now_ns() - t0;
    stop_watchdog();
    const Usage u1 = usage_now();
    if (!error_.empty()) return {3, error_event(o_, error_)};

    JsonObject j;
    j.str("event", "result");
    common_fields(j, o_, ad_);
    if (o_.mode != Mode::rate) write_samples(j, o_, rtt_, 2);  // one-way = RTT/2, as reported
    const Summary rtt = rtt_.summarize();
    j.unum("sent", sent_).unum("warmup_sent", warmup_sent_).num("elapsed_ns", elapsed);
    j.real("rate_hz", o_.rate_hz);
    // Over the planned duration, or over the time actually measured when the
    // point ended early (--count, adaptive stop, told to stop).
    // A rate point that ended early is judged on the sends it made: kept up,
    // sent * period has passed; fell behind, the elapsed time is longer.
    int64_t span = o_.duration_ns;
    if (stopped_early_ || counted_out() || converged_after_ns_ >= 0)
      span = o_.mode == Mode::rate ? std::max<int64_t>(elapsed, int64_t(double(sent_) * 1e9 / o_.rate_hz)) : elapsed;
    j.real("achieved_hz", span > 0 ? double(sent_) * 1e9 / double(span) : 0);
    j.unum("pongs", pongs_).unum("ping_sent", ping_sent_).unum("ping_lost", ping_lost_);
    j.unum("late_pongs", late_pongs_).unum("send_errors", send_errors_).unum("foreign", foreign_);
    j.num("discovery_ns", discovery_ns).boolean("stopped_early", stopped_early_);
    j.num("converged_after_ns", converged_after_ns_).convergence("convergence", convergence_, 2);
    j.num("cpu_user_ns", u1.user_ns - u0.user_ns).num("cpu_sys_ns", u1.sys_ns - u0.sys_ns);
    j.num("maxrss_kb", u1.maxrss_kb).unum("stats_buffer_kb", rtt_.buffer_bytes() / 1024);
    if (o_.mode == Mode::rate) {
      // How late the publisher's sends left against their deadlines (timer
      // wake-up, a stalled middleware): part of the one-way latency the sub reports.
      j.null("rtt_ns").null("latency_ns").stats("send_lag_ns", lag_.summarize());
    } else {
      j.stats("rtt_ns", rtt).stats("latency_ns", halve(rtt));
    }
    return {0, j.done()};
  }

 private:
  bool send(uint8_t flags, uint64_t seq, int64_t stamp) {
    hdr_.flags = flags;
    hdr_.seq = seq;
    hdr_.send_ns = stamp;
    encode_header(hdr_, tx_.data());
    if (ad_.send(tx_.data(), tx_.size()) == Errc::ok) {
      // With write batching only flat-out data may wait for a full packet.
      if (o_.qos.batch && (o_.mode != Mode::throughput || (flags & kFlagPing))) ad_.flush();
      consecutive_errors_ = 0;
      return true;
    }
    ++send_errors_;
    if (++consecutive_errors_ >= kMaxConsecutiveSendErrors)
      error_ = std::string(ad_.name()) + ": " + std::to_string(consecutive_errors_) +
               " sends failed in a row, last: " + ad_.last_error();
    return false;
  }

  // --count: the measured phase has sent its samples.
  bool counted_out() const { return o_.count > 0 && sent_ >= o_.count; }

  bool stop_requested() {
    if (!stop_.requested()) return false;
    stopped_early_ = true;
    return true;
  }

  // Adaptive duration: true once the controller said stop, or (with
  // --precision) once the RTT's p50 and p99 are known to that precision.
  bool done(int64_t t) {
    if (stop_requested() || counted_out()) return true;
    if (o_.precision <= 0 || t < next_check_) return false;
    next_check_ = t + kConvergenceCheckNs;
    Interval a, b;
    if (t - t0_ < kConvergenceMinNs || !rtt_.converged(o_.precision, o_.z, &a, &b)) return false;
    converged_after_ns_ = t - t0_;
    convergence_ = Convergence{converged_after_ns_, rtt_.kept(), a, b};
    return true;
  }

  enum class Pong { got, none, failed };

  // Receives one echo within `timeout_ns` (0 = poll once). A pong for `seq`
  // records its RTT when `measure`; stale pongs and foreign messages are counted.
  Pong take_pong(uint64_t seq, int64_t timeout_ns, bool measure) {
    size_t len = 0;
    const Errc e = ad_.recv(rx_.data(), rx_.size(), timeout_ns, &len);
    if (e == Errc::timeout) return Pong::none;
    if (e == Errc::too_big) {
      ++foreign_;
      return Pong::none;
    }
    if (e != Errc::ok) {
      error_ = std::string(ad_.name()) + ": receiving echoes failed: " + ad_.last_error();
      return Pong::failed;
    }
    const int64_t t = now_ns();
    Header h;
    if (decode_header(rx_.data(), len, o_.run_id, &h) != HeaderCheck::ok || !(h.flags & kFlagPong)) {
      ++foreign_;
      return Pong::none;
    }
    if (h.seq != seq) {
      ++late_pongs_;
      return Pong::none;
    }
    if (measure) {
      rtt_.add(t - h.send_ns);
      ++pongs_;
    }
    return Pong::got;
  }

  // Waits for the pong of `seq` until `deadline`. Untimed (see Adapter::can_wake),
  // the watchdog wakes the wait once the deadline has passed.
  Pong await_pong(uint64_t seq, int64_t deadline, bool measure) {
    if (untimed_) deadline_.store(deadline, std::memory_order_relaxed);
    for (;;) {
      const Pong p = take_pong(seq, untimed_ ? -1 : slice_, measure);
      if (p != Pong::none || now_ns() >= deadline) {
        if (untimed_) deadline_.store(0, std::memory_order_relaxed);
        return p;
      }
    }
  }

  // Wakes an untimed wait for a pong that is overdue (lost), every kWatchNs at most.
  void watch() {
    while (!watch_stop_.load()) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(kWatchNs));
      const int64_t d = deadline_.load(std::memory_order_relaxed);
      if (d != 0 && now_ns() >= d) ad_.wake();
    }
  }

  void stop_watchdog() {
    watch_stop_.store(true);
    if (watchdog_.joinable()) watchdog_.join();
  }

  void warmup(bool spin) {
    const int64_t end = now_ns() + o_.warmup_ns;
    const double period = o_.mode == Mode::rate ? 1e9 / o_.rate_hz : 0;
    const int64_t t0 = now_ns();
    for (uint64_t k = 0; error_.empty(); ++k) {
      int64_t t = now_ns();
      if (o_.mode == Mode::rate) {
        t = t0 + int64_t(std::llround(double(k) * period));
        if (t >= end) break;
        wait_until(t, spin);
      } else if (t >= end) {
        break;
      }
      const uint8_t flags = kFlagWarmup | (o_.mode == Mode::latency ? kFlagPing : 0);
      if (!send(flags, k, t)) continue;
      ++warmup_sent_;
      if (o_.mode == Mode::latency && await_pong(k, t + o_.ping_timeout_ns, false) == Pong::failed) return;
    }
  }

  void latency(int64_t end) {
    uint64_t seq = o_.seq_start;
    for (int64_t t = now_ns(); t < end && error_.empty() && !done(t); t = now_ns()) {
      if (!send(kFlagPing, seq, t)) continue;
      ++sent_;
      ++ping_sent_;
      if (await_pong(seq, t + o_.ping_timeout_ns, true) == Pong::none) ++ping_lost_;
      ++seq;
    }
  }

  void throughput(int64_t end) {
    uint64_t seq = o_.seq_start;
    bool outstanding = false;
    uint64_t ping_seq = 0;
    int64_t ping_deadline = 0;
    for (uint64_t i = 0; error_.empty(); ++i) {
      const int64_t t = now_ns();
      if (t >= end || done(t)) break;
      const bool ping = !outstanding && o_.latency_count > 0 && i % o_.latency_count == 0;
      if (send(ping ? kFlagPing : 0, seq, t)) {
        ++sent_;
        if (ping) {
          outstanding = true;
          ping_seq = seq;
          ping_deadline = t + o_.ping_timeout_ns;
          ++ping_sent_;
        }
        ++seq;
      }
      if (outstanding) {
        const Pong p = take_pong(ping_seq, 0, true);
        if (p == Pong::got) {
          outstanding = false;
        } else if (t >= ping_deadline) {
          outstanding = false;
          ++ping_lost_;
        }
      }
    }
    if (o_.qos.batch) ad_.flush();  // what the last packet holds goes out now
    if (outstanding && error_.empty() && await_pong(ping_seq, ping_deadline, true) != Pong::got) ++ping_lost_;
  }

  void rate(int64_t t0, int64_t end, bool spin) {
    const double period = 1e9 / o_.rate_hz;
    uint64_t seq = o_.seq_start;
    for (uint64_t k = 0; error_.empty(); ++k) {
      const int64_t intended = t0 + int64_t(std::llround(double(k) * period));
      if (intended >= end || counted_out() || stop_requested()) break;
      wait_until(intended, spin);
      lag_.add(now_ns() - intended);
      // Stamped with the intended time: a publisher that falls behind shows up as
      // latency, not as a silent gap (no coordinated omission).
      if (send(0, seq, intended)) {
        ++sent_;
        ++seq;
      }
    }
  }

  const Options& o_;
  Adapter& ad_;
  StopSignal& stop_;
  int64_t t0_ = 0, next_check_ = 0, converged_after_ns_ = -1;
  Convergence convergence_;
  bool stopped_early_ = false;
  std::vector<uint8_t> tx_, rx_;
  LatencyStats rtt_, lag_;
  const int64_t slice_;
  static constexpr int64_t kWatchNs = 100'000'000;
  const bool untimed_ = o_.wait == WaitMode::block && ad_.can_wake();
  std::atomic<int64_t> deadline_{0};
  std::atomic<bool> watch_stop_{false};
  std::thread watchdog_;
  Header hdr_;
  uint64_t sent_ = 0, warmup_sent_ = 0, pongs_ = 0, ping_sent_ = 0, ping_lost_ = 0, late_pongs_ = 0;
  uint64_t send_errors_ = 0, consecutive_errors_ = 0, foreign_ = 0;
  std::string error_;
};

}  // namespace

Outcome run_pub(const Options& o, Adapter& ad, int64_t discovery_ns, StopSignal& stop) {
  Publisher p(o, ad, stop);
  return p.run(discovery_ns);
}

}  // namespace mwperf
