// Confidence intervals of quantiles that keep their confidence for correlated
// samples, and the adaptive stop rule that looks at them.
//
// The interval of quantile p is a Woodruff interval: a confidence interval of
// the run's CDF at its estimate q (the fraction of samples <= q), inverted
// through the run's own quantile function, [Q(p_lo), Q(p_hi)]. So it lies in
// [min, max], is never below zero for non-negative data, and is as
// asymmetric as the distribution.
//
// The CDF's uncertainty comes from batch means of the indicator 1{x <= q}:
// the run is cut into consecutive batches (core/monitor.h closes one at least
// every `min_batch` samples; at kMaxBatches, neighbours merge pairwise and
// the batch size doubles), each batch keeps its counts per coarse histogram
// position (32 a power of two, sparse), so the fraction of any batch at any
// q can be read afterwards. A batch mean of an indicator is unbiased however
// few samples of the tail a batch holds, unlike a batch p99. Batches must be
// long compared with the correlation time: of the groupings of 1, 2, 4, ...
// neighbouring batches (blocking) that leave at least kMinBatches, the
// smallest from which on the lag-1 autocorrelation of the batch means is
// insignificant is used, widened by what autocorrelation r remains,
// sqrt((1+r)/(1-r)), and refused above r = 0.5. The variance's effective
// degrees of freedom (Satterthwaite, from the batch means' kurtosis: a tail
// whose samples sit in few batches has few) set the effective sample size of
// a Clopper-Pearson interval of the proportion (Korn & Graubard), which is
// asymmetric where few samples lie beyond the quantile. A tail quantile's
// design effect is at least that of the quantile ten times less extreme (p99
// borrows from p90, p99.9 from p99): tail samples are too few to show their
// own clustering.
//
// Null, with the reason, where the data cannot support an interval: too few
// batches, the remaining correlation too long for the run, fewer than one
// independent sample beyond the quantile, or a bound beyond the samples.
//
// The stop rule (core/monitor.h) spends the error over its looks
// (spent_alpha), so stopping at the first look that passes keeps the stated
// confidence. All of this runs on the monitor thread, never on the
// measurement path; the batches' memory is allocated at construction.
#pragma once
#include <cstdint>
#include <vector>

#include "core/stats.h"

namespace mwperf {

// The mean of a ratio over consecutive batches (sum c / sum s) with its
// standard error from batch means, for correlated batches (see above).
struct BatchMean {
  double ratio = 0;
  double se = 0;              // widened by the remaining lag-1 autocorrelation
  double df = 0;              // effective degrees of freedom of se
  uint32_t batches = 0;       // at the grouping used
  const char* why = nullptr;  // set when there is no estimate
};
BatchMean batch_mean(const std::vector<double>& c, const std::vector<double>& s);

// The Clopper-Pearson bounds of a proportion x seen in an effective sample of
// neff, whose variance has df degrees of freedom (Korn & Graubard: neff
// shrinks by (z / t)^2).
void proportion_bounds(double x, double neff, double df, double confidence, double* lo, double* hi);

// What a look of a stop rule watching `quantities` figures may spend of
// alpha = 1 - confidence on each, looking at to_ns into a measurement of at
// most max_ns whose previous look was at from_ns: Lan & DeMets' Pocock-type
// spending, alpha ln(1 + (e - 1) t / max) by time t, all of it by the
// maximum; so all the looks together keep the confidence.
double spent_alpha(double confidence, int64_t from_ns, int64_t to_ns, int64_t max_ns, int quantities);

// An estimate and its interval (the flow's rate and loss).
struct Range {
  double est = 0, lo = 0, hi = 0;
  bool valid = false;
  const char* why = nullptr;
};

// The received rate (samples/s) and the loss of a flow, from what had
// arrived at each tick: a batch per tick (merged pairwise at kMaxBatches).
class FlowBatches {
 public:
  FlowBatches();
  // received: unique samples so far; expected: samples the newest one says were sent.
  void observe(int64_t t_ns, uint64_t received, uint64_t expected);
  uint32_t count() const { return uint32_t(ns_.size()); }
  Range rate(double confidence) const;
  Range loss(double confidence) const;

 private:
  std::vector<double> received_, ns_, lost_, expected_;  // per batch
  int64_t t_ = -1;
  uint64_t r_ = 0, e_ = 0;
};

class Batches {
 public:
  static constexpr uint32_t kMinBatches = 10;
  static constexpr uint32_t kMaxBatches = 128;
  static constexpr int kCoarseShift = 4;            // 16 histogram buckets a coarse position: 32 a power of two
  static constexpr size_t kPool = size_t(1) << 16;  // entries all batches share

  explicit Batches(uint64_t min_batch = 100);

  // Closes a batch when at least the batch size has arrived since the last
  // one (reads the histogram over the range in use).
  void observe(const LatencyStats& s);
  // Closes what arrived since the last batch, however little (the run's end).
  void close(const LatencyStats& s);

  uint32_t count() const { return uint32_t(sizes_.size()); }
  uint64_t batch_size() const { return min_batch_; }
  // What its batches hold, allocated (and touched) at construction.
  size_t memory_bytes() const {
    return (pool_.capacity() + scratch_.capacity()) * sizeof(Entry) + prev_.capacity() * sizeof(uint64_t);
  }

  // The interval of the quantile `ppm` (500000 = p50) of s at `confidence`;
  // invalid, with `why`, where the data cannot support one.
  Interval interval(const LatencyStats& s, uint64_t ppm, double confidence) const;
  // Adds the intervals of p50, p99 and p99.9 (at `confidence`) to sum.
  void fill(Summary* sum, const LatencyStats& s, double confidence) const;

 private:
  struct Entry {
    uint64_t count;
    uint32_t pos;  // coarse position
  };
  static size_t coarse(size_t position) { return position >> kCoarseShift; }
  // The effective sample size of the CDF at ppm's estimate, and its batch mean.
  BatchMean cdf_at(const LatencyStats& s, uint64_t ppm) const;
  void append(const LatencyStats& s);
  bool merge_pairs();

  uint64_t min_batch_;
  uint64_t batched_ = 0;        // samples in closed batches
  std::vector<uint64_t> prev_;  // cumulative count per coarse position at the last close
  std::vector<Entry> pool_, scratch_;
  std::vector<size_t> begin_;  // batch i: pool_[begin_[i], begin_[i + 1]) (begin_ has count() + 1 entries)
  std::vector<uint64_t> sizes_;
};

}  // namespace mwperf
