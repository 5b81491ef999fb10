// Latency statistics over every sample of a test point.
//
// count/mean/std/min/max cover every sample (Welford's online algorithm for the
// mean and the population standard deviation). Percentiles are nearest-rank over
// a preallocated buffer of at most `capacity` samples: exact while
// count <= capacity; past the bound the buffer becomes a uniform reservoir sample
// (Vitter's Algorithm R, fixed seed) and the percentiles are estimates
// (Summary::exact == false). add() never allocates.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace mwperf {

// A distribution-free confidence interval of a quantile: the order statistics
// whose ranks are n*p -/+ z*sqrt(n*p*(1-p)) (normal approximation to the
// binomial). valid is false when n is too small for the ranks to exist.
struct Interval {
  int64_t lo = 0, hi = 0;
  bool valid = false;
};

struct Summary {
  uint64_t count = 0;
  double mean = 0, std = 0;
  int64_t min = 0, max = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, p9999 = 0, p999999 = 0;
  uint64_t kept = 0;
  bool exact = true;
  Interval p50_ci, p99_ci;  // 95 % (z = 1.96)
};

// Where the adaptive stop was reached: after how long, over how many samples,
// and the p50 / p99 intervals that met the precision then.
struct Convergence {
  int64_t after_ns = -1;  // -1: not reached
  uint64_t kept = 0;
  Interval p50, p99;
};

// Ranks (1-based) of the interval around quantile ppm for n samples.
bool quantile_ci_ranks(uint64_t n, uint64_t ppm, double z, uint64_t* lo, uint64_t* hi);

class LatencyStats {
 public:
  explicit LatencyStats(size_t capacity);
  void add(int64_t v);
  uint64_t count() const { return n_; }
  uint64_t kept() const { return kept_; }  // samples in the buffer (behind the percentiles)
  // Sorts the kept samples in place: call once, at the end of a point.
  Summary summarize();
  // Nearest-rank percentile, p in parts per million (500000 = p50), over the
  // sorted kept samples. Valid after summarize().
  int64_t percentile_ppm(uint64_t ppm) const;
  size_t buffer_bytes() const { return buf_.capacity() * sizeof(int64_t); }
  // True when the confidence intervals (z) of p50 and p99 both have a
  // half-width within `rel` of the estimate. Reorders the kept samples
  // (nth_element, O(n)): call it a few times a second, not per sample.
  bool converged(double rel, double z, Interval* p50, Interval* p99);
  // Gives converged() a buffer of its own, so that the kept samples stay in
  // arrival order (call before the run: it allocates).
  void reserve_scratch() { scratch_.resize(cap_); }
  // Writes at most `max` kept samples (little-endian int64, each divided by
  // `divisor`), evenly strided over the arrival order; call before
  // summarize(). Returns how many; *time_ordered says whether they are in
  // arrival order (false once the buffer became a reservoir).
  size_t write_samples(std::FILE* f, size_t max, int64_t divisor, bool* time_ordered) const;

 private:
  std::vector<int64_t> buf_;
  size_t cap_;
  uint64_t n_ = 0;
  double mean_ = 0, m2_ = 0;
  int64_t min_ = 0, max_ = 0;
  uint64_t rng_ = 0x9E3779B97F4A7C15ULL;
  size_t kept_ = 0;
  std::vector<int64_t> scratch_;
  bool reordered_ = false;
};

// Halves every figure: one-way latency reported as RTT/2, as RTI Perftest does.
Summary halve(const Summary& rtt);

}  // namespace mwperf
