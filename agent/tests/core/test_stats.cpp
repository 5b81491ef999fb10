// LatencyStats: moments over every sample, percentiles from the log-linear
// histogram within its stated relative error, percentiles their count cannot
// support left out, the strided samples file in arrival order.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "core/stats.h"

using namespace mwperf;

// Every allocation of this test program is counted (the replaceable global
// operator new), so a test can tell that a loop allocated nothing.
static std::atomic<uint64_t> allocations{0};
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // malloc'ed by the operator new below
void* operator new(std::size_t n) {
  ++allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

// Exact nearest-rank percentile of a sorted vector.
int64_t exact(const std::vector<int64_t>& sorted, uint64_t ppm) {
  const uint64_t n = sorted.size();
  uint64_t rank = (n * ppm + 999999) / 1000000;
  rank = std::max<uint64_t>(1, std::min(rank, n));
  return sorted[rank - 1];
}

void expect_within(int64_t got, int64_t want) {
  EXPECT_LE(std::fabs(double(got - want)), LatencyStats::kRelativeError * std::fabs(double(want)) + 0.5)
      << "got " << got << " want " << want;
}

}  // namespace

TEST(Stats, Empty) {
  LatencyStats s;
  const Summary r = s.summarize();
  EXPECT_EQ(r.count, 0u);
  EXPECT_FALSE(r.p50.ok);
}

TEST(Stats, HandComputedSmallValuesAreExact) {
  // 10, 20, ..., 100: mean 55, population variance 825; below 512 ns every bucket is one value.
  LatencyStats s;
  for (int v : {70, 10, 100, 40, 20, 90, 30, 60, 50, 80}) s.add(v);
  const Summary r = s.summarize();
  EXPECT_EQ(r.count, 10u);
  EXPECT_DOUBLE_EQ(r.mean, 55.0);
  EXPECT_NEAR(r.std, std::sqrt(825.0), 1e-9);
  EXPECT_EQ(r.min, 10);
  EXPECT_EQ(r.max, 100);
  EXPECT_TRUE(r.p50.ok);
  EXPECT_EQ(r.p50.v, 50);  // rank 5
  EXPECT_EQ(r.p90.v, 90);  // rank 9
  // 10 samples cannot measure p99 and beyond: not reported, not the maximum in disguise.
  EXPECT_FALSE(r.p99.ok);
  EXPECT_FALSE(r.p9999.ok);
  EXPECT_FALSE(r.p999999.ok);
}

TEST(Stats, SupportRule) {
  EXPECT_FALSE(supported(1, 500000));
  EXPECT_TRUE(supported(2, 500000));
  EXPECT_FALSE(supported(99, 990000));
  EXPECT_TRUE(supported(100, 990000));
  EXPECT_FALSE(supported(5000, 999999));
  EXPECT_FALSE(supported(9999, 999900));
  EXPECT_TRUE(supported(10000, 999900));
  EXPECT_TRUE(supported(1000000, 999999));
}

TEST(Stats, PercentilesWithinTheRelativeErrorOfExact) {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> d(10.0, 1.5);  // ~22 us median, a long tail
  LatencyStats s;
  std::vector<int64_t> all;
  for (int i = 0; i < 200000; ++i) {
    const int64_t v = int64_t(d(rng));
    s.add(v);
    all.push_back(v);
  }
  std::sort(all.begin(), all.end());
  const Summary r = s.summarize();
  EXPECT_EQ(r.min, all.front());
  EXPECT_EQ(r.max, all.back());
  for (auto [ppm, p] : {std::pair<uint64_t, Pct>{500000, r.p50}, {900000, r.p90}, {990000, r.p99}, {999900, r.p9999}}) {
    ASSERT_TRUE(p.ok);
    expect_within(p.v, exact(all, ppm));
  }
  EXPECT_FALSE(r.p999999.ok);  // 200000 < 10^6
}

TEST(Stats, LargeAndNegativeValues) {
  // One-way latency across two clocks may come out negative; seconds-long stalls are kept.
  LatencyStats s;
  std::vector<int64_t> all;
  for (int64_t v = -5000000; v <= 3000000000LL; v += 1234567) {
    s.add(v);
    all.push_back(v);
  }
  std::sort(all.begin(), all.end());
  const Summary r = s.summarize();
  EXPECT_EQ(r.min, all.front());
  EXPECT_EQ(r.max, all.back());
  expect_within(r.p50.v, exact(all, 500000));
  expect_within(r.p90.v, exact(all, 900000));
  LatencyStats neg;
  for (int v : {-300, -200, -100}) neg.add(v);
  EXPECT_EQ(neg.summarize().p50.v, -200);
}

