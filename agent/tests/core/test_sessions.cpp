// The publisher's and subscriber's logic against ground truth set up here: an
// in-process channel whose sends can be made slow or lossy (a test double for
// the transport, never a middleware), two threads, one clock.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <regex>
#include <thread>
#include <vector>

#include "core/description.h"
#include "core/header.h"
#include "core/session.h"
#include "util/clock.h"

using namespace mwperf;

namespace {

struct Queue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::vector<uint8_t>> q;
  bool woken = false;
};

// Both directions between one pub and one sub.
struct Channel {
  Queue to_sub, to_pub;
  int64_t send_delay_ns = 0;  // every data send takes this long (a slow middleware)
  int64_t echo_delay_ns = 0;  // every echo takes this long before it goes
  uint64_t drop_every = 0;    // drop every Nth data message (exact loss)
  // What the channel saw: the ground truth the sessions' counts are checked against.
  std::atomic<uint64_t> data_sent{0};  // data messages the publisher handed over
  std::atomic<uint64_t> dropped{0};    // of them, dropped on the way
  std::atomic<uint64_t> echoes{0};     // messages the subscriber sent back
  std::atomic<uint64_t> warm_sent{0}, warm_dropped{0}, warm_echoes{0};  // of each, warm-up ones (header flag)
};

class LoopAdapter final : public Adapter {
 public:
  LoopAdapter(Channel& c, Role role, bool listener) : c_(c), role_(role), listener_(listener) {}
  ~LoopAdapter() override { close(); }
  const Description& description() const override {
    static Description d = [] {
      Description x;
      x.max_size = 1 << 20;
      x.transports = x.transport = "loop";
      x.reliabilities = x.reliability = "best-effort";
      x.receives = "listener,waitset";
      x.receive = "waitset";
      return x;
    }();
    return d;
  }
  std::string version() const override { return "test"; }
  std::string effective_config() const override { return "{}"; }
  Errc open(const AdapterConfig&) override {
    receive_ = listener_ ? "listener" : "waitset";
    transport_ = "loop";
    reliability_ = "best-effort";
    return Errc::ok;
  }
  Errc wait_matched(int64_t) override { return Errc::ok; }
  Errc send(const uint8_t* data, size_t len) override {
    Queue& out = role_ == Role::pub ? c_.to_sub : c_.to_pub;
    const bool warm = len > 5 && (data[5] & kFlagWarmup);  // Header::flags
    if (role_ == Role::pub) {
      if (c_.send_delay_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(c_.send_delay_ns));
      c_.warm_sent += warm;
      if (++c_.data_sent % (c_.drop_every ? c_.drop_every : UINT64_MAX) == 0) {
        ++c_.dropped;
        c_.warm_dropped += warm;
        return Errc::ok;  // lost on the way
      }
    } else {
      if (c_.echo_delay_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(c_.echo_delay_ns));
      ++c_.echoes;
      c_.warm_echoes += warm;
    }
    {
      std::lock_guard<std::mutex> lk(out.mu);
      out.q.emplace_back(data, data + len);
    }
    out.cv.notify_one();
    return Errc::ok;
  }
  Errc recv(const uint8_t** data, size_t* len, int64_t timeout_ns) override {
    Queue& in = role_ == Role::pub ? c_.to_pub : c_.to_sub;
    std::unique_lock<std::mutex> lk(in.mu);
    auto ready = [&] { return !in.q.empty() || in.woken; };
    if (timeout_ns < 0) in.cv.wait(lk, ready);
    else in.cv.wait_for(lk, std::chrono::nanoseconds(timeout_ns), ready);
    if (in.q.empty()) {
      in.woken = false;
      return Errc::timeout;
    }
    buf_ = std::move(in.q.front());
    in.q.pop_front();
    *data = buf_.data();
    *len = buf_.size();
    return Errc::ok;
  }
  Errc listen(Receiver* r) override {
    thread_ = std::thread([this, r] {
      const uint8_t* d;
      size_t n;
      while (!quit_) {
        if (recv(&d, &n, 5'000'000) == Errc::ok) r->on_message(d, n);
      }
    });
    return Errc::ok;
  }
  bool can_wake() const override { return true; }
  void wake() override {
    Queue& in = role_ == Role::pub ? c_.to_pub : c_.to_sub;
    {
      std::lock_guard<std::mutex> lk(in.mu);
      in.woken = true;
    }
    in.cv.notify_all();
  }
  void close() override {
    quit_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  Channel& c_;
  Role role_;
  bool listener_;
  std::vector<uint8_t> buf_;
  std::thread thread_;
  std::atomic<bool> quit_{false};
};

double field(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\":(-?[0-9.eE+]+)");
  if (!std::regex_search(json, m, re)) return -1;
  return std::stod(m[1]);
}

