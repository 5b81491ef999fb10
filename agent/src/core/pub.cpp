// Publisher: what every mode shares (core/publisher.h): the handler of the pongs,
// the run, sending, and the result.
#include <algorithm>
#include <cmath>

#include "core/publisher.h"

namespace mwperf {

void Publisher::on_message(const uint8_t* data, size_t len) {
  const int64_t t = now_ns();
  Header h;
  // A pong numbered below this point's first (an earlier point of an agent
  // pair, --reuse) is not this point's.
  if (decode_header(data, len, o_.key, &h) != HeaderCheck::ok || !(h.flags & kFlagPong) ||
      h.seq - o_.seq_start >= (uint64_t(1) << 63)) {
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

Outcome Publisher::run(int64_t discovery_ns, const Footprint& footprint) {
  if (!payload_error_.empty()) return {3, error_event(o_, "--payload: '" + o_.payload + "' " + payload_error_)};
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
    case Mode::latency:
      listen ? latency_driven(warm_end) : latency_pulled(warm_end);
      break;
    case Mode::throughput:
      throughput(warm_end);
      break;
    case Mode::rate:
      rate(warm_end);
      break;
    case Mode::burst:
      burst(warm_end);
      break;
  }
  const int64_t t1 = now_ns();
  const Usage u1 = usage_now();
  monitor_.stop();
  stop_threads();
  gate_.shut();
  if (!error_.empty()) return {3, error_event(o_, error_)};
  return {0, result(discovery_ns, footprint, t1, u1)};
}

void Publisher::stop_threads() {
  quit_.store(true);
  if (pong_thread_.joinable()) {
    ad_.wake();
    pong_thread_.join();
  }
  if (watchdog_.joinable()) watchdog_.join();
}

std::string Publisher::result(int64_t discovery_ns, const Footprint& footprint, int64_t t1, const Usage& u1) {
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
  j.unum("pongs", pongs_)
      .unum("ping_sent", ping_sent_)
      .unum("ping_lost", ping_lost_)
      .num("ping_timeout_ns", o_.ping_timeout_ns);
  j.unum("late_pongs", late_pongs_).unum("send_errors", send_errors_).unum("send_timeouts", send_timeouts_);
  j.unum("foreign", foreign_);
  j.num("discovery_ns", discovery_ns).boolean("stopped_early", stop_.requested());
  j.num("converged_after_ns", monitor_.at().after_ns)
      .raw("convergence", convergence_json(monitor_.at(), 2))
      .raw("last_look", convergence_json(monitor_.last_look(), 2));
  j.num("cpu_user_ns", u1.user_ns - u0_.user_ns).num("cpu_sys_ns", u1.sys_ns - u0_.sys_ns);
  j.num("cpu_window_ns", elapsed)
      .str("cpu_window", "first measured sample sent to the last")
      .num("maxrss_kb", u1.maxrss_kb)
      .raw("threads", threads_json(u0_, u1));
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

std::unique_ptr<Session> make_publisher(const Options& o, Adapter& ad, StopSignal& stop) {
  return std::make_unique<Publisher>(o, ad, stop);
}

}  // namespace mwperf