TEST(Stats, BucketsAreContiguous) {
  for (uint64_t v = 0; v < (uint64_t(1) << 20); v += 7) {
    const size_t i = LatencyStats::index(v);
    ASSERT_LE(LatencyStats::index(v), LatencyStats::index(v + 1));
    ASSERT_LE(std::fabs(double(LatencyStats::bucket_mid(i)) - double(v)),
              LatencyStats::kRelativeError * double(v) + 0.5);
  }
}

TEST(Stats, EveryInt64HasABucketOfItsOwn) {
  // [2^45, 2^46) once indexed past the array; beyond, values were clamped into the last bucket.
  for (uint64_t v : {(uint64_t(1) << 45) - 1, uint64_t(1) << 45, (uint64_t(1) << 45) + 12345, (uint64_t(1) << 46) - 1,
                     uint64_t(1) << 46, uint64_t(1) << 62, (uint64_t(1) << 63) - 1}) {
    const size_t i = LatencyStats::index(v);
    ASSERT_LT(i, LatencyStats::kBuckets) << v;
    EXPECT_LE(LatencyStats::bucket_low(i), v) << v;
    EXPECT_GE(LatencyStats::bucket_high(i), v) << v;
    EXPECT_LE(double(LatencyStats::bucket_high(i) - LatencyStats::bucket_low(i)),
              2 * LatencyStats::kRelativeError * double(v));
  }
  // Ten hours and a day: their percentiles as exact as a microsecond's.
  LatencyStats s;
  std::vector<int64_t> all;
  for (int64_t k = 0; k < 1000; ++k) all.push_back(36'000'000'000'000 + k * 86'400'000'000);
  for (int64_t v : all) s.add(v);
  const Summary r = s.summarize();
  expect_within(r.p50.v, exact(all, 500000));
  expect_within(r.p90.v, exact(all, 900000));
}

TEST(Stats, HalveIsRttOverTwo) {
  LatencyStats s;
  for (int v : {10, 20, 31}) s.add(v);
  const Summary h = halve(s.summarize());
  EXPECT_EQ(h.min, 5);
  EXPECT_EQ(h.max, 15);
  EXPECT_EQ(h.p50.v, 10);
  EXPECT_NEAR(h.mean, 61.0 / 6.0, 1e-12);
}

TEST(Stats, AddingSamplesAllocatesNothing) {
  LatencyStats s(1024);
  const uint64_t before = allocations.load();
  for (int64_t i = 0; i < 2000000; ++i) s.add((i * 7919) % 1000003 - 1000);  // negative ones too, and strides doubling
  EXPECT_EQ(allocations.load(), before);
  // the test can fail: a vector growing counts
  std::vector<int> grows;
  grows.push_back(1);
  EXPECT_GT(allocations.load(), before);
}

namespace {
std::vector<int64_t> read_all(std::FILE* f) {
  std::rewind(f);
  std::vector<int64_t> out;
  unsigned char b[8];
  while (std::fread(b, 1, 8, f) == 8) {
    int64_t v = 0;
    for (int k = 7; k >= 0; --k) v = (v << 8) | b[k];
    out.push_back(v);
  }
  return out;
}
}  // namespace

TEST(Stats, SamplesFileIsEvenlyStridedInArrivalOrder) {
  for (int n : {100, 1000, 1001, 5000, 77777}) {
    LatencyStats s(1000);
    for (int i = 1; i <= n; ++i) s.add(int64_t(i) * 10);
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    const size_t written = s.write_samples(f, 2);
    const std::vector<int64_t> v = read_all(f);
    std::fclose(f);
    ASSERT_EQ(v.size(), written);
    EXPECT_GE(written, std::min<size_t>(n, 500));
    EXPECT_LE(written, 1000u);
    // one stride between neighbours, from the start of the run to its end
    const int64_t step = v.size() > 1 ? v[1] - v[0] : 0;
    for (size_t i = 1; i < v.size(); ++i) ASSERT_EQ(v[i] - v[i - 1], step) << "n=" << n << " i=" << i;
    EXPECT_LE(v.front(), step + 5);
    EXPECT_GE(v.back(), int64_t(n) * 5 - 2 * step);
  }
}
