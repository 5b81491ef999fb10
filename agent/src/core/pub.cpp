// Publisher: latency (ping-pong), throughput (flat out, a ping every N samples),
// rate (an absolute schedule, stamped with the intended send time) and burst
// (a demand of N samples back to back, then a pause; again until the end).
//
// Pongs reach on_message() either on the middleware's own thread (listen
// mode: in latency mode the handler then sends the next ping right there, as
// ddsperf's ping does) or on a thread of ours that pulls them (latency mode:
// the main thread; throughput mode: a pong thread, so that a pong is timed
// when it arrives, not when the next send returns). A ping is owned by whoever
// wins `outstanding_`: the handler that matched its pong or the watchdog that
// gave up on it; only the owner sends the next one.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core/header.h"
#include "core/monitor.h"
#include "core/session.h"
#include "util/clock.h"
#include "util/own_threads.h"
#include "util/sysinfo.h"

namespace mwperf {
namespace {

constexpr uint64_t kMaxConsecutiveSendErrors = 1000;
constexpr uint64_t kNone = ~uint64_t(0);
constexpr int64_t kWatchNs = 100'000'000;   // how often a lost ping is looked for
constexpr uint64_t kWarmSeqOffset = uint64_t(1) << 62;  // warm-up pings never share a sequence number

enum class Phase { warmup, measure, stopping };

class Publisher final : public Session {
 public:
  Publisher(const Options& o, Adapter& ad, StopSignal& stop)
      : o_(o), ad_(ad), stop_(stop), tx_(o.size), rtt_(pings() ? o.samples_max : 0), lag_(0),
        // the stop of a throughput point watches the subscriber's flow, not the pings
        monitor_(rtt_, o.mode == Mode::latency ? o.precision : 0, o.confidence, o.duration_ns), gate_(*this),
        base_(o.clock == StampClock::realtime ? realtime_base_ns() : 0) {
    hdr_ = Header{kMagic, kHeaderVersion, 0, {}, uint32_t(o.size), 0, 0};
    for (size_t i = kHeaderSize; i < tx_.size(); ++i) tx_[i] = uint8_t(i);
    seq_ = o.seq_start;
    warm_seq_ = o.seq_start + kWarmSeqOffset;
  }

  ~Publisher() override { stop_threads(); }

  size_t own_bytes() const override { return tx_.size() + rtt_.memory_bytes() + lag_.memory_bytes() + monitor_.memory_bytes(); }

  // The core's handler of everything that comes back (pongs).
  void on_message(const uint8_t* data, size_t len) {
    const int64_t t = now_ns();
    Header h;
    if (decode_header(data, len, o_.key, &h) != HeaderCheck::ok || !(h.flags & kFlagPong)) {
      ++foreign_;
      return;
    }
    uint64_t s = h.seq;
    // Past the ping timeout its ping is lost, whether or not the watchdog has looked yet: censored, not measured.
    const bool late = t - ping_at_.load(std::memory_order_relaxed) >= o_.ping_timeout_ns;
    if (outstanding_.load(std::memory_order_relaxed) != s ||
        !outstanding_.compare_exchange_strong(s, kNone, std::memory_order_acq_rel)) {
      ++late_pongs_;
      return;
    }
    late_pongs_ += late;
    if (!(h.flags & kFlagWarmup)) late ? ++ping_lost_ : (rtt_.add(stamp(t) - h.send_ns), ++pongs_);
    if (drive_) next_ping();
  }

  Outcome run(int64_t discovery_ns, const Footprint& footprint) override {
    const bool listen = ad_.receive_in_use() == "listener";
    listening_ = listen;
    if (o_.mode == Mode::latency || o_.mode == Mode::throughput) {
      if (listen) {
        if (ad_.listen(&gate_) != Errc::ok) return {3, error_event(o_, ad_.last_error())};
      } else if (o_.mode == Mode::throughput && ad_.description().concurrent_recv) {
        pong_thread_ = std::thread([this] { pull_pongs(); });
      } else if (untimed()) {
        watchdog_ = std::thread([this] { watch(); });
      }
    }
    const int64_t warm_end = now_ns() + o_.warmup_ns;
    switch (o_.mode) {
      case Mode::latency: listen ? latency_driven(warm_end) : latency_pulled(warm_end); break;
      case Mode::throughput: throughput(warm_end); break;
      case Mode::rate: rate(warm_end); break;
      case Mode::burst: burst(warm_end); break;
    }
    const int64_t t1 = now_ns();
    const Usage u1 = usage_now();
    monitor_.stop();
    stop_threads();
    gate_.shut();
    if (!error_.empty()) return {3, error_event(o_, error_)};
    return {0, result(discovery_ns, footprint, t1, u1)};
  }

