// Confidence intervals of p50 and p99 that hold for correlated samples, and an
// adaptive stop rule that is honest about looking repeatedly.
//
// Latency samples are autocorrelated (a slow stretch makes many slow samples),
// so order-statistic intervals that assume independence are too narrow.
// Instead the run is cut into consecutive batches of at least `min_batch`
// samples; each batch gives its own p50 and p99. With k batches the interval
// of the whole run's quantile is  estimate +- t(k-1) * s / sqrt(k)  (s: the
// standard deviation of the batch quantiles; batching/sectioning, as in
// simulation output analysis). Batches should be close to independent: at 64
// batches neighbours are merged pairwise and the batch size doubles, and what
// lag-1 autocorrelation r of the batch quantiles remains widens the interval
// by sqrt((1+r)/(1-r)) (the variance of a mean of AR(1) terms).
//
// The stop rule looks every tick; look j spends alpha * 6/(pi^2 j^2) of the
// error budget (the sum over all looks is alpha), split over the two
// quantiles, so stopping at the first look that passes keeps the stated
// confidence. All work here runs on the monitor thread, never on the
// measurement path.
#pragma once
#include <cstdint>
#include <vector>

#include "core/stats.h"

namespace mwperf {

// Upper quantile of Student's t with df degrees of freedom: P(T <= t) = p.
double student_t_quantile(double p, double df);

class Batches {
 public:
  static constexpr uint32_t kMinBatches = 10;
  static constexpr uint32_t kMaxBatches = 64;

  explicit Batches(uint64_t min_batch = 1000);

  // Closes a batch when at least the batch size has arrived since the last
  // one (reads the histogram over the range in use; O(buckets in range)).
  void observe(const LatencyStats& s);

  uint32_t count() const { return uint32_t(q50_.size()); }
  uint64_t batch_size() const { return min_batch_; }

  // Two-sided interval at confidence level `confidence` around `estimate` of
  // quantile 0 (p50) or 1 (p99); invalid with fewer than kMinBatches batches.
  Interval interval(int which, int64_t estimate, double confidence) const;
  // Adds the intervals of p50 and p99 (at `confidence`) to s.
  void fill(Summary* s, double confidence) const;

  // The stop rule at look `look` (1, 2, ...): both intervals within
  // `precision` of their estimates at the look's share of 1 - confidence.
  bool converged(const Summary& now, double precision, double confidence, uint32_t look,
                 Interval* p50, Interval* p99) const;
  // sqrt((1+r)/(1-r)), r the lag-1 autocorrelation of the batch quantiles (clamped to [0, 0.9]).
  double inflation(int which) const;

 private:
  void merge_pairs();

  uint64_t min_batch_;
  std::vector<double> q50_, q99_;
  std::vector<uint64_t> prev_;  // counts per signed position at the last close
  uint64_t prev_n_ = 0;
  std::vector<uint64_t> diff_;
};

}  // namespace mwperf
