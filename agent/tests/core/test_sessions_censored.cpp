// Sessions against ground truth (session_harness.h): a latency censored at
// the ping timeout, and the adaptive stop's plumbing (when its looks come, what a
// throughput point's stop watches).
#include <gtest/gtest.h>

#include "session_harness.h"

using namespace mwperf;
using namespace mwperf::harness;

TEST(Latency, PingsBeyondTheTimeoutAreLostAndTheirLatePongsCounted) {
  // Every echo takes 60 ms, the ping timeout is 20 ms: no round trip is
  // measured (the latency is censored at the timeout), every ping the channel
  // carried is lost, and the echoes that still come back are late pongs.
  Channel ch;
  ch.echo_delay_ns = 60'000'000;
  Options o = options(Mode::latency, Role::pub);
  o.ping_timeout_ns = 20'000'000;
  const Point p = run_point(o, ch);
  EXPECT_GT(double(ch.data_sent), 2);  // a ping each 20 ms timeout: ~7 in the run, 5 on a loaded machine
  EXPECT_EQ(field(p.pub, "pongs"), 0);
  EXPECT_EQ(field(p.pub, "ping_lost"), double(ch.data_sent - ch.warm_sent));
  EXPECT_GT(field(p.pub, "late_pongs"), 0);
  EXPECT_LE(field(p.pub, "late_pongs"), double(ch.echoes));
  EXPECT_EQ(field(object(p.pub, "rtt_ns"), "count"), 0);
}

TEST(Latency, APingWhoseSendTimedOutGivesItsSequenceNumberBack) {
  // Every 7th send times out (a keep-all writer whose history stayed full for
  // its blocking time): that ping was not sent, so neither its count nor its
  // sequence number is spent; the numbers the subscriber sees run 0..sent-1.
  Channel ch;
  ch.timeout_every = 7;
  const Point p = run_point(options(Mode::latency, Role::pub), ch);
  const double sent = field(p.pub, "sent");
  EXPECT_GT(double(ch.timeouts), 5);
  EXPECT_EQ(field(p.pub, "send_timeouts"), double(ch.timeouts));
  EXPECT_EQ(sent, double(ch.data_sent - ch.warm_sent));
  EXPECT_EQ(field(p.sub, "received"), sent);
  EXPECT_EQ(field(p.sub, "seq_span"), sent);
  EXPECT_EQ(field(p.sub, "lost"), 0);
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
