// Latency statistics of a test point, in constant memory and O(1) per sample.
//
// * count, mean, population std (Welford), min and max over every sample;
// * a log-linear histogram (HdrHistogram-style: 512 buckets per power of two,
//   exact below 512 ns) from which every percentile is read; a percentile is
//   the midpoint of the bucket that holds its nearest rank, clamped to
//   [min, max]: within 0.1 % of the exact value (kRelativeError). Every int64
//   has its bucket (up to 2^63 ns); negative values (one-way latency between
//   two clocks) have a mirror half;
// * at most `strided` samples kept evenly strided over the run, in arrival
//   order, for the samples file (histogram, time series, U test).
//
// One thread adds; the monitor thread may read the buckets meanwhile (relaxed
// atomics: a plain increment on x86). Nothing allocates after construction.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

namespace mwperf {

// A percentile is reported only when its sample count supports it: quantile q
// needs n >= 1/(1-q) samples (p99 needs 100, p99.99 10^4, p99.9999 10^6);
// otherwise it is "not measured" (null), never the maximum in disguise.
bool supported(uint64_t n, uint64_t ppm);

struct Pct {
  int64_t v = 0;
  bool ok = false;
};

struct Interval {
  int64_t lo = 0, hi = 0;
  bool valid = false;
  const char* why = nullptr;  // why there is none (when not valid)
};

struct Summary {
  uint64_t count = 0;
  double mean = 0, std = 0;
  int64_t min = 0, max = 0;
  Pct p50, p90, p99, p999, p9999, p999999;
  // Confidence intervals (core/batches.h) at ci_confidence.
  Interval p50_ci, p99_ci, p999_ci;
  double ci_confidence = 0;
  uint32_t ci_batches = 0;
};

class LatencyStats {
 public:
  static constexpr int kSubBits = 9;
  // Magnitudes below 2^kMaxExp have a bucket each (groups of 2^kSubBits
  // buckets: [0, 512), then one group a power of two); only INT64_MIN's,
  // 2^63, shares the last.
  static constexpr int kMaxExp = 63;
  static constexpr size_t kBuckets = size_t(kMaxExp - kSubBits + 1) << kSubBits;
  static constexpr double kRelativeError = 1.0 / (1 << (kSubBits + 1));

  // strided: how many samples to keep for the samples file (0: none).
  explicit LatencyStats(size_t strided = 0);

  void add(int64_t v) {
    const uint64_t n = n_.load(std::memory_order_relaxed) + 1;
    n_.store(n, std::memory_order_relaxed);
    if (n == 1) {
      min_.store(v, std::memory_order_relaxed);
      max_.store(v, std::memory_order_relaxed);
    } else if (v < min_.load(std::memory_order_relaxed)) {
      min_.store(v, std::memory_order_relaxed);
    } else if (v > max_.load(std::memory_order_relaxed)) {
      max_.store(v, std::memory_order_relaxed);
    }
    const double d = double(v) - mean_;
    mean_ += d / double(n);
    m2_ += d * (double(v) - mean_);
    std::atomic<uint64_t>& c = v >= 0 ? pos_[index(uint64_t(v))] : neg_[index(uint64_t(0) - uint64_t(v))];
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (slots_.empty() || --countdown_ > 0) return;
    countdown_ = stride_;
    keep(n, v);
  }

  uint64_t count() const { return n_.load(std::memory_order_relaxed); }
  int64_t min() const { return min_.load(std::memory_order_relaxed); }
  int64_t max() const { return max_.load(std::memory_order_relaxed); }

  // Nearest-rank percentile (ppm: 500000 = p50) of every sample so far.
  Pct percentile_ppm(uint64_t ppm) const;
  // Everything but the confidence intervals (see Batches::fill).
  Summary summarize() const;

  // Bucket arithmetic, for the monitor's batches.
  static size_t index(uint64_t magnitude) {
    if (magnitude < (uint64_t(1) << kSubBits)) return size_t(magnitude);
    const int e = 63 - __builtin_clzll(magnitude);
    if (e >= kMaxExp) return kBuckets - 1;
    return (size_t(e - kSubBits + 1) << kSubBits) + size_t((magnitude >> (e - kSubBits)) & ((1u << kSubBits) - 1));
  }
  static uint64_t bucket_mid(size_t idx);   // midpoint of a bucket's magnitudes
  static uint64_t bucket_low(size_t idx);   // its smallest magnitude
  static uint64_t bucket_high(size_t idx);  // its largest
  // Signed position in [0, 2*kBuckets): negative values below (most negative
  // first), then the non-negative ones; count_at() reads it.
  size_t lowest_position() const;
  size_t highest_position() const;
  uint64_t count_at(size_t position) const;
  int64_t value_at(size_t position) const;  // bucket midpoint, signed
  static size_t position(int64_t v);
  // The position holding the rank-th smallest sample (1-based), and the
  // smallest and largest value it stands for, clamped to [min, max].
  size_t position_of_rank(uint64_t rank) const;
  int64_t low_at(size_t position) const;
  int64_t high_at(size_t position) const;

  // Writes the kept samples (little-endian int64, each divided by `divisor`)
  // in arrival order, evenly strided; returns how many.
  size_t write_samples(std::FILE* f, int64_t divisor) const;
  size_t memory_bytes() const;

 private:
  void keep(uint64_t n, int64_t v);

  std::atomic<uint64_t> n_{0};
  std::atomic<int64_t> min_{0}, max_{0};
  double mean_ = 0, m2_ = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> pos_, neg_;
  struct Slot {
    uint64_t n;
    int64_t v;
  };
  std::vector<Slot> slots_;
  size_t filled_ = 0, scan_ = 0;
  uint64_t stride_ = 1, countdown_ = 1;
};

// Halves every figure: one-way latency reported as RTT/2, as RTI Perftest does.
Summary halve(const Summary& rtt);

}  // namespace mwperf
