#include "core/batches.h"

#include <algorithm>
#include <cmath>

namespace mwperf {
namespace {

// Acklam's rational approximation of the standard normal quantile (|rel err| < 1.2e-9).
double normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double lo = 0.02425, hi = 1 - lo;
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  if (p < lo) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > hi) return -normal_quantile(1 - p);
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

double sd_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size() - 1));
}

double lag1(const std::vector<double>& v) {
  const double m = mean_of(v);
  double num = 0, den = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    den += (v[i] - m) * (v[i] - m);
    if (i + 1 < v.size()) num += (v[i] - m) * (v[i + 1] - m);
  }
  return den > 0 ? num / den : 0;
}

}  // namespace

double student_t_quantile(double p, double df) {
  // Cornish-Fisher expansion of t around the normal quantile (Abramowitz &
  // Stegun 26.7.5); accurate to a few parts in 1e3 for df >= 9 far into the tail.
  const double z = normal_quantile(p);
  const double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
  return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df * df * df) +
         (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * df * df * df * df);
}

Batches::Batches(uint64_t min_batch)
    : min_batch_(std::max<uint64_t>(min_batch, 1)), prev_(2 * LatencyStats::kBuckets, 0),
      diff_(2 * LatencyStats::kBuckets, 0) {}

void Batches::observe(const LatencyStats& s) {
  const uint64_t n = s.count();
  if (n < prev_n_ + min_batch_) return;
  const size_t lo = s.lowest_position(), hi = s.highest_position();
  uint64_t total = 0;
  for (size_t p = lo; p <= hi; ++p) {
    const uint64_t c = s.count_at(p);
    diff_[p] = c - prev_[p];
    prev_[p] = c;
    total += diff_[p];
  }
  prev_n_ = n;
  if (total == 0) return;
  // The batch's nearest-rank p50 and p99 in one pass.
  const uint64_t r50 = std::max<uint64_t>(1, (total * 500000 + 999999) / 1000000);
  const uint64_t r99 = std::max<uint64_t>(1, (total * 990000 + 999999) / 1000000);
  uint64_t seen = 0;
  double v50 = 0, v99 = 0;
  bool got50 = false;
  for (size_t p = lo; p <= hi; ++p) {
    seen += diff_[p];
    if (!got50 && seen >= r50) {
      v50 = double(s.value_at(p));
      got50 = true;
    }
    if (seen >= r99) {
      v99 = double(s.value_at(p));
      break;
    }
  }
  q50_.push_back(v50);
  q99_.push_back(v99);
  if (q50_.size() >= kMaxBatches) merge_pairs();
}

void Batches::merge_pairs() {
  for (std::vector<double>* q : {&q50_, &q99_}) {
    std::vector<double> m;
    for (size_t i = 0; i + 1 < q->size(); i += 2) m.push_back(((*q)[i] + (*q)[i + 1]) / 2);
    if (q->size() % 2) m.push_back(q->back());  // the newest, unpaired, stays as it is
    *q = std::move(m);
  }
  min_batch_ *= 2;
}

double Batches::inflation(int which) const {
  const double r = std::clamp(lag1(which == 0 ? q50_ : q99_), 0.0, 0.9);
  return std::sqrt((1 + r) / (1 - r));
}

Interval Batches::interval(int which, int64_t estimate, double confidence) const {
  const std::vector<double>& q = which == 0 ? q50_ : q99_;
  if (q.size() < kMinBatches) return {};
  const double k = double(q.size());
  const double half =
      student_t_quantile(1 - (1 - confidence) / 2, k - 1) * sd_of(q) / std::sqrt(k) * inflation(which);
  return Interval{int64_t(std::floor(double(estimate) - half)), int64_t(std::ceil(double(estimate) + half)), true};
}

void Batches::fill(Summary* s, double confidence) const {
  s->ci_confidence = confidence;
  s->ci_batches = count();
  if (s->p50.ok) s->p50_ci = interval(0, s->p50.v, confidence);
  if (s->p99.ok) s->p99_ci = interval(1, s->p99.v, confidence);
}

bool Batches::converged(const Summary& now, double precision, double confidence, uint32_t look,
                        Interval* p50, Interval* p99) const {
  if (count() < kMinBatches || !now.p50.ok || !now.p99.ok) return false;
  const double pi2 = 9.869604401089358;
  const double spent = (1 - confidence) * 6 / (pi2 * double(look) * double(look)) / 2;  // per quantile
  *p50 = interval(0, now.p50.v, 1 - spent);
  *p99 = interval(1, now.p99.v, 1 - spent);
  auto within = [precision](const Interval& i, int64_t est) {
    return i.valid && double(i.hi - i.lo) / 2 <= precision * std::fabs(double(est));
  };
  return within(*p50, now.p50.v) && within(*p99, now.p99.v);
}

}  // namespace mwperf