std::string object(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":{");
  if (at == std::string::npos) return "";
  return json.substr(at, json.find('}', at) - at + 1);
}

// The object at key, with the objects nested in it.
std::string object_at(const std::string& json, const std::string& key) {
  size_t at = json.find("\"" + key + "\":{");
  if (at == std::string::npos) return "";
  at = json.find('{', at);
  int depth = 0;
  for (size_t i = at; i < json.size(); ++i) {
    depth += json[i] == '{' ? 1 : json[i] == '}' ? -1 : 0;
    if (depth == 0) return json.substr(at, i - at + 1);
  }
  return "";
}

struct Point {
  std::string pub, sub;
  int64_t wall_ns = 0;
};

Options options(Mode mode, Role role) {
  Options o;
  o.command = "run";
  o.mw = "loop";
  o.role = role;
  o.mode = mode;
  o.size = 64;
  o.warmup_ns = 0;
  o.duration_ns = 300'000'000;
  o.ping_timeout_ns = 200'000'000;
  o.drain_ns = 100'000'000;
  return o;
}

// Runs one point: sub and pub sessions on two threads, the stop as the controller sends it.
Point run_point(Options po, Channel& ch, bool listener = false) {
  Options so = po;
  so.role = Role::sub;
  LoopAdapter pa(ch, Role::pub, listener), sa(ch, Role::sub, listener);
  AdapterConfig cfg;
  pa.open(cfg);
  sa.open(cfg);
  StopSignal pstop, sstop;
  auto pub = make_publisher(po, pa, pstop);
  auto sub = make_subscriber(so, sa, sstop);
  Point p;
  std::thread st([&] { p.sub = sub->run(0, Footprint{}).line; });
  const int64_t t0 = now_ns();
  p.pub = pub->run(0, Footprint{}).line;
  p.wall_ns = now_ns() - t0;
  sstop.request(int64_t(field(p.pub, "sent")));
  st.join();
  pa.close();
  sa.close();
  return p;
}

}  // namespace

TEST(Rate, KeepsTheScheduleWhenItCan) {
  Channel ch;
  Options o = options(Mode::rate, Role::pub);
  o.rate_hz = 200;  // 5 ms apart: kept even on a busy machine
  const Point p = run_point(o, ch);
  EXPECT_EQ(field(p.pub, "scheduled"), 60);
  EXPECT_EQ(field(p.pub, "sent"), 60);
  EXPECT_EQ(field(p.pub, "unsent"), 0);
  EXPECT_EQ(field(p.sub, "received"), 60);
  EXPECT_EQ(field(p.sub, "lost"), 0);
}

TEST(Rate, APublisherThatCannotKeepUpStopsAtTheDeadline) {
  // Every send takes 2 ms: at 1000 Hz for 400 ms, 400 are due and at most 200
  // can go (fewer on a loaded machine, where each sleep overruns).
  Channel ch;
  ch.send_delay_ns = 2'000'000;
  Options o = options(Mode::rate, Role::pub);
  o.rate_hz = 1000;
  o.duration_ns = 400'000'000;
  const Point p = run_point(o, ch);
  EXPECT_EQ(field(p.pub, "scheduled"), 400);
  const double sent = double(ch.data_sent);  // what reached the channel
  EXPECT_GE(sent, 50);
  EXPECT_LE(sent, 201);
  EXPECT_EQ(field(p.pub, "sent"), sent);
  EXPECT_EQ(field(p.pub, "unsent"), 400 - sent);  // 400 due (1000 Hz x 400 ms), the rest never reached it
  EXPECT_LT(field(p.pub, "elapsed_ns"), 400e6 + 50e6);  // the deadline, not 400 sends (800 ms)
  // Stamped with the intended time: the last sample left ~200 ms after it was due.
  const std::string lat = object(p.sub, "latency_ns");
  EXPECT_GT(field(lat, "max"), 150e6);
  // and the send lag says the same from the publisher's side
  EXPECT_GT(field(object(p.pub, "send_lag_ns"), "max"), 150e6);
}

