#include <gtest/gtest.h>

#include <cmath>

#include "core/stats.h"

using namespace mwperf;

TEST(Stats, Empty) {
  LatencyStats s(16);
  const Summary r = s.summarize();
  EXPECT_EQ(r.count, 0u);
  EXPECT_TRUE(r.exact);
}

TEST(Stats, HandComputed) {
  // 10, 20, ..., 100: mean 55, population variance 825, std 28.7228...
  LatencyStats s(100);
  for (int v : {70, 10, 100, 40, 20, 90, 30, 60, 50, 80}) s.add(v);
  const Summary r = s.summarize();
  EXPECT_EQ(r.count, 10u);
  EXPECT_DOUBLE_EQ(r.mean, 55.0);
  EXPECT_NEAR(r.std, std::sqrt(825.0), 1e-9);
  EXPECT_EQ(r.min, 10);
  EXPECT_EQ(r.max, 100);
  // nearest rank: ceil(p * n)
  EXPECT_EQ(r.p50, 50);   // rank 5
  EXPECT_EQ(r.p90, 90);   // rank 9
  EXPECT_EQ(r.p99, 100);  // rank 10
  EXPECT_EQ(r.p9999, 100);
  EXPECT_EQ(r.p999999, 100);
  EXPECT_TRUE(r.exact);
}

TEST(Stats, PercentilesOfOneToMillion) {
  LatencyStats s(1000000);
  for (int v = 1000000; v >= 1; --v) s.add(v);
  const Summary r = s.summarize();
  EXPECT_EQ(r.p50, 500000);
  EXPECT_EQ(r.p90, 900000);
  EXPECT_EQ(r.p99, 990000);
  EXPECT_EQ(r.p9999, 999900);
  EXPECT_EQ(r.p999999, 999999);
  EXPECT_DOUBLE_EQ(r.mean, 500000.5);
}

TEST(Stats, SingleSample) {
  LatencyStats s(4);
  s.add(1234);
  const Summary r = s.summarize();
  EXPECT_EQ(r.p50, 1234);
  EXPECT_EQ(r.p999999, 1234);
  EXPECT_EQ(r.std, 0.0);
}

TEST(Stats, PastTheBoundBecomesAReservoir) {
  LatencyStats s(10000);
  for (int v = 1; v <= 1000000; ++v) s.add(v);
  const Summary r = s.summarize();
  EXPECT_EQ(r.count, 1000000u);
  EXPECT_EQ(r.kept, 10000u);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.min, 1);            // exact over all samples
  EXPECT_EQ(r.max, 1000000);      // exact over all samples
  EXPECT_DOUBLE_EQ(r.mean, 500000.5);
  EXPECT_NEAR(r.p50, 500000, 20000);  // a uniform sample of 10k: within ~4 sigma
  EXPECT_NEAR(r.p90, 900000, 15000);
}

TEST(Stats, HalveIsRttOverTwo) {
  LatencyStats s(8);
  for (int v : {10, 20, 31}) s.add(v);
  const Summary h = halve(s.summarize());
  EXPECT_EQ(h.min, 5);
  EXPECT_EQ(h.max, 15);
  EXPECT_EQ(h.p50, 10);
  EXPECT_NEAR(h.mean, 61.0 / 6.0, 1e-12);
}

TEST(Stats, QuantileCiRanks) {
  uint64_t lo = 0, hi = 0;
  // n = 10000, p = 0.5: 5000 -/+ 1.96 * 50 = 4902 .. 5098
  ASSERT_TRUE(quantile_ci_ranks(10000, 500000, 1.96, &lo, &hi));
  EXPECT_EQ(lo, 4902u);
  EXPECT_EQ(hi, 5098u);
  // too few samples for a p99 interval
  EXPECT_FALSE(quantile_ci_ranks(50, 990000, 1.96, &lo, &hi));
}

TEST(Stats, AdaptiveStopHonoursItsPrecisionOnAUniformDistribution) {
  // Uniform on 1..1e6: the p50 interval's relative half-width is ~1.96/sqrt(n),
  // so 5 % needs n >= ~1540 samples.
  uint64_t x = 42;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return int64_t(x % 1000000) + 1;
  };
  LatencyStats s(1u << 16);
  Interval p50, p99;
  for (int i = 0; i < 1000; ++i) s.add(next());
  EXPECT_FALSE(s.converged(0.05, 1.96, &p50, &p99));
  for (int i = 0; i < 3000; ++i) s.add(next());
  ASSERT_TRUE(s.converged(0.05, 1.96, &p50, &p99));
  EXPECT_LE(p50.lo, 500000);
  EXPECT_GE(p50.hi, 500000);
  EXPECT_LE(double(p50.hi - p50.lo) / 2, 0.05 * 500000 * 1.1);
  EXPECT_LE(p99.lo, 990000);
  EXPECT_GE(p99.hi, 990000);
}

TEST(Stats, QuantileIntervalsCoverTheTrueValue) {
  // Exponential(mean 1000): true p50 = 1000 ln 2, true p99 = 1000 ln 100.
  uint64_t x = 7;
  auto uniform01 = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (double(x >> 11) + 0.5) / 9007199254740992.0;
  };
  int cover50 = 0, cover99 = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    LatencyStats s(2000);
    for (int i = 0; i < 2000; ++i) s.add(int64_t(-1000.0 * std::log(uniform01()) * 1000));
    const Summary r = s.summarize();
    ASSERT_TRUE(r.p50_ci.valid && r.p99_ci.valid);
    cover50 += r.p50_ci.lo <= 693147 && 693147 <= r.p50_ci.hi;
    cover99 += r.p99_ci.lo <= 4605170 && 4605170 <= r.p99_ci.hi;
  }
  // nominal 95 %; allow for the approximation and sampling noise
  EXPECT_GE(cover50, trials * 90 / 100);
  EXPECT_GE(cover99, trials * 90 / 100);
}

TEST(Stats, SamplesFileIsStridedAndInArrivalOrder) {
  LatencyStats s(1000);
  s.reserve_scratch();
  for (int i = 1; i <= 1000; ++i) s.add(i * 10);
  Interval a, b;
  s.converged(0.5, 1.96, &a, &b);  // works on the scratch copy: the order survives
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  bool ordered = false;
  ASSERT_EQ(s.write_samples(f, 100, 2, &ordered), 100u);
  EXPECT_TRUE(ordered);
  std::rewind(f);
  int64_t prev = 0;
  for (int i = 0; i < 100; ++i) {
    unsigned char bytes[8];
    ASSERT_EQ(std::fread(bytes, 1, 8, f), 8u);
    int64_t v = 0;
    for (int k = 7; k >= 0; --k) v = (v << 8) | bytes[k];
    EXPECT_EQ(v, (i * 10 + 1) * 10 / 2);  // every 10th sample, halved
    EXPECT_GT(v, prev);
    prev = v;
  }
  std::fclose(f);
}

TEST(Stats, ConvergedWithoutScratchLosesTheOrder) {
  LatencyStats s(100);
  for (int i = 100; i > 0; --i) s.add(i);
  Interval a, b;
  s.converged(0.5, 1.96, &a, &b);
  std::FILE* f = std::tmpfile();
  bool ordered = true;
  s.write_samples(f, 10, 1, &ordered);
  EXPECT_FALSE(ordered);
  std::fclose(f);
}
