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
