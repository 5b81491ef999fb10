// Batches: the pieces of the intervals against ground truth set up here
// (published table values, series whose answer is known by construction);
// whether the intervals keep their confidence is test_coverage.cpp's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/batches.h"
#include "util/distributions.h"

using namespace mwperf;

TEST(Distributions, StudentTAsTabulated) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706, 0.001);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.303, 0.001);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262, 0.001);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042, 0.001);
  EXPECT_NEAR(student_t_quantile(0.995, 63), 2.656, 0.001);
  EXPECT_NEAR(student_t_quantile(0.025, 9), -2.262, 0.001);
  EXPECT_DOUBLE_EQ(student_t_quantile(0.5, 10), 0.0);
}

TEST(Distributions, ClopperPearsonAsTabulated) {
  // 5 of 100: the exact 95 % interval is [0.01643, 0.11283].
  EXPECT_NEAR(beta_quantile(0.025, 5, 96), 0.01643, 0.00001);
  EXPECT_NEAR(beta_quantile(0.975, 6, 95), 0.11283, 0.00001);
  // 0 of n: the upper bound is 1 - (alpha/2)^(1/n) (the rule of three's exact form).
  EXPECT_NEAR(beta_quantile(0.975, 1, 50), 1 - std::pow(0.025, 1.0 / 50), 1e-9);
  EXPECT_NEAR(beta_inc(2, 3, 0.5), 0.6875, 1e-12);  // I_0.5(2, 3) = 11/16
}

namespace {

// Batches of `per` Bernoulli(p) indicators: the batch mean's standard error is sqrt(p(1-p)/N).
BatchMean bernoulli_batches(int batches, int per, double p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution b(p);
  std::vector<double> c(batches), s(batches, per);
  for (int i = 0; i < batches; ++i)
    for (int j = 0; j < per; ++j) c[i] += b(rng);
  return batch_mean(c, s);
}

// Feeds values at one batch look every `tick` samples, then closes the last.
void feed(LatencyStats& s, Batches& b, const std::vector<int64_t>& values, int tick) {
  for (size_t i = 0; i < values.size(); ++i) {
    s.add(values[i]);
    if ((i + 1) % tick == 0) b.observe(s);
  }
  b.close(s);
}

}  // namespace

TEST(Batches, TheStandardErrorOfIndependentBatchesIsTheBinomialOne) {
  double ratio = 0;
  int within = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const BatchMean m = bernoulli_batches(64, 1000, 0.1, seed);
    ASSERT_EQ(m.why, nullptr);
    within += std::fabs(m.se / std::sqrt(0.1 * 0.9 / 64000) - 1) < 0.35;
    ratio += m.ratio / 50;
  }
  EXPECT_NEAR(ratio, 0.1, 0.002);
  EXPECT_GE(within, 45);  // sampling noise of se with ~60 degrees of freedom: ~9 %
}

TEST(Batches, FewBatchesOrALongTrendGiveNoEstimate) {
  EXPECT_STREQ(bernoulli_batches(9, 1000, 0.5, 1).why, "fewer than 10 batches");
  // The first half of the run all below, the second all above: one long correlation.
  std::vector<double> c(64), s(64, 100);
  for (int i = 0; i < 32; ++i) c[i] = 100;
  EXPECT_STREQ(batch_mean(c, s).why, "correlation too long for the run");
}

TEST(Batches, IdenticalBatchesGiveTheOrderStatisticInterval) {
  // Every batch holds the same values 1..1000 us: no batch-to-batch variation,
  // the interval is the order-statistic (Clopper-Pearson) one of all samples.
  std::vector<int64_t> v;
  for (int rep = 0; rep < 100; ++rep)
    for (int i = 1; i <= 1000; ++i) v.push_back(int64_t(i) * 1000);
  LatencyStats s;
  Batches b;
  feed(s, b, v, 1000);
  const Interval i = b.interval(s, 500000, 0.95);
  ASSERT_TRUE(i.valid) << i.why;
  // 100000 samples: ranks 50000 -+ 1.96 sqrt(25000) = 49690 and 50310, the
  // values 497 us and 504 us (within their buckets, 512 ns wide there).
  EXPECT_GE(i.lo, 497000 - 512);
  EXPECT_LE(i.lo, 497000);
  EXPECT_GE(i.hi, 504000);
  EXPECT_LE(i.hi, 504000 + 512);
}

TEST(Batches, IntervalsAreAsymmetricWithinMinMaxAndSayWhyNot) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> d(std::log(20000.0), 1.0);  // a long right tail
  std::vector<int64_t> v(20000);
  for (auto& x : v) x = int64_t(d(rng));
  LatencyStats s;
  Batches b;
  feed(s, b, v, 200);
  Summary sum = s.summarize();
  b.fill(&sum, s, 0.95);
  ASSERT_TRUE(sum.p99_ci.valid) << sum.p99_ci.why;
  EXPECT_GT(sum.p99_ci.hi - sum.p99.v, sum.p99.v - sum.p99_ci.lo);  // wider towards the tail
  EXPECT_GE(sum.p99_ci.lo, sum.min);
  EXPECT_LE(sum.p99_ci.hi, sum.max);
  ASSERT_TRUE(sum.p999_ci.valid) << sum.p999_ci.why;  // 20 samples beyond it
  // 1000 samples leave one beyond p99.9: too few for a bound inside the samples.
  LatencyStats few;
  Batches fb;
  feed(few, fb, std::vector<int64_t>(v.begin(), v.begin() + 1000), 50);
  const Interval none = fb.interval(few, 999000, 0.95);
  EXPECT_FALSE(none.valid);
  EXPECT_STREQ(none.why, "fewer than one independent sample beyond it");
  // One 5 ms stall moves the p99 interval up, never below zero or past the maximum.
  LatencyStats s2;
  Batches b2;
  v[9000] = 5'000'000;
  feed(s2, b2, v, 200);
  const Interval stall = b2.interval(s2, 990000, 0.95);
  ASSERT_TRUE(stall.valid) << stall.why;
  EXPECT_GE(stall.lo, 0);
  EXPECT_LT(stall.hi, 5'000'000);
}

TEST(Batches, MergingKeepsEveryCountAndDoublesTheBatch) {
  // 300 batches' worth of samples: merged twice, still the same interval as
  // identical batches of the same values would give.
  std::vector<int64_t> v;
  for (int rep = 0; rep < 300; ++rep)
    for (int i = 1; i <= 100; ++i) v.push_back(int64_t(i) * 1000);
  LatencyStats s;
  Batches b(100);
  feed(s, b, v, 100);
  EXPECT_LT(b.count(), Batches::kMaxBatches);
  EXPECT_GE(b.count(), Batches::kMaxBatches / 4);
  EXPECT_EQ(b.batch_size(), 400u);
  const Interval i = b.interval(s, 500000, 0.95);
  ASSERT_TRUE(i.valid) << i.why;
  EXPECT_LE(i.lo, 50000);
  EXPECT_GE(i.hi, 50000);
  EXPECT_GE(i.lo, 48000);  // 30000 samples: -+ 170 ranks, under 2 us
  EXPECT_LE(i.hi, 52000);
}