TEST(Rate, LossIsExactlyWhatTheChannelDropped) {
  Channel ch;
  ch.drop_every = 10;
  Options o = options(Mode::rate, Role::pub);
  o.rate_hz = 2000;
  const Point p = run_point(o, ch);
  EXPECT_GT(double(ch.data_sent), 100);
  EXPECT_EQ(field(p.pub, "sent"), double(ch.data_sent));
  EXPECT_EQ(field(p.sub, "lost"), double(ch.dropped));  // every 10th, whatever the phase
  EXPECT_EQ(field(p.sub, "received"), double(ch.data_sent - ch.dropped));
}

TEST(Latency, PulledPingPong) {
  Channel ch;
  const Point p = run_point(options(Mode::latency, Role::pub), ch);
  EXPECT_GT(double(ch.data_sent), 100);
  EXPECT_EQ(field(p.pub, "sent"), double(ch.data_sent - ch.warm_sent));
  EXPECT_EQ(field(p.pub, "pongs"), double(ch.echoes - ch.warm_echoes));
  EXPECT_EQ(field(p.pub, "ping_lost"), 0);
  // one round trip per measured echo the channel carried
  EXPECT_EQ(field(object(p.pub, "rtt_ns"), "count"), double(ch.echoes - ch.warm_echoes));
}

TEST(Latency, ListenerDrivenPingPong) {
  Channel ch;
  const Point p = run_point(options(Mode::latency, Role::pub), ch, true);
  EXPECT_GT(double(ch.data_sent), 100);
  EXPECT_EQ(field(p.pub, "sent"), double(ch.data_sent - ch.warm_sent));
  EXPECT_EQ(field(p.pub, "pongs"), double(ch.echoes - ch.warm_echoes));
  EXPECT_EQ(field(p.pub, "ping_lost"), 0);
  EXPECT_LT(p.wall_ns, 300e6 + 150e6);
}

TEST(Latency, LostPingsAreCountedAndTheRunGoesOn) {
  // Every 4th ping is dropped: each waits out the ping timeout, then the next one goes.
  for (bool listener : {false, true}) {
    Channel ch;
    ch.drop_every = 4;
    Options o = options(Mode::latency, Role::pub);
    o.ping_timeout_ns = 20'000'000;
    o.duration_ns = 200'000'000;
    const Point p = run_point(o, ch, listener);
    EXPECT_GT(double(ch.dropped), 0) << listener;
    EXPECT_EQ(field(p.pub, "ping_lost"), double(ch.dropped - ch.warm_dropped)) << listener;
    EXPECT_EQ(field(p.pub, "pongs"), double(ch.echoes - ch.warm_echoes)) << listener;
    EXPECT_EQ(field(p.pub, "late_pongs"), 0) << listener;
  }
}

TEST(Latency, PingsBeyondTheTimeoutAreLostAndTheirLatePongsCounted) {
  // Every echo takes 60 ms, the ping timeout is 20 ms: no round trip is
  // measured (the latency is censored at the timeout), every ping the channel
  // carried is lost, and the echoes that still come back are late pongs.
  Channel ch;
  ch.echo_delay_ns = 60'000'000;
  Options o = options(Mode::latency, Role::pub);
  o.ping_timeout_ns = 20'000'000;
  const Point p = run_point(o, ch);
  EXPECT_GT(double(ch.data_sent), 5);
  EXPECT_EQ(field(p.pub, "pongs"), 0);
  EXPECT_EQ(field(p.pub, "ping_lost"), double(ch.data_sent - ch.warm_sent));
  EXPECT_GT(field(p.pub, "late_pongs"), 0);
  EXPECT_LE(field(p.pub, "late_pongs"), double(ch.echoes));
  EXPECT_EQ(field(object(p.pub, "rtt_ns"), "count"), 0);
}

