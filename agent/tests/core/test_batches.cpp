// Batch-quantile intervals: they cover the true quantile about as often as
// they say, also when the samples are autocorrelated (where intervals that
// assume independence do not), and the adaptive stop respects its precision.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/batches.h"

using namespace mwperf;

TEST(Batches, StudentT) {
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262, 0.01);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042, 0.005);
  EXPECT_NEAR(student_t_quantile(0.995, 63), 2.656, 0.01);
  EXPECT_NEAR(student_t_quantile(0.5, 10), 0.0, 1e-9);
}

namespace {

// An AR(1) process around a lognormal level: phi close to 1 = long slow and fast stretches.
struct Source {
  std::mt19937_64 rng;
  std::normal_distribution<double> n{0, 1};
  double phi, x = 0;
  Source(uint64_t seed, double phi) : rng(seed), phi(phi) {}
  int64_t next() {
    x = phi * x + std::sqrt(1 - phi * phi) * n(rng);
    return int64_t(20000 * std::exp(0.3 * x));
  }
};

// Fraction of runs whose final interval covers the true median (20000 ns).
double coverage(double phi, int runs, int samples) {
  int covered = 0, valid = 0;
  for (int r = 0; r < runs; ++r) {
    Source src(1000 + r, phi);
    LatencyStats s;
    Batches b(500);
    for (int i = 0; i < samples; ++i) {
      s.add(src.next());
      if (i % 500 == 499) b.observe(s);
    }
    Summary sum = s.summarize();
    b.fill(&sum, 0.95);
    if (!sum.p50_ci.valid) continue;
    ++valid;
    covered += sum.p50_ci.lo <= 20000 && 20000 <= sum.p50_ci.hi;
  }
  return valid ? double(covered) / valid : 0;
}

}  // namespace

TEST(Batches, CoverIndependentSamples) {
  const double c = coverage(0.0, 200, 30000);
  EXPECT_GE(c, 0.88);
  EXPECT_LE(c, 0.995);
}

TEST(Batches, CoverCorrelatedSamples) {
  // Neighbouring samples correlated at 0.99 (a correlation time of ~100 samples).
  const double c = coverage(0.99, 200, 60000);
  EXPECT_GE(c, 0.85);
}

TEST(Batches, TooFewBatchesGiveNoInterval) {
  LatencyStats s;
  Batches b(1000);
  for (int i = 0; i < 5000; ++i) {
    s.add(1000 + i % 7);
    b.observe(s);
  }
  EXPECT_LT(b.count(), Batches::kMinBatches);
  Summary sum = s.summarize();
  b.fill(&sum, 0.95);
  EXPECT_FALSE(sum.p50_ci.valid);
}

TEST(Batches, MergeKeepsAtMost64AndDoublesTheBatch) {
  LatencyStats s;
  Batches b(100);
  Source src(5, 0.0);
  for (int i = 0; i < 100 * 200; ++i) {
    s.add(src.next());
    b.observe(s);
  }
  EXPECT_LT(b.count(), Batches::kMaxBatches);
  EXPECT_GE(b.batch_size(), 200u);
}

TEST(Batches, StopsOnlyWithinThePrecision) {
  LatencyStats s;
  Batches b(1000);
  Source src(9, 0.5);
  Interval p50, p99;
  uint32_t look = 0;
  bool stopped = false;
  for (int i = 0; i < 2000000 && !stopped; ++i) {
    s.add(src.next());
    if (i % 1000 == 999) {
      b.observe(s);
      if (b.count() >= Batches::kMinBatches) stopped = b.converged(s.summarize(), 0.02, 0.95, ++look, &p50, &p99);
    }
  }
  ASSERT_TRUE(stopped);
  const Summary now = s.summarize();
  EXPECT_LE(double(p50.hi - p50.lo) / 2, 0.02 * double(now.p50.v) + 1);
  EXPECT_LE(double(p99.hi - p99.lo) / 2, 0.02 * double(now.p99.v) + 1);
}
