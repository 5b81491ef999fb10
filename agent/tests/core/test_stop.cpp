// The adaptive stop rule (core/monitor.h: judge) on seeded simulated series
// whose truth is known, looked at as the monitor looks (Monitor::next_look,
// a batch every 25 ms of a 20000 samples/s point): it stops when its intervals
// meet the precision; stopping at the first look that passes keeps the
// stated confidence over all the looks (the look correction); what it says a
// run would need is what a longer run needed; a series that cannot meet the
// precision never stops. Nothing here depends on the machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "core/monitor.h"

using namespace mwperf;

namespace {

constexpr int kRate = 20000;       // samples/s
constexpr int kTick = kRate / 40;  // a batch every 25 ms
constexpr int kLook = kRate / 4;   // 250 ms
constexpr int64_t kSampleNs = 1'000'000'000 / kRate;

// AR(1) log-normal around 20 us (phi 0: independent); phi < 0: the
// wake-up modes instead, ~4 us and ~65 us regimes that persist -phi samples
// on average (the slow one 40 % of the time).
struct Series {
  std::mt19937_64 rng;
  std::normal_distribution<double> z;
  std::uniform_real_distribution<double> u;
  double phi, x;
  bool slow = false;
  Series(uint64_t seed, double phi) : rng(seed), phi(phi), x(z(rng)) { slow = u(rng) < 0.4; }
  int64_t next() {
    if (phi < 0) {
      if (u(rng) < (slow ? 1 / -phi : 1 / (-phi * 1.5))) slow = !slow;
      return int64_t((slow ? 65000 : 4000) * std::exp(0.15 * z(rng)));
    }
    x = phi * x + std::sqrt(1 - phi * phi) * z(rng);
    return int64_t(20000 * std::exp(0.5 * x));
  }
};
double phi_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
double truth(double p, double phi = 0) {  // the quantile of the series' marginal distribution
  auto cdf = [phi](double v) {
    return phi < 0 ? 0.6 * phi_cdf(std::log(v / 4000) / 0.15) + 0.4 * phi_cdf(std::log(v / 65000) / 0.15)
                   : phi_cdf(std::log(v / 20000) / 0.5);
  };
  double lo = 100, hi = 1e7;
  for (int i = 0; i < 200; ++i) {
    const double mid = std::sqrt(lo * hi);
    (cdf(mid) < p ? lo : hi) = mid;
  }
  return lo;
}

struct Stop {
  bool done = false;
  int64_t samples = 0;
  Convergence at;           // the look that stopped it (or the last)
  int64_t first_need = -1;  // what the first full look said it would need
  Summary sum;
};

// Runs a series until the rule stops it (or max samples, the maximum
// duration). `corrected`: looks spend the error as the monitor's do;
// otherwise every look spends all of it (what the look correction is for).
Stop run(uint64_t seed, double phi, double precision, int64_t max, bool corrected = true) {
  Series series(seed, phi);
  LatencyStats s;
  Batches b;
  Stop out;
  Look look{0, 0, 0, max * kSampleNs};
  int64_t next = Monitor::kMinNs;
  for (int64_t i = 1; i <= max && !out.done; ++i) {
    s.add(series.next());
    if (i % kTick == 0) b.observe(s);
    if (i % kTick || i * kSampleNs < next) continue;
    next = Monitor::next_look(i * kSampleNs);
    if (b.count() < Batches::kMinBatches) continue;
    look = Look{look.index + 1, look.at_ns, i * kSampleNs, look.max_ns};
    out.at = judge(b, s, precision, 0.95, corrected ? look : Look{look.index, 0, look.at_ns, look.at_ns}, &out.done);
    if (out.first_need < 0) out.first_need = out.at.needed_ns;
    out.samples = i;
  }
  out.sum = s.summarize();
  return out;
}

bool holds(const Interval& i, double v) { return i.valid && i.lo <= v && v <= i.hi; }

}  // namespace

TEST(StopRule, StoppingAtTheFirstLookThatPassesKeepsTheConfidence) {
  // independent at 5 %; correlated over ~20 samples at 10 %
  for (auto [phi, precision] : {std::pair<double, double>{0.0, 0.05}, {0.95, 0.10}, {-300, 0.10}}) {
    for (bool corrected : {true, false}) {
      int stopped = 0, inside = 0, near = 0;
      double seconds = 0;
      const double t50 = truth(0.5, phi), t99 = truth(0.99, phi);
      for (uint64_t r = 0; r < 200; ++r) {
        const Stop st = run(7000 + r, phi, precision, 40 * kRate, corrected);
        if (!st.done) continue;
        ++stopped;
        seconds += double(st.samples) / kRate;
        inside += holds(st.at.p50, t50) && holds(st.at.p99, t99);
        // the promise: both estimates within the precision of the truth
        near += std::fabs(st.sum.p50.v - t50) <= precision * t50 && std::fabs(st.sum.p99.v - t99) <= precision * t99;
      }
      std::printf(
          "phi %.2f precision %.2f %s: %d/200 stopped after %.1f s on average; truth inside the intervals "
          "%.3f, estimates within the precision %.3f\n",
          phi, precision, corrected ? "looks corrected" : "uncorrected", stopped, seconds / std::max(1, stopped),
          double(inside) / std::max(1, stopped), double(near) / std::max(1, stopped));
      if (!corrected) continue;
      EXPECT_GE(stopped, 190) << phi;
      EXPECT_GE(double(inside) / stopped, 0.95) << phi;
      EXPECT_GE(double(near) / stopped, 0.93) << phi;
    }
  }
}