TEST(Adaptive, TheSubscribersLooksAreTimedFromItsFirstMeasuredSample) {
  // 2 s of warm-up, then 1 s measured: the stop rule's looks (whatever they
  // find) come 0.5 s into the measured phase and later, up to its end and
  // the drain; never after the warm-up's 2 s.
  Channel ch;
  Options o = options(Mode::rate, Role::pub);
  o.rate_hz = 2000;
  o.warmup_ns = 2'000'000'000;
  o.duration_ns = 1'000'000'000;
  o.precision = 0.05;
  const Point p = run_point(o, ch);
  const std::string look = object_at(p.sub, "last_look");
  ASSERT_FALSE(look.empty()) << p.sub;
  EXPECT_GE(field(look, "after_ns"), 0.5e9);
  EXPECT_LT(field(look, "after_ns"), 1.5e9);
}

TEST(Adaptive, AThroughputPointsStopWatchesItsRateAndLoss) {
  // Every 10th sample is dropped: the loss the subscriber's looks see is
  // 10 %, exactly, and where they stopped, the loss interval holds it. (The
  // rule itself, on series of known truth: test_stop.cpp.)
  Channel ch;
  ch.drop_every = 10;
  ch.send_delay_ns = 200'000;  // about 5000 samples/s
  Options o = options(Mode::throughput, Role::pub);
  o.duration_ns = 2'000'000'000;
  o.precision = 0.5;
  const Point p = run_point(o, ch);
  const std::string look = object_at(p.sub, "last_look");
  ASSERT_FALSE(look.empty()) << p.sub;
  const std::string loss = object(look, "loss");
  EXPECT_NEAR(field(loss, "est"), 0.1, 0.005) << look;
  if (field(p.sub, "converged_after_ns") >= 0) {
    EXPECT_LE(field(loss, "lo"), 0.1);
    EXPECT_GE(field(loss, "hi"), 0.1);
  }
  EXPECT_GT(field(object(look, "rate"), "est"), 0);
  EXPECT_EQ(field(p.pub, "converged_after_ns"), -1);  // not the pings'
}

TEST(Throughput, PongsAreTimedAsTheyArrive) {
  // Every data send blocks 40 ms before its message goes (a writer that
  // waits), every echo 20 ms: the pong is back 60 ms after its ping was
  // stamped, while the publisher sits in its next send (40 ms to 80 ms).
  // Timed as it arrives (pong thread or listener) its RTT is 60 ms; polled
  // when the next send returns it would be 80 ms. The margin between them
  // (10 ms each way) is for a loaded machine's scheduling.
  for (bool listener : {false, true}) {
    Channel ch;
    ch.send_delay_ns = 40'000'000;
    ch.echo_delay_ns = 20'000'000;
    Options o = options(Mode::throughput, Role::pub);
    o.duration_ns = 1'200'000'000;
    o.latency_count = 1;  // a ping whenever none is outstanding
    const Point p = run_point(o, ch, listener);
    const double pongs = field(p.pub, "pongs");
    EXPECT_GE(pongs, 5) << listener;
    EXPECT_EQ(pongs, double(ch.echoes)) << listener;
    const double p50 = field(object(p.pub, "rtt_ns"), "p50");
    EXPECT_GE(p50, 60e6) << listener;
    EXPECT_LT(p50, 70e6) << listener;
    EXPECT_EQ(field(p.sub, "received"), double(ch.data_sent)) << listener;
    EXPECT_EQ(field(p.sub, "lost"), 0) << listener;
  }
}