 private:
  int64_t stamp(int64_t mono) const { return mono + base_; }
  // The modes whose headline latency is the publisher's (RTT/2 of pings).
  bool pings() const { return o_.mode == Mode::latency || o_.mode == Mode::throughput; }
  bool untimed() const { return o_.wait == WaitMode::block && ad_.can_wake(); }
  bool counted_out() const { return o_.samples > 0 && sent_ >= o_.samples; }
  // The measured phase is over: its end, the controller's stop, the adaptive
  // stop, or --samples.
  bool done(int64_t t) const {
    return t >= end_ || stop_.requested() || monitor_.converged() || counted_out();
  }

  void begin_measuring(int64_t t0) {
    t0_ = t0;
    end_ = t0 + o_.duration_ns;
    u0_ = usage_now();
    monitor_.start(t0);
  }

  // Sends one message; false when it did not go out (timeout or error).
  bool send(uint8_t flags, uint64_t seq, int64_t stamp_ns) {
    hdr_.flags = flags;
    hdr_.seq = seq;
    hdr_.send_ns = stamp_ns;
    encode_header(hdr_, o_.key, tx_.data());
    const Errc e = ad_.send(tx_.data(), tx_.size());
    if (e == Errc::ok) {
      // With write batching only flat-out data may wait for a full packet.
      if (o_.qos.batch && (o_.mode != Mode::throughput || (flags & kFlagPing))) ad_.flush();
      consecutive_errors_ = 0;
      return true;
    }
    if (e == Errc::timeout) {  // the middleware's own blocking time ran out: not sent
      ++send_timeouts_;
      return false;
    }
    ++send_errors_;
    if (++consecutive_errors_ >= kMaxConsecutiveSendErrors && error_.empty())
      error_ = o_.mw + ": " + std::to_string(consecutive_errors_) +
               " sends failed in a row, last: " + ad_.last_error();
    return false;
  }

  // Latency mode: the owner of the next ping sends it (or ends the run).
  void next_ping() {
    const int64_t t = now_ns();
    const Phase ph = phase_.load(std::memory_order_acquire);
    if (ph == Phase::stopping || (ph == Phase::measure && done(t)) || !error_.empty()) {
      finish();
      return;
    }
    const bool warm = ph == Phase::warmup;
    const uint64_t seq = warm ? warm_seq_++ : seq_++;
    if (warm) ++warmup_sent_; else { ++sent_; ++ping_sent_; }
    ping_at_.store(t, std::memory_order_relaxed);
    outstanding_.store(seq, std::memory_order_release);  // before the send: a pong may come back at once
    if (send(kFlagPing | (warm ? kFlagWarmup : 0), seq, stamp(t))) return;
    uint64_t s = seq;
    if (outstanding_.compare_exchange_strong(s, kNone, std::memory_order_acq_rel)) {
      if (warm) --warmup_sent_; else { --sent_; --ping_sent_; }
      retry_.store(true, std::memory_order_release);  // the main thread starts the next one
    }
  }

  void finish() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      finished_ = true;
    }
    cv_.notify_one();
  }

  // The ping in flight is overdue: give up on it (if its pong did not win).
  bool expire(int64_t t) {
    uint64_t s = outstanding_.load(std::memory_order_acquire);
    if (s == kNone || t - ping_at_.load(std::memory_order_relaxed) < o_.ping_timeout_ns) return false;
    if (!outstanding_.compare_exchange_strong(s, kNone, std::memory_order_acq_rel)) return false;
    if (s - (o_.seq_start + kWarmSeqOffset) >= kWarmSeqOffset) ++ping_lost_;  // a measured ping
    return true;
  }