TEST(StopRule, WhatItSaysARunWouldNeedIsWhatItNeeded) {
  // 1 % on independent samples: the first look that misses says how long;
  // the run, continued, stops about then.
  int close = 0, runs = 0;
  for (uint64_t r = 0; r < 40; ++r) {
    const Stop st = run(9000 + r, 0.0, 0.01, 120 * kRate);
    if (!st.done || st.first_need <= 0) continue;
    ++runs;
    const double ratio = double(st.samples * kSampleNs) / double(st.first_need);
    close += ratio > 0.5 && ratio < 2;
  }
  EXPECT_GE(runs, 35);
  EXPECT_GE(close, runs * 8 / 10);
}

TEST(StopRule, NeverStopsWhereTheIntervalsCannotMeetThePrecision) {
  // 0.01 % is below what 20 s of samples can give: no stop, and the need is
  // said (over 20 s). A level that keeps rising: no interval, and why.
  const Stop tight = run(11, 0.0, 0.0001, 20 * kRate);
  EXPECT_FALSE(tight.done);
  EXPECT_GT(tight.at.needed_ns, 20'000'000'000);
  LatencyStats s;
  Batches b;
  bool done = false;
  Convergence c;
  for (int64_t i = 1; i <= 4 * kRate; ++i) {
    s.add(10000 + i);
    if (i % kTick == 0) b.observe(s);
    if (i % kLook == 0 && i * kSampleNs >= Monitor::kMinNs)
      c = judge(b, s, 0.5, 0.95, Look{uint32_t(i / kLook), (i - kLook) * kSampleNs, i * kSampleNs, 4'000'000'000},
                &done);
    ASSERT_FALSE(done) << i;
  }
  EXPECT_EQ(c.needed_ns, -1);
  EXPECT_STREQ(c.p50.why, "correlation too long for the run");
}

TEST(StopRule, AFlowStopsWithItsRateAndLossInsideTheIntervals) {
  // 5000 samples/s offered, 2 % lost independently, to within 20 %; in one
  // run the rate sags and swells for stretches of a second (correlated ticks).
  for (bool sags : {false, true}) {
    int stopped = 0, inside = 0;
    for (uint64_t r = 0; r < 200; ++r) {
      std::mt19937_64 rng(5000 + r);
      std::poisson_distribution<int> offered(5000 / 40);
      std::binomial_distribution<int> kept(1, 0.98);
      FlowBatches f;
      uint64_t received = 0, expected = 0;
      double level = 1;
      bool done = false;
      Convergence c;
      Look look{0, 0, 0, 60'000'000'000};
      int64_t next = Monitor::kMinNs;
      for (int tick = 0; tick <= 40 * 60 && !done; ++tick) {
        const int64_t t = int64_t(tick) * 25'000'000;
        f.observe(t, received, expected);
        if (sags && tick % 40 == 0) level = std::uniform_real_distribution<double>(0.8, 1.2)(rng);
        const int n = int(offered(rng) * level);
        for (int i = 0; i < n; ++i) received += kept(rng);
        expected += n;
        if (t < next) continue;
        next = Monitor::next_look(t);
        if (f.count() < Batches::kMinBatches) continue;
        look = Look{look.index + 1, look.at_ns, t, look.max_ns};
        c = judge(f, 0.2, 0.95, look, &done);
      }
      if (!done) continue;
      ++stopped;
      inside += c.loss.lo <= 0.02 && 0.02 <= c.loss.hi && c.rate.lo <= 4900 && 4900 <= c.rate.hi;  // received: 98 %
    }
    EXPECT_GE(stopped, 150) << sags;
    EXPECT_GE(double(inside) / stopped, 0.93) << sags;
  }
}

TEST(StopRule, ARatePointJudgedOnItsLossStopsOnceItsLossIsOnOneSide) {
  // 5000 samples/s, loss independent at `truth`, judged against 1 %: where the
  // loss is far from 1 % the point stops early, on the right side; near it,
  // when it stops, on the right side 95 % of the time.
  for (const double truth : {0.002, 0.008, 0.012, 0.03}) {
    int stopped = 0, right = 0;
    double stopped_at = 0;
    for (uint64_t r = 0; r < 200; ++r) {
      std::mt19937_64 rng(7000 + r);
      std::poisson_distribution<int> offered(5000 / 40);
      std::binomial_distribution<int> kept(1, 1 - truth);
      FlowBatches f;
      uint64_t received = 0, expected = 0;
      bool done = false;
      Convergence c;
      Look look{0, 0, 0, 10'000'000'000};
      int64_t next = Monitor::kMinNs;
      for (int tick = 0; tick <= 40 * 10 && !done; ++tick) {
        const int64_t t = int64_t(tick) * 25'000'000;
        f.observe(t, received, expected);
        const int n = offered(rng);
        for (int i = 0; i < n; ++i) received += kept(rng);
        expected += n;
        if (t < next) continue;
        next = Monitor::next_look(t);
        if (f.count() < Batches::kMinBatches) continue;
        look = Look{look.index + 1, look.at_ns, t, look.max_ns};
        c = judge_loss(f, 0.01, 0.95, look, &done);
      }
      if (!done) continue;
      ++stopped;
      stopped_at += double(c.after_ns) / 1e9;
      right += (c.loss.hi <= 0.01) == (truth <= 0.01);
    }
    std::printf("loss %.3f against 1 %%: %d of 200 stopped, after %.2f s on average, %d on the right side\n", truth,
                stopped, stopped ? stopped_at / stopped : 0.0, right);
    EXPECT_GE(right, stopped * 95 / 100) << truth;
    if (truth == 0.002 || truth == 0.03) {
      EXPECT_EQ(stopped, 200) << truth;
      EXPECT_LE(stopped_at / stopped, 1.5) << truth;
    }
  }
}