TEST(Drain, TheSubscriberEndsAsSoonAsItHasEverything) {
  Channel ch;
  Options o = options(Mode::rate, Role::pub);
  o.rate_hz = 100;
  o.drain_ns = 5'000'000'000;  // a silent data path would hold it 5 s
  const int64_t t0 = now_ns();
  const Point p = run_point(o, ch);
  EXPECT_EQ(field(p.sub, "received"), field(p.pub, "sent"));
  EXPECT_LT(now_ns() - t0, 2'000'000'000);
}

TEST(Count, StopsAfterTheRequestedSamples) {
  Channel ch;
  Options o = options(Mode::rate, Role::pub);
  o.rate_hz = 1000;
  o.count = 50;
  const Point p = run_point(o, ch);
  EXPECT_EQ(field(p.pub, "sent"), 50);
  EXPECT_EQ(field(p.pub, "scheduled"), 50);
}

namespace {

// Counts wake() calls (the stop signal's side of an untimed wait).
class WakeCounter final : public Adapter {
 public:
  const Description& description() const override {
    static Description d;
    return d;
  }
  std::string version() const override { return "test"; }
  std::string effective_config() const override { return "{}"; }
  Errc open(const AdapterConfig&) override { return Errc::ok; }
  Errc wait_matched(int64_t) override { return Errc::ok; }
  Errc send(const uint8_t*, size_t) override { return Errc::ok; }
  Errc recv(const uint8_t**, size_t*, int64_t) override { return Errc::timeout; }
  void close() override {}
  bool can_wake() const override { return true; }
  void wake() override { ++wakes; }
  std::atomic<int> wakes{0};
};

}  // namespace

TEST(StopSignal, WakesEveryRegisteredTarget) {
  StopSignal s;
  std::vector<WakeCounter> targets(StopSignal::kMaxWakeTargets);
  for (auto& t : targets) EXPECT_TRUE(s.add_wake_target(&t));
  WakeCounter extra;
  EXPECT_FALSE(s.add_wake_target(&extra));  // the fixed array is full
  s.remove_wake_target(&targets[3]);
  EXPECT_EQ(s.wake_targets(), StopSignal::kMaxWakeTargets - 1);
  s.request(7);
  for (size_t i = 0; i < targets.size(); ++i) EXPECT_EQ(targets[i].wakes.load(), i == 3 ? 0 : 1) << i;
  EXPECT_EQ(extra.wakes.load(), 0);
  WakeCounter late;  // registered after the stop: woken at once
  EXPECT_TRUE(s.add_wake_target(&late));
  EXPECT_EQ(late.wakes.load(), 1);
}

// Several readers of one process (--readers) each block without a timeout on
// their own adapter; the one stop ends them all.
TEST(StopSignal, OneStopEndsEveryReader) {
  constexpr int kReaders = 4;
  std::vector<Channel> channels(kReaders);
  std::vector<std::unique_ptr<LoopAdapter>> ads;
  std::vector<Options> opts;
  for (int i = 0; i < kReaders; ++i) {
    opts.push_back(options(Mode::throughput, Role::sub));
    opts.back().reader = uint32_t(i);
    opts.back().readers = kReaders;
    opts.back().echo = i == 0;
  }
  StopSignal stop;
  std::vector<std::unique_ptr<Session>> subs;
  for (int i = 0; i < kReaders; ++i) {
    ads.push_back(std::make_unique<LoopAdapter>(channels[i], Role::sub, false));
    ads.back()->open(AdapterConfig{});
    subs.push_back(make_subscriber(opts[i], *ads.back(), stop));
  }
  std::vector<std::string> lines(kReaders);
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) threads.emplace_back([&, i] { lines[i] = subs[i]->run(0, Footprint{}).line; });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // every reader is blocked in recv(-1) by now
  const int64_t t0 = now_ns();
  stop.request(0);  // nothing was sent: each has everything at once
  for (auto& t : threads) t.join();
  EXPECT_LT(now_ns() - t0, 1'000'000'000);
  EXPECT_EQ(stop.wake_targets(), 0u);  // each let go of its adapter
  for (int i = 0; i < kReaders; ++i) {
    EXPECT_EQ(field(lines[i], "reader"), i);
    EXPECT_EQ(field(lines[i], "readers"), kReaders);
    EXPECT_NE(lines[i].find("\"cpu_scope\":\"process\""), std::string::npos);
    EXPECT_NE(lines[i].find(i == 0 ? "\"echo\":true" : "\"echo\":false"), std::string::npos);
  }
}
