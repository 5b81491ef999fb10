#include "core/stats.h"

#include <algorithm>
#include <cmath>

namespace mwperf {
namespace {
__extension__ typedef unsigned __int128 u128;  // n * ppm without overflow
}  // namespace

bool supported(uint64_t n, uint64_t ppm) { return ppm < 1000000 && (u128)n * (1000000 - ppm) >= 1000000; }

LatencyStats::LatencyStats(size_t strided)
    : pos_(new std::atomic<uint64_t>[kBuckets]), neg_(new std::atomic<uint64_t>[kBuckets]), slots_(strided) {
  // Every page is touched here, not on the hot path.
  for (size_t i = 0; i < kBuckets; ++i) {
    pos_[i].store(0, std::memory_order_relaxed);
    neg_[i].store(0, std::memory_order_relaxed);
  }
  for (Slot& s : slots_) s = Slot{0, 0};
}

void LatencyStats::keep(uint64_t n, int64_t v) {
  const size_t cap = slots_.size();
  if (filled_ < cap) {
    slots_[filled_++] = Slot{n, v};
    if (filled_ < cap) return;
  } else {
    // A slot of the finer stride before the last doubling; every other slot is one.
    while (slots_[scan_].n % stride_ == 0) ++scan_;
    slots_[scan_++] = Slot{n, v};
    size_t free = 0;
    for (size_t i = scan_; i < cap && free == 0; ++i) free += slots_[i].n % stride_ != 0;
    if (free > 0) return;
  }
  // Every slot holds a multiple of the stride: keep every other one from now on.
  stride_ *= 2;
  scan_ = 0;
  countdown_ = stride_ - n % stride_;
}

uint64_t LatencyStats::bucket_mid(size_t idx) {
  const size_t g = idx >> kSubBits;
  if (g == 0) return idx;
  const uint64_t m = idx & ((size_t(1) << kSubBits) - 1);
  const uint64_t width = uint64_t(1) << (g - 1);
  return (((uint64_t(1) << kSubBits) + m) << (g - 1)) + (width - 1) / 2;
}

uint64_t LatencyStats::bucket_low(size_t idx) {
  const size_t g = idx >> kSubBits;
  if (g == 0) return idx;
  return ((uint64_t(1) << kSubBits) + (idx & ((size_t(1) << kSubBits) - 1))) << (g - 1);
}

uint64_t LatencyStats::bucket_high(size_t idx) {
  const size_t g = idx >> kSubBits;
  return g == 0 ? idx : bucket_low(idx) + (uint64_t(1) << (g - 1)) - 1;
}

size_t LatencyStats::position(int64_t v) {
  return v < 0 ? kBuckets - 1 - index(uint64_t(0) - uint64_t(v)) : kBuckets + index(uint64_t(v));
}

size_t LatencyStats::lowest_position() const { return position(min()); }

size_t LatencyStats::highest_position() const { return position(max()); }

size_t LatencyStats::position_of_rank(uint64_t rank) const {
  uint64_t seen = 0;
  const size_t lo = lowest_position(), hi = highest_position();
  for (size_t p = lo; p <= hi; ++p) {
    seen += count_at(p);
    if (seen >= rank) return p;
  }
  return hi;
}

int64_t LatencyStats::low_at(size_t p) const {
  const int64_t v = p < kBuckets ? -int64_t(bucket_high(kBuckets - 1 - p)) : int64_t(bucket_low(p - kBuckets));
  return std::clamp(v, min(), max());
}

int64_t LatencyStats::high_at(size_t p) const {
  const int64_t v = p < kBuckets ? -int64_t(bucket_low(kBuckets - 1 - p)) : int64_t(bucket_high(p - kBuckets));
  return std::clamp(v, min(), max());
}

uint64_t LatencyStats::count_at(size_t p) const {
  return (p < kBuckets ? neg_[kBuckets - 1 - p] : pos_[p - kBuckets]).load(std::memory_order_relaxed);
}

int64_t LatencyStats::value_at(size_t p) const {
  return p < kBuckets ? -int64_t(bucket_mid(kBuckets - 1 - p)) : int64_t(bucket_mid(p - kBuckets));
}

Pct LatencyStats::percentile_ppm(uint64_t ppm) const {
  const uint64_t n = count();
  if (!supported(n, ppm)) return {};
  uint64_t rank = uint64_t(((u128)n * ppm + 999999) / 1000000);
  rank = std::max<uint64_t>(1, std::min(rank, n));
  if (rank == n) return {max(), true};
  if (rank == 1) return {min(), true};
  uint64_t seen = 0;
  const size_t hi = highest_position();
  for (size_t p = lowest_position(); p <= hi; ++p) {
    seen += count_at(p);
    if (seen >= rank) return {std::clamp(value_at(p), min(), max()), true};
  }
  return {max(), true};
}

Summary LatencyStats::summarize() const {
  Summary s;
  s.count = count();
  if (s.count == 0) return s;
  s.mean = mean_;
  s.std = std::sqrt(m2_ / double(s.count));
  s.min = min();
  s.max = max();
  s.p50 = percentile_ppm(500000);
  s.p90 = percentile_ppm(900000);
  s.p99 = percentile_ppm(990000);
  s.p999 = percentile_ppm(999000);
  s.p9999 = percentile_ppm(999900);
  s.p999999 = percentile_ppm(999999);
  return s;
}

size_t LatencyStats::write_samples(std::FILE* f, int64_t divisor) const {
  std::vector<Slot> kept;
  kept.reserve(filled_);
  for (size_t i = 0; i < filled_; ++i)
    if (slots_[i].n % stride_ == 0) kept.push_back(slots_[i]);
  std::sort(kept.begin(), kept.end(), [](const Slot& a, const Slot& b) { return a.n < b.n; });
  size_t written = 0;
  for (const Slot& s : kept) {
    const int64_t v = s.v / divisor;
    unsigned char b[8];
    for (int k = 0; k < 8; ++k) b[k] = static_cast<unsigned char>(uint64_t(v) >> (8 * k));
    if (std::fwrite(b, 1, 8, f) != 8) break;
    ++written;
  }
  return written;
}

size_t LatencyStats::memory_bytes() const {
  return 2 * kBuckets * sizeof(std::atomic<uint64_t>) + slots_.size() * sizeof(Slot);
}

Summary halve(const Summary& r) {
  Summary s = r;
  s.mean = r.mean / 2;
  s.std = r.std / 2;
  s.min = r.min / 2;
  s.max = r.max / 2;
  for (Pct* p : {&s.p50, &s.p90, &s.p99, &s.p999, &s.p9999, &s.p999999}) p->v /= 2;
  for (Interval* i : {&s.p50_ci, &s.p99_ci, &s.p999_ci}) {
    i->lo /= 2;
    i->hi /= 2;
  }
  return s;
}

}  // namespace mwperf
