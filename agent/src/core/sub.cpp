// Subscriber: counts, checks and (when asked) echoes every sample; one-way
// latency from the publisher's stamp in rate and throughput modes.
//
// on_message() is the whole receive path: on the middleware's own thread in
// listen mode, on this agent's main thread when pulling. What the agent does
// for itself (the measured window's CPU, batches, the adaptive stop) runs on
// the monitor thread; the main thread only waits for the stop and drains.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "core/header.h"
#include "core/monitor.h"
#include "core/payload.h"
#include "core/seq_tracker.h"
#include "core/session.h"
#include "util/clock.h"
#include "util/own_threads.h"
#include "util/sysinfo.h"

namespace mwperf {
namespace {

static_assert(StopSignal::kMaxWakeTargets >= kMaxReaders, "every reader's untimed wait must be wakeable");
static_assert(StopSignal::kMaxSentCounts >= kMaxPublishers, "every publisher's count fits a stop line");

// One sequence space per publisher of the topic (--publishers): publisher
// p's numbers start at --seq-start + p << kPublisherShift.
std::vector<SeqTracker> trackers(const Options& o) {
  std::vector<SeqTracker> out;
  for (uint32_t p = 0; p < o.publishers; ++p) out.emplace_back(o.seq_start + (uint64_t(p) << kPublisherShift));
  return out;
}

class Subscriber final : public Session {
 public:
  Subscriber(const Options& o, Adapter& ad, StopSignal& stop)
      : o_(o),
        ad_(ad),
        stop_(stop),
        measure_oneway_(o.mode != Mode::latency || !o.echo),
        trackers_(trackers(o)),
        spans_(o.publishers, 0),
        oneway_(measure_oneway_ ? o.samples_max : 0),
        // The stop watches the one-way latency (rate mode) or the flow (throughput mode).
        monitor_(
            oneway_, o.mode == Mode::rate || o.mode == Mode::throughput ? o.precision : 0, o.confidence, o.duration_ns,
            [reader = o.reader](int64_t after) {
              // Reader 0's word stops the run, as subscriber 0's does with processes.
              if (reader == 0)
                emit(JsonObject().str("event", "converged").str("role", "sub").num("after_ns", after).done());
            },
            o.mode == Mode::throughput ? Flow{&received_, &missing_} : Flow{}),
        gate_(*this),
        base_(o.clock == StampClock::realtime ? realtime_base_ns() : 0),
        offset_(o.clock_offset_ns),
        writable_(ad.description().writable_data),
        loans_(ad.can_loan()) {
    if (!writable_ && !loans_) echo_.assign(o.size, 0);
    if (o.check_payload) payload_error_ = payload_.load(o.payload, o.size);
    if (o.mode == Mode::burst) {
      first_.emplace();
      last_.emplace();
    }
  }

  size_t own_bytes() const override {
    return echo_.size() + payload_.memory_bytes() + trackers_.size() * sizeof(SeqTracker) + oneway_.memory_bytes() +
           monitor_.memory_bytes() + (first_ ? first_->memory_bytes() + last_->memory_bytes() : 0);
  }

  // The receive path.
  void on_message(const uint8_t* data, size_t len) {
    const int64_t t = now_ns();
    const bool sample = take(data, len, t);
    last_any_.store(t, std::memory_order_relaxed);
    if (sample && o_.slow_ns > 0)
      std::this_thread::sleep_for(std::chrono::nanoseconds(o_.slow_ns));  // a slow reader, by request
  }

  std::string arm() override {
    if (ad_.receive_in_use() != "listener") return {};
    listening_ = true;
    return ad_.listen(&gate_) == Errc::ok ? std::string() : ad_.last_error();
  }

