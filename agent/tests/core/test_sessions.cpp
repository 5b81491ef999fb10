// The publisher's and subscriber's logic against ground truth set up here: an
// in-process channel whose sends can be made slow or lossy (a test double for
// the transport, never a middleware), two threads, one clock.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/session.h"
#include "session_harness.h"
#include "util/clock.h"

using namespace mwperf;
using namespace mwperf::harness;

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
  EXPECT_EQ(field(p.pub, "unsent"), 400 - sent);        // 400 due (1000 Hz x 400 ms), the rest never reached it
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

// Every 7th of 50 samples dropped on the way, the last one not: an in-order path
// ends its drain when the last one is here; any other waits out its quiet time.
TEST(Drain, AnInOrderPathEndsWithItsNewestSampleWhateverItLostBefore) {
  for (bool in_order : {true, false}) {
    Channel ch;
    ch.in_order = in_order;
    ch.drop_every = 7;
    Options o = options(Mode::rate, Role::pub);
    o.rate_hz = 200;
    o.samples = 50;
    o.drain_ns = 3'000'000'000;
    const int64_t t0 = now_ns();
    const Point p = run_point(o, ch);
    const int64_t took = now_ns() - t0;
    EXPECT_EQ(field(p.pub, "sent"), 50) << in_order;
    EXPECT_EQ(field(p.sub, "lost"), double(ch.dropped)) << in_order;
    EXPECT_EQ(ch.dropped, 7u) << in_order;
    EXPECT_EQ(field(p.sub, "received"), 43) << in_order;
    if (in_order)
      EXPECT_LT(took, 2'000'000'000);
    else
      EXPECT_GE(took, 3'000'000'000);
  }
}

TEST(Count, StopsAfterTheRequestedSamples) {
  Channel ch;
  Options o = options(Mode::rate, Role::pub);
  o.rate_hz = 1000;
  o.samples = 50;
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

// Several readers of one process (--subscribers-as threads) each block without a timeout on
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