  // Latency mode with listener delivery: the handler drives the pings; this
  // thread only flips the phases, gives up on lost pings and waits.
  void latency_driven(int64_t warm_end) {
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

  void wait_driven(int64_t until, bool measuring) {
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

  // Latency mode, pulled: this thread sends a ping and receives its pong.
  void latency_pulled(int64_t warm_end) {
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

  void await_pong() {
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

  // Wakes an untimed wait for a pong that is overdue (lost).
  void watch() {
    const OwnThread me("mwperf-watch");
    while (!quit_.load()) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(kWatchNs));
      const uint64_t s = outstanding_.load(std::memory_order_acquire);
      if (s != kNone && now_ns() - ping_at_.load(std::memory_order_relaxed) >= o_.ping_timeout_ns) ad_.wake();
    }
  }

  // Throughput mode: receives the pongs of the interleaved pings as they arrive.
  void pull_pongs() {
    const OwnThread me("mwperf-pongs");
    const bool wakeable = ad_.can_wake();
    while (!quit_.load(std::memory_order_relaxed)) {
      const uint8_t* data = nullptr;
      size_t len = 0;
      const Errc e = ad_.recv(&data, &len, wakeable ? -1 : kBlockSliceNs);
      if (e == Errc::ok) on_message(data, len);
      else if (e == Errc::too_big) ++foreign_;
      else if (e != Errc::timeout) return;  // e.g. the stream closed at the end
    }
  }

  // A pong waiting, taken on the sending thread (no pong thread for this adapter).
  void poll_pong() {
    if (outstanding_.load(std::memory_order_relaxed) == kNone) return;
    const uint8_t* data = nullptr;
    size_t len = 0;
    if (ad_.recv(&data, &len, 0) == Errc::ok) on_message(data, len);
  }

  void stop_threads() {
    quit_.store(true);
    if (pong_thread_.joinable()) {
      ad_.wake();
      pong_thread_.join();
    }
    if (watchdog_.joinable()) watchdog_.join();
  }

  void throughput(int64_t warm_end) {
    for (uint64_t k = 0; error_.empty() && now_ns() < warm_end; ++k)
      if (send(kFlagWarmup, warm_seq_, stamp(now_ns()))) ++warm_seq_, ++warmup_sent_;
    begin_measuring(now_ns());
    for (uint64_t i = 0; error_.empty(); ++i) {
      const int64_t t = now_ns();
      if (done(t)) break;
      const bool ping = o_.latency_count > 0 && i % o_.latency_count == 0 &&
                        outstanding_.load(std::memory_order_relaxed) == kNone;
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
      if (!pong_thread_.joinable() && !listening_) poll_pong();
      else std::this_thread::sleep_for(std::chrono::milliseconds(1));
      expire(now_ns());
    }
  }

  // Burst mode: `demand` samples back to back (the first and the last
  // flagged, for their latency), flushed, then the pause. The measured phase
  // ends at its deadline between bursts: a burst once begun is written whole
  // (samples written = demand x bursts, less what the middleware refused),
  // unless the controller stops the run.
  void burst(int64_t warm_end) {
    auto one = [this](bool warm, int64_t until) {
      for (uint64_t i = 0; i < o_.demand && error_.empty(); ++i) {
        const int64_t t = now_ns();
        if (warm ? t >= until : stop_.requested()) return;
        uint8_t flags = (i == 0 ? kFlagBurstFirst : 0) | (i + 1 == o_.demand ? kFlagBurstLast : 0);
        if (warm) flags |= kFlagWarmup;
        if (send(flags, warm ? warm_seq_ : seq_, stamp(t))) {
          if (warm) ++warm_seq_, ++warmup_sent_;
          else ++sent_, ++seq_;
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

  // Rate mode: the k-th sample is due at t0 + k * period and is stamped with
  // that intended time. A publisher that falls behind sends what it can as
  // soon as it can (its lateness shows up as latency, nothing is skipped) and
  // stops at the deadline: the samples due by then but not sent lower the
  // loop rate (sent / scheduled).
  void rate(int64_t warm_end) {
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

  std::string result(int64_t discovery_ns, const Footprint& footprint, int64_t t1, const Usage& u1) {
    const int64_t elapsed = t1 - t0_;
    JsonObject j;
    j.str("event", "result");
    common_fields(j, o_, ad_, footprint);
    if (o_.mode == Mode::latency || o_.mode == Mode::throughput) write_samples(j, o_, rtt_, 2);  // one-way = RTT/2
    j.unum("sent", sent_).unum("warmup_sent", warmup_sent_).num("elapsed_ns", elapsed);
    j.real("rate_hz", o_.rate_hz);
    j.unum("bursts", bursts_);
    if (o_.mode == Mode::rate) {
      const double period = 1e9 / o_.rate_hz;
      j.unum("scheduled", scheduled_).unum("unsent", scheduled_ - std::min(scheduled_, sent_));
      j.real("achieved_hz", scheduled_ > 0 ? double(sent_) * 1e9 / (double(scheduled_) * period) : 0.0);
    } else {
      j.null("scheduled").null("unsent");
      j.real("achieved_hz", elapsed > 0 ? double(sent_) * 1e9 / double(elapsed) : 0.0);
    }
    j.unum("pongs", pongs_).unum("ping_sent", ping_sent_).unum("ping_lost", ping_lost_).num("ping_timeout_ns", o_.ping_timeout_ns);
    j.unum("late_pongs", late_pongs_).unum("send_errors", send_errors_).unum("send_timeouts", send_timeouts_);
    j.unum("foreign", foreign_);
    j.num("discovery_ns", discovery_ns).boolean("stopped_early", stop_.requested());
    j.num("converged_after_ns", monitor_.at().after_ns).raw("convergence", convergence_json(monitor_.at(), 2))
        .raw("last_look", convergence_json(monitor_.last_look(), 2));
    j.num("cpu_user_ns", u1.user_ns - u0_.user_ns).num("cpu_sys_ns", u1.sys_ns - u0_.sys_ns);
    j.num("cpu_window_ns", elapsed).str("cpu_window", "first measured sample sent to the last").num("maxrss_kb", u1.maxrss_kb).raw("threads", threads_json(u0_, u1));
    if (o_.mode == Mode::burst) {
      j.null("rtt_ns").null("latency_ns").null("send_lag_ns");
    } else if (o_.mode == Mode::rate) {
      // How late the sends left against their schedule (timer wake-up, a
      // stalled middleware, falling behind): part of the one-way latency the sub reports.
      j.null("rtt_ns").null("latency_ns").raw("send_lag_ns", stats_json(lag_.summarize()));
    } else {
      const Summary rtt = monitor_.summary();
      j.raw("rtt_ns", stats_json(rtt)).raw("latency_ns", stats_json(halve(rtt))).null("send_lag_ns");
    }
    return j.done();
  }

  const Options& o_;
  Adapter& ad_;
  StopSignal& stop_;
  std::vector<uint8_t> tx_;
  LatencyStats rtt_, lag_;
  Monitor monitor_;
  Gate<Publisher> gate_;
  const int64_t base_;
  Header hdr_;
  int64_t t0_ = 0, end_ = INT64_MAX;
  Usage u0_;
  std::atomic<Phase> phase_{Phase::warmup};
  std::atomic<uint64_t> outstanding_{kNone};
  std::atomic<int64_t> ping_at_{0};
  std::atomic<bool> retry_{false}, quit_{false};
  bool drive_ = false, finished_ = false, listening_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread pong_thread_, watchdog_;
  uint64_t seq_ = 0, warm_seq_ = 0;
  // Owner of the ping (latency) or the main thread: sends; the handler: pongs.
  uint64_t sent_ = 0, warmup_sent_ = 0, ping_sent_ = 0, send_errors_ = 0, send_timeouts_ = 0, consecutive_errors_ = 0;
  uint64_t pongs_ = 0, late_pongs_ = 0, foreign_ = 0, ping_lost_ = 0, scheduled_ = 0, bursts_ = 0;
  std::string error_;
};

}  // namespace

std::unique_ptr<Session> make_publisher(const Options& o, Adapter& ad, StopSignal& stop) {
  return std::make_unique<Publisher>(o, ad, stop);
}

}  // namespace mwperf