  Outcome run(int64_t, const Footprint& footprint) override {
    if (!payload_error_.empty()) return {3, error_event(o_, "--payload: '" + o_.payload + "' " + payload_error_)};
    cpu_watch_ = std::thread([this] { watch_cpu(); });
    monitor_.start(-1);  // measured from the first measured sample: the warm-up is not
    if (listening_) {    // armed before `matched`: the middleware's thread delivers
      while (error_.empty() && !stop_.wait(100'000'000)) {
      }
      while (error_.empty() && !drained()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      gate_.shut();
    } else {
      pull();
    }
    monitor_.stop();
    quit_.store(true);
    cpu_watch_.join();
    if (!error_.empty()) return {3, error_event(o_, error_)};
    return {0, result(footprint)};
  }

 private:
  // One message, received at t: counted, checked, measured, echoed. False for
  // a foreign message or a duplicate (nothing a slow reader lingers over).
  bool take(const uint8_t* data, size_t len, int64_t t) {
    Header h;
    if (decode_header(data, len, o_.key, &h) != HeaderCheck::ok || (h.flags & kFlagPong)) return foreign();
    // A stamp from before this agent started or from the future (beyond what
    // two clocks can disagree by) is no sample of this run, whatever it claims.
    const int64_t oneway = t + base_ - offset_ - h.send_ns;
    if (oneway < -o_.stamp_slack_ns || oneway > t - started_ + o_.stamp_slack_ns) return foreign();
    if (h.flags & kFlagWarmup) {
      ++warmup_received_;
    } else {
      // Whose: one publisher, or publisher p of --publishers (its own sequence space).
      const uint64_t rel = h.seq - o_.seq_start;
      const uint64_t p = trackers_.size() == 1 ? 0 : rel >> kPublisherShift;
      if (p >= trackers_.size()) return foreign();
      SeqTracker& tracker = trackers_[p];
      const uint64_t before_unique = tracker.unique(), before_missing = tracker.missing();
      const SeqTracker::Verdict v = tracker.on_seq(h.seq);
      if (v == SeqTracker::Verdict::before_first) return foreign();
      unique_ += tracker.unique() - before_unique;
      gaps_ += tracker.missing() - before_missing;
      received_.store(unique_, std::memory_order_relaxed);
      missing_.store(gaps_, std::memory_order_relaxed);
      if (v != SeqTracker::Verdict::fresh) return false;  // a duplicate is counted, never measured twice
      // How far the sequence numbers reach: never past what the publisher sent.
      const uint64_t span = (trackers_.size() == 1 ? rel : rel - (p << kPublisherShift)) + 1;
      if (span > spans_[p]) {
        spans_[p] = span;
        if (in_order_) newest_span_.store(span, std::memory_order_relaxed);
      }
      if (o_.check_payload) ++(payload_.matches(data, len, span - 1) ? payload_ok_ : payload_bad_);
      if (first_rx_ == 0) first_rx_ = t;
      last_rx_.store(t, std::memory_order_relaxed);
      if (measure_oneway_) {
        oneway_.add(oneway);
        if (h.flags & kFlagBurstFirst && first_) first_->add(oneway);
        if (h.flags & kFlagBurstLast && last_) last_->add(oneway);
      }
    }
    if ((h.flags & kFlagPing) && o_.echo) {
      // The ping goes back as a pong: byte 5 (Header::flags) changed, in place
      // where the adapter's data is its own; else in the middleware's loan,
      // which its own path filled (no copy of mwperf's inside a zero-copy
      // path); else in a copy.
      const uint8_t pong = uint8_t((h.flags & ~kFlagPing) | kFlagPong);
      if (!writable_ && loans_) {
        uint8_t* out = nullptr;
        Errc e = ad_.loan(data, len, &out);
        if (e == Errc::ok) {
          out[5] = pong;
          e = ad_.publish_loaned(out, len);
        }
        if (e != Errc::ok) ++echo_errors_;
      } else {
        uint8_t* out = writable_ ? const_cast<uint8_t*>(data) : echo_.data();
        if (!writable_) std::memcpy(out, data, len);
        out[5] = pong;
        if (ad_.send(out, len) != Errc::ok) ++echo_errors_;
      }
      if (o_.qos.batch) ad_.flush();
    }
    return true;
  }

  bool foreign() {
    ++foreign_;
    return false;
  }

  void pull() {
    // Untimed only when the stop can wake this reader (every reader registers its own adapter).
    const bool untimed = o_.wait == WaitMode::block && ad_.can_wake() && stop_.add_wake_target(&ad_);
    const int64_t slice = o_.wait == WaitMode::spin ? 0 : kBlockSliceNs;
    bool closed = false;
    for (;;) {
      if (stop_.requested() && drained()) break;
      if (closed) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      const uint8_t* data = nullptr;
      size_t len = 0;
      const Errc e = ad_.recv(&data, &len, untimed && !stop_.requested() ? -1 : slice);
      if (e == Errc::ok) {
        on_message(data, len);
      } else if (e == Errc::closed) {
        closed = true;
      } else if (e == Errc::too_big) {
        ++foreign_;
      } else if (e != Errc::timeout) {
        error_ = o_.mw + ": receive failed: " + ad_.last_error();
        break;
      }
    }
    if (untimed) stop_.remove_wake_target(&ad_);
  }

  // After the stop: everything the publisher sent is here (or, on an in-order
  // path, its newest sample), or the data path has been quiet for --drain.
  bool drained() {
    const int64_t sent = stop_.sent();
    if (sent >= 0 && received_.load(std::memory_order_relaxed) >= uint64_t(sent)) return true;
    // An in-order path whose newest sample is here: what is missing is lost (Description::in_order).
    if (sent >= 0 && in_order_ && newest_span_.load(std::memory_order_relaxed) >= uint64_t(sent)) return true;
    const int64_t t = now_ns();
    if (stop_seen_ == 0) stop_seen_ = t;
    const int64_t drain = o_.drain_ns >= 0                         ? o_.drain_ns
                          : ad_.reliability_in_use() == "reliable" ? kDrainReliableNs
                                                                   : kDrainBestEffortNs;
    return t - std::max(last_any_.load(std::memory_order_relaxed), stop_seen_) >= drain;
  }

  // The measured window's CPU, read off the receive path: from its first
  // measured sample (seen within 2 ms) to its last one (read within kCpuTickNs
  // after it), the publisher's measured window as it reached this side; not
  // the wait for the stop, the publisher's settle or the drain's quiet time.
  void watch_cpu() {
    const OwnThread me("mwperf-cpu");
    while (!quit_.load() && received_.load(std::memory_order_relaxed) == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    u0_ = u1_ = usage_now();
    cpu_t0_ = cpu_t1_ = now_ns();
    std::map<int, ThreadTime> known;  // names and starts, read once a thread
    for (const ThreadTime& t : u0_.threads) known.emplace(t.tid, t);
    int64_t seen = 0;  // the last sample's arrival that u1_ is after
    for (bool last = false; !last;) {
      last = quit_.load();
      if (!last) std::this_thread::sleep_for(std::chrono::nanoseconds(kCpuTickNs));
      const int64_t rx = last_rx_.load(std::memory_order_relaxed);
      if (rx == seen) continue;
      u1_ = usage_quick(&known);
      cpu_t1_ = now_ns();
      seen = rx;
    }
    u1_.maxrss_kb = status_kb("VmHWM");  // the peak so far (usage_quick reads none)
  }

  std::string result(const Footprint& footprint) {
    const Usage& u1 = u1_;
    const int64_t t1 = cpu_t1_;
    const int64_t sent = stop_.requested() ? stop_.sent() : -1;
    const uint64_t n = unique_;
    const int64_t span = last_rx_.load() - first_rx_;
    const bool measured = received_.load() > 0;
    JsonObject j;
    j.str("event", "result");
    common_fields(j, o_, ad_, footprint);
    if (o_.mode == Mode::rate) write_samples(j, o_, oneway_, 1);
    uint64_t lost = 0, duplicates = 0, out_of_order = 0, seq_span = 0;
    const bool each_known = o_.publishers == 1 || stop_.sent_of(0, o_.publishers) >= 0;
    std::string per;  // N:M: each publisher's counts
    for (size_t p = 0; p < trackers_.size(); ++p) {
      const SeqTracker& t = trackers_[p];
      const int64_t sent_p = stop_.requested() ? stop_.sent_of(p, o_.publishers) : -1;
      lost += t.lost(sent_p), duplicates += t.duplicates(), out_of_order += t.out_of_order();
      seq_span = std::max(seq_span, spans_[p]);
      per += (p ? "," : "") + JsonObject()
                                  .unum("publisher", p)
                                  .num("sent_known", sent_p)
                                  .unum("received", t.unique())
                                  .unum("lost", t.lost(sent_p))
                                  .unum("duplicates", t.duplicates())
                                  .unum("out_of_order", t.out_of_order())
                                  .unum("seq_span", spans_[p])
                                  .done();
    }
    if (!each_known && sent >= 0) lost = uint64_t(std::max<int64_t>(sent - int64_t(n), 0));  // one total for all
    j.unum("received", n).unum("lost", lost).num("sent_known", sent).unum("seq_span", seq_span);
    j.unum("duplicates", duplicates).unum("out_of_order", out_of_order);
    if (o_.publishers > 1) j.raw("per_publisher", "[" + per + "]");
    if (o_.check_payload) j.unum("payload_matched", payload_ok_).unum("payload_mismatched", payload_bad_);
    j.unum("foreign", foreign_).unum("warmup_received", warmup_received_).unum("echo_errors", echo_errors_);
    j.num("converged_after_ns", monitor_.at().after_ns)
        .raw("convergence", convergence_json(monitor_.at(), 1))
        .raw("last_look", convergence_json(monitor_.last_look(), 1));
    j.num("first_rx_ns", first_rx_).num("last_rx_ns", last_rx_.load()).num("rx_elapsed_ns", span);
    j.num("elapsed_ns", span);
    j.real("samples_per_s", n >= 2 && span > 0 ? double(n - 1) * 1e9 / double(span) : 0.0);
    j.num("clock_offset_ns", offset_);
    j.num("cpu_user_ns", measured ? u1.user_ns - u0_.user_ns : 0)
        .num("cpu_sys_ns", measured ? u1.sys_ns - u0_.sys_ns : 0);
    j.num("cpu_window_ns", measured ? t1 - cpu_t0_ : 0).num("maxrss_kb", u1.maxrss_kb);
    j.str("cpu_window", "first measured sample received to the last (read within 10 ms of it)");
    j.raw("threads", measured ? threads_json(u0_, u1) : "[]");
    j.raw("latency_ns", measure_oneway_ ? stats_json(monitor_.summary()) : "null");
    if (o_.mode == Mode::burst) {
      j.raw("burst_first_ns", stats_json(first_->summarize())).raw("burst_last_ns", stats_json(last_->summarize()));
    }
    const int64_t rejected = ad_.rejected();
    if (rejected >= 0)
      j.num("rejected", rejected);
    else
      j.null("rejected");
    j.boolean("echo", o_.echo).num("slow_subscriber_ns", o_.slow_ns);
    // Which reader of this process (--subscribers-as threads); CPU, RSS and threads are the
    // process's, shared by all its readers: count them once.
    j.unum("reader", o_.reader).unum("readers", o_.readers).str("cpu_scope", "process");
    return j.done();
  }

  const Options& o_;
  Adapter& ad_;
  StopSignal& stop_;
  const bool measure_oneway_;
  std::vector<SeqTracker> trackers_;  // one per publisher (--publishers)
  std::vector<uint64_t> spans_;       // each publisher's highest measured sequence number received, from its first, + 1
  // One publisher on an in-order path: its span, read by the drain on another thread.
  const bool in_order_ = ad_.description().in_order && o_.publishers == 1;
  std::atomic<uint64_t> newest_span_{0};
  uint64_t unique_ = 0, gaps_ = 0;  // over every publisher
  Payload payload_;                 // --check-payload: what every body should hold
  std::string payload_error_;
  uint64_t payload_ok_ = 0, payload_bad_ = 0;
  LatencyStats oneway_;
  std::optional<LatencyStats> first_, last_;  // burst mode: the first and the last sample of each burst
  Monitor monitor_;
  Gate<Subscriber> gate_;
  const int64_t base_, offset_;
  const bool writable_, loans_;
  std::vector<uint8_t> echo_;  // the pong, when the data delivered is not ours to change and no loan takes it
  std::atomic<uint64_t> received_{0}, missing_{0};  // for the flow's monitor
  std::atomic<int64_t> last_any_{0};
  std::atomic<bool> quit_{false};
  bool listening_ = false;  // armed: the listener delivers
  std::thread cpu_watch_;
  static constexpr int64_t kCpuTickNs = 10'000'000;
  Usage u0_, u1_;
  int64_t cpu_t0_ = 0, cpu_t1_ = 0, stop_seen_ = 0;
  const int64_t started_ = now_ns();  // no sample of this run was sent before
  int64_t first_rx_ = 0;
  std::atomic<int64_t> last_rx_{0};
  uint64_t foreign_ = 0, warmup_received_ = 0, echo_errors_ = 0;
  std::string error_;
};

}  // namespace

std::unique_ptr<Session> make_subscriber(const Options& o, Adapter& ad, StopSignal& stop) {
  return std::make_unique<Subscriber>(o, ad, stop);
}

}  // namespace mwperf
