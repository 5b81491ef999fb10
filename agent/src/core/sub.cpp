// Subscriber: counts, checks and (when asked) echoes every sample; one-way
// latency from the publisher's stamp in rate and throughput modes.
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/header.h"
#include "core/json.h"
#include "core/seq_tracker.h"
#include "core/session.h"
#include "core/stats.h"
#include "core/sysinfo.h"

namespace mwperf {

Outcome run_sub(const Options& o, Adapter& ad, StopSignal& stop) {
  std::vector<uint8_t> rx(o.size);
  SeqTracker tracker(o.seq_start);
  LatencyStats oneway(o.max_samples);
  // Blocking: untimed while the run lasts when the adapter can be woken (the
  // stop wakes it), timed slices while draining after the stop.
  const bool untimed = o.wait == WaitMode::block && ad.can_wake();
  const int64_t slice = o.wait == WaitMode::spin ? 0 : kBlockSliceNs;
  if (untimed) stop.set_wake_target(&ad);
  const bool measure_oneway = o.mode != Mode::latency;

  uint64_t foreign = 0, warmup_received = 0, echo_errors = 0;
  int64_t first_rx = 0, last_rx = 0, last_any = now_ns(), stop_seen = 0;
  bool closed = false;
  // Adaptive duration (rate mode: the sub owns the headline one-way latency; in
  // throughput mode the pub's pings do, as in latency mode): say once
  // on stdout when p50 and p99 are known to --precision; the controller then
  // stops the publisher.
  const bool adaptive = o.precision > 0 && o.mode == Mode::rate;
  if (adaptive) oneway.reserve_scratch();  // keep the samples in arrival order
  int64_t next_check = 0, converged_after = -1;
  Convergence convergence;
  Usage u0;
  std::string error;

  for (;;) {
    if (stop.requested()) {
      const int64_t sent = stop.sent();
      if (sent >= 0 && tracker.unique() >= uint64_t(sent)) break;
      const int64_t t = now_ns();
      if (stop_seen == 0) stop_seen = t;
      if (t - std::max(last_any, stop_seen) >= o.drain_ns) break;  // the data path went quiet
    }
    if (closed) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    size_t len = 0;
    const Errc e = ad.recv(rx.data(), rx.size(), untimed && !stop.requested() ? -1 : slice, &len);
    if (e == Errc::timeout) continue;
    if (e == Errc::closed) {
      closed = true;
      continue;
    }
    if (e == Errc::too_big) {
      ++foreign;
      continue;
    }
    if (e != Errc::ok) {
      error = std::string(ad.name()) + ": receive failed: " + ad.last_error();
      break;
    }
    const int64_t t = now_ns();
    last_any = t;
    Header h;
    if (decode_header(rx.data(), len, o.run_id, &h) != HeaderCheck::ok || (h.flags & kFlagPong)) {
      ++foreign;
      continue;
    }
    if (h.flags & kFlagWarmup) {
      ++warmup_received;
    } else {
      if (first_rx == 0) {
        first_rx = t;
        u0 = usage_now();
        next_check = t + kConvergenceMinNs;
      }
      last_rx = t;
      tracker.on_seq(h.seq);
      if (measure_oneway) oneway.add(t - h.send_ns);
      if (adaptive && converged_after < 0 && t >= next_check) {
        next_check = t + kConvergenceCheckNs;
        Interval a, b;
        if (oneway.converged(o.precision, o.z, &a, &b)) {
          converged_after = t - first_rx;
          convergence = Convergence{converged_after, oneway.kept(), a, b};
          emit(JsonObject().str("event", "converged").str("role", "sub").num("after_ns", converged_after).done());
        }
      }
    }
    if (h.flags & kFlagPing) {
      rx[5] = uint8_t((h.flags & ~kFlagPing) | kFlagPong);  // byte 5 = Header::flags
      if (ad.send(rx.data(), len) != Errc::ok) ++echo_errors;
      if (o.qos.batch) ad.flush();
    }
  }
  stop.set_wake_target(nullptr);
  const Usage u1 = usage_now();
  if (first_rx == 0) u0 = u1;
  if (!error.empty()) return {3, error_event(o, error)};

  const int64_t sent = stop.requested() ? stop.sent() : -1;
  const uint64_t n = tracker.unique();
  const int64_t span = last_rx - first_rx;
  JsonObject j;
  j.str("event", "result");
  common_fields(j, o, ad);
  if (o.mode == Mode::rate) write_samples(j, o, oneway, 1);
  j.unum("received", n).unum("lost", tracker.lost(sent)).num("sent_known", sent);
  j.unum("duplicates", tracker.duplicates()).unum("out_of_order", tracker.out_of_order());
  j.unum("foreign", foreign).unum("warmup_received", warmup_received).unum("echo_errors", echo_errors);
  j.num("converged_after_ns", converged_after).convergence("convergence", convergence, 1);
  j.num("first_rx_ns", first_rx).num("last_rx_ns", last_rx).num("rx_elapsed_ns", span);
  j.num("elapsed_ns", span);
  j.real("samples_per_s", n >= 2 && span > 0 ? double(n - 1) * 1e9 / double(span) : 0.0);
  j.num("cpu_user_ns", u1.user_ns - u0.user_ns).num("cpu_sys_ns", u1.sys_ns - u0.sys_ns);
  j.num("maxrss_kb", u1.maxrss_kb).unum("stats_buffer_kb", oneway.buffer_bytes() / 1024);
  if (measure_oneway) {
    j.stats("latency_ns", oneway.summarize());
  } else {
    j.null("latency_ns");
  }
  return {0, j.done()};
}

}  // namespace mwperf
