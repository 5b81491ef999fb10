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
//
// One class, one file per kind of measurement (as iceoryx2's benchmarks keep
// theirs): pub.cpp (what every mode shares: the pongs' handler, sending, the
// result), pub_latency.cpp (the pings), pub_throughput.cpp, pub_rate.cpp,
// pub_burst.cpp. Core-internal: only these files include it.
#pragma once
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/control.h"
#include "core/header.h"
#include "core/monitor.h"
#include "core/payload.h"
#include "core/session.h"
#include "util/clock.h"
#include "util/sysinfo.h"

namespace mwperf {

constexpr uint64_t kMaxConsecutiveSendErrors = 1000;
constexpr uint64_t kNone = ~uint64_t(0);
constexpr int64_t kWatchNs = 100'000'000;               // how often a lost ping is looked for
constexpr uint64_t kWarmSeqOffset = uint64_t(1) << 62;  // warm-up pings never share a sequence number

enum class Phase { warmup, measure, stopping };

class Publisher final : public Session {
 public:
  Publisher(const Options& o, Adapter& ad, StopSignal& stop)
      : o_(o),
        ad_(ad),
        stop_(stop),
        rtt_(pings() ? o.samples_max : 0),
        lag_(0),
        // the stop of a throughput point watches the subscriber's flow, not the pings
        monitor_(rtt_, o.mode == Mode::latency ? o.precision : 0, o.confidence, o.duration_ns),
        gate_(*this),
        base_(o.clock == StampClock::realtime ? realtime_base_ns() : 0) {
    hdr_ = Header{kMagic, kHeaderVersion, 0, {}, uint32_t(o.size), 0, 0};
    payload_error_ = payload_.load(o.payload, o.size);
    seq_ = o.seq_start;
    warm_seq_ = o.seq_start + kWarmSeqOffset;
  }

  ~Publisher() override { stop_threads(); }

  size_t own_bytes() const override {
    return payload_.memory_bytes() + rtt_.memory_bytes() + lag_.memory_bytes() + monitor_.memory_bytes();
  }

  // The core's handler of everything that comes back (pongs).
  void on_message(const uint8_t* data, size_t len);

  Outcome run(int64_t discovery_ns, const Footprint& footprint) override;

 private:
  int64_t stamp(int64_t mono) const { return mono + base_; }
  // The modes whose headline latency is the publisher's (RTT/2 of pings).
  bool pings() const { return o_.mode == Mode::latency || o_.mode == Mode::throughput; }
  bool untimed() const { return o_.wait == WaitMode::block && ad_.can_wake(); }
  bool counted_out() const { return o_.samples > 0 && sent_ >= o_.samples; }
  // The measured phase is over: its end, the controller's stop, the adaptive
  // stop, or --samples.
  bool done(int64_t t) const { return t >= end_ || stop_.requested() || monitor_.converged() || counted_out(); }

  void begin_measuring(int64_t t0) {
    t0_ = t0;
    end_ = t0 + o_.duration_ns;
    u0_ = usage_now();
    monitor_.start(t0);
  }

  // Sends one message; false when it did not go out (timeout or error). Here,
  // not in pub.cpp: every mode's send loop inlines it.
  bool send(uint8_t flags, uint64_t seq, int64_t stamp_ns) {
    hdr_.flags = flags;
    hdr_.seq = seq;
    hdr_.send_ns = stamp_ns;
    uint8_t* tx = payload_.message(seq - o_.seq_start);  // its chunk (--payload file:PATH), in turn
    encode_header(hdr_, o_.key, tx);
    const Errc e = ad_.send(tx, o_.size);
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
      error_ = o_.mw + ": " + std::to_string(consecutive_errors_) + " sends failed in a row, last: " + ad_.last_error();
    return false;
  }

  // Latency mode: the owner of the next ping sends it (or ends the run).
  void next_ping();

  void finish();

  // The ping in flight is overdue: give up on it (if its pong did not win).
  bool expire(int64_t t);

  // Latency mode with listener delivery: the handler drives the pings; this
  // thread only flips the phases, gives up on lost pings and waits.
  void latency_driven(int64_t warm_end);

  void wait_driven(int64_t until, bool measuring);

  // Latency mode, pulled: this thread sends a ping and receives its pong.
  void latency_pulled(int64_t warm_end);

  void await_pong();

  // Wakes an untimed wait for a pong that is overdue (lost).
  void watch();

  // Throughput mode: receives the pongs of the interleaved pings as they arrive.
  void pull_pongs();

  // A pong waiting, taken on the sending thread (no pong thread for this adapter).
  void poll_pong();

  void stop_threads();

  void throughput(int64_t warm_end);

  // Burst mode: `demand` samples back to back (the first and the last
  // flagged, for their latency), flushed, then the pause. The measured phase
  // ends at its deadline between bursts: a burst once begun is written whole
  // (samples written = demand x bursts, less what the middleware refused),
  // unless the controller stops the run.
  void burst(int64_t warm_end);

  // Rate mode: the k-th sample is due at t0 + k * period and is stamped with
  // that intended time. A publisher that falls behind sends what it can as
  // soon as it can (its lateness shows up as latency, nothing is skipped) and
  // stops at the deadline: the samples due by then but not sent lower the
  // loop rate (sent / scheduled).
  void rate(int64_t warm_end);

  std::string result(int64_t discovery_ns, const Footprint& footprint, int64_t t1, const Usage& u1);

  const Options& o_;
  Adapter& ad_;
  StopSignal& stop_;
  Payload payload_;  // every message's buffer: header space, then the body (--payload)
  std::string payload_error_;
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

}  // namespace mwperf
