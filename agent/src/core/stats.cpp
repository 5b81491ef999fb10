#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mwperf {

LatencyStats::LatencyStats(size_t capacity) : buf_(capacity), cap_(capacity) {
  // vector(capacity) value-initialises, so every page is touched here and not in
  // the hot loop.
}

void LatencyStats::add(int64_t v) {
  ++n_;
  if (n_ == 1) {
    min_ = max_ = v;
  } else {
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }
  const double d = double(v) - mean_;
  mean_ += d / double(n_);
  m2_ += d * (double(v) - mean_);
  if (kept_ < cap_) {
    buf_[kept_++] = v;
    return;
  }
  // Algorithm R: keep the new sample with probability cap/n.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  const uint64_t j = (rng_ * 0x2545F4914F6CDD1DULL) % n_;
  if (j < cap_) buf_[j] = v;
}

int64_t LatencyStats::percentile_ppm(uint64_t ppm) const {
  if (kept_ == 0) return 0;
  // rank = ceil(kept * ppm / 1e6), at least 1.
  const uint64_t prod = uint64_t(kept_) * ppm;  // kept_ <= 2^31, ppm < 2^20: no overflow
  uint64_t rank = uint64_t((prod + 999999) / 1000000);
  if (rank < 1) rank = 1;
  if (rank > kept_) rank = kept_;
  return buf_[rank - 1];
}

bool quantile_ci_ranks(uint64_t n, uint64_t ppm, double z, uint64_t* lo, uint64_t* hi) {
  const double p = double(ppm) / 1e6;
  const double np = double(n) * p;
  const double d = z * std::sqrt(double(n) * p * (1 - p));
  const double l = std::floor(np - d), h = std::ceil(np + d);
  if (n == 0 || l < 1 || h > double(n)) return false;
  *lo = uint64_t(l);
  *hi = uint64_t(h);
  return true;
}

size_t LatencyStats::write_samples(std::FILE* f, size_t max, int64_t divisor, bool* time_ordered) const {
  *time_ordered = !reordered_ && n_ <= cap_;
  if (kept_ == 0 || max == 0) return 0;
  const size_t count = std::min(max, kept_);
  for (size_t i = 0; i < count; ++i) {
    const int64_t v = buf_[size_t(uint64_t(i) * kept_ / count)] / divisor;
    unsigned char b[8];
    for (int k = 0; k < 8; ++k) b[k] = static_cast<unsigned char>(uint64_t(v) >> (8 * k));
    if (std::fwrite(b, 1, 8, f) != 8) return i;
  }
  return count;
}

bool LatencyStats::converged(double rel, double z, Interval* p50, Interval* p99) {
  const uint64_t n = kept_;
  // nth_element reorders: work on the scratch copy when there is one.
  std::vector<int64_t>& work = scratch_.size() >= n && n > 0 ? scratch_ : buf_;
  if (&work == &scratch_) {
    std::copy(buf_.begin(), buf_.begin() + n, scratch_.begin());
  } else {
    reordered_ = true;
  }
  bool ok = true;
  for (auto [ppm, out] : {std::pair<uint64_t, Interval*>{500000, p50}, {990000, p99}}) {
    uint64_t lo = 0, hi = 0;
    if (!quantile_ci_ranks(n, ppm, z, &lo, &hi)) {
      out->valid = false;
      ok = false;
      continue;
    }
    auto at = [&](uint64_t rank) {
      std::nth_element(work.begin(), work.begin() + (rank - 1), work.begin() + n);
      return work[rank - 1];
    };
    const uint64_t rank = std::max<uint64_t>(1, uint64_t((n * ppm + 999999) / 1000000));
    const int64_t est = at(rank);
    out->lo = at(lo);
    out->hi = at(hi);
    out->valid = true;
    if (double(out->hi - out->lo) / 2 > rel * double(est)) ok = false;
  }
  return ok;
}

Summary LatencyStats::summarize() {
  Summary s;
  s.count = n_;
  s.kept = kept_;
  s.exact = n_ <= cap_;
  if (n_ == 0) return s;
  std::sort(buf_.begin(), buf_.begin() + kept_);
  s.mean = mean_;
  s.std = std::sqrt(m2_ / double(n_));
  s.min = min_;
  s.max = max_;
  s.p50 = percentile_ppm(500000);
  s.p90 = percentile_ppm(900000);
  s.p99 = percentile_ppm(990000);
  s.p9999 = percentile_ppm(999900);
  s.p999999 = percentile_ppm(999999);
  for (auto [ppm, out] : {std::pair<uint64_t, Interval*>{500000, &s.p50_ci}, {990000, &s.p99_ci}}) {
    uint64_t lo = 0, hi = 0;
    if (quantile_ci_ranks(kept_, ppm, 1.96, &lo, &hi)) *out = Interval{buf_[lo - 1], buf_[hi - 1], true};
  }
  return s;
}

Summary halve(const Summary& r) {
  Summary s = r;
  s.mean = r.mean / 2;
  s.std = r.std / 2;
  s.min = r.min / 2;
  s.max = r.max / 2;
  s.p50 = r.p50 / 2;
  s.p90 = r.p90 / 2;
  s.p99 = r.p99 / 2;
  s.p9999 = r.p9999 / 2;
  s.p999999 = r.p999999 / 2;
  for (Interval* i : {&s.p50_ci, &s.p99_ci}) {
    i->lo /= 2;
    i->hi /= 2;
  }
  return s;
}

}  // namespace mwperf
