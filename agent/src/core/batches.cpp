#include "core/batches.h"

#include <algorithm>
#include <cmath>

#include "util/distributions.h"

namespace mwperf {
namespace {

constexpr double kMaxCorrelation = 0.5;  // remaining lag-1 autocorrelation beyond which no interval is given

// One grouping of the batches: g neighbours at a time.
struct Grouping {
  double ratio = 0, se = 0, df = 0, r = 0;
  uint32_t k = 0;
};

Grouping group(const std::vector<double>& c, const std::vector<double>& s, size_t g) {
  std::vector<double> gc, gs;
  for (size_t i = 0; i < c.size(); i += g) {
    double a = 0, b = 0;
    for (size_t j = i; j < std::min(c.size(), i + g); ++j) a += c[j], b += s[j];
    gc.push_back(a);
    gs.push_back(b);
  }
  Grouping out;
  out.k = uint32_t(gc.size());
  double sc = 0, ss = 0;
  for (size_t j = 0; j < gc.size(); ++j) sc += gc[j], ss += gs[j];
  out.ratio = ss > 0 ? sc / ss : 0;
  double sum2 = 0, sum4 = 0, lag = 0, prev = 0;
  for (size_t j = 0; j < gc.size(); ++j) {
    const double d = gc[j] - out.ratio * gs[j];  // the ratio estimator's residual
    sum2 += d * d;
    sum4 += d * d * d * d;
    if (j > 0) lag += prev * d;
    prev = d;
  }
  const double k = double(out.k);
  out.se = ss > 0 ? std::sqrt(k / (k - 1) * sum2) / ss : 0;
  // The lag-1 autocorrelation, less its bias for independent batch means (-1/k).
  out.r = (sum2 > 0 ? lag / sum2 : 0) + 1 / k;
  // Satterthwaite: a variance estimated from sum2 has 2k / (kurtosis - 1) degrees of freedom.
  const double kurtosis = sum2 > 0 ? k * sum4 / (sum2 * sum2) : 3;
  out.df = std::max(1.0, kurtosis > 1 ? std::min(k - 1, 2 * k / (kurtosis - 1)) : k - 1);
  return out;
}

}  // namespace

BatchMean batch_mean(const std::vector<double>& c, const std::vector<double>& s) {
  BatchMean m;
  if (c.size() < Batches::kMinBatches) {
    m.why = "fewer than 10 batches";
    return m;
  }
  std::vector<Grouping> levels;
  for (size_t g = 1; (c.size() + g - 1) / g >= Batches::kMinBatches; g *= 2) levels.push_back(group(c, s, g));
  // The finest grouping from which on no lag-1 autocorrelation is significant.
  size_t use = levels.size() - 1;
  for (size_t i = levels.size(); i-- > 0;) {
    if (levels[i].r >= 2 / std::sqrt(double(levels[i].k))) break;
    use = i;
  }
  const Grouping& l = levels[use];
  m.ratio = l.ratio;
  m.batches = l.k;
  if (l.r > kMaxCorrelation) {
    m.why = "correlation too long for the run";
    return m;
  }
  const double r = std::max(0.0, l.r);
  m.se = l.se * std::sqrt((1 + r) / (1 - r));
  m.df = l.df;
  return m;
}

void proportion_bounds(double x, double neff, double df, double confidence, double* lo, double* hi) {
  const double alpha = 1 - confidence;
  const double z = normal_quantile(1 - alpha / 2), t = student_t_quantile(1 - alpha / 2, df);
  const double n = neff * (z / t) * (z / t), k = n * x;
  *lo = k <= 0 ? 0 : beta_quantile(alpha / 2, k, n - k + 1);
  *hi = k >= n ? 1 : beta_quantile(1 - alpha / 2, k + 1, n - k);
}

Batches::Batches(uint64_t min_batch)
    : min_batch_(std::max<uint64_t>(min_batch, 1)),
      prev_(coarse(2 * LatencyStats::kBuckets - 1) + 1, 0),
      pool_(kPool, Entry{0, 0}),
      scratch_(2 * prev_.size(), Entry{0, 0}),
      begin_{0} {
  begin_.reserve(kMaxBatches + 2);
  sizes_.reserve(kMaxBatches + 1);
}

void Batches::observe(const LatencyStats& s) {
  if (s.count() >= batched_ + min_batch_) append(s);
}

void Batches::close(const LatencyStats& s) {
  if (s.count() > batched_) append(s);
}

void Batches::append(const LatencyStats& s) {
  const size_t lo = coarse(s.lowest_position()), hi = coarse(s.highest_position());
  // Room for every coarse position in range; merging makes room, else the batch stays open.
  while (kPool - begin_.back() < hi - lo + 1)
    if (!merge_pairs()) return;
  size_t end = begin_.back();
  uint64_t total = 0;
  for (size_t cp = lo; cp <= hi; ++cp) {
    uint64_t c = 0;
    for (size_t p = cp << kCoarseShift; p < (cp + 1) << kCoarseShift; ++p) c += s.count_at(p);
    const uint64_t d = c - prev_[cp];
    prev_[cp] = c;
    if (d == 0) continue;
    pool_[end++] = Entry{d, uint32_t(cp)};
    total += d;
  }
  if (total == 0) return;
  batched_ += total;
  sizes_.push_back(total);
  begin_.push_back(end);
  if (count() >= kMaxBatches) merge_pairs();
}

bool Batches::merge_pairs() {
  if (count() < 2) return false;
  size_t w = 0, out = 0;
  for (size_t i = 0; i < count(); i += 2, ++out) {
    const Entry *a = &pool_[begin_[i]], *ae = &pool_[begin_[i + 1]];
    size_t n = 0;
    if (i + 1 < count()) {
      const Entry *b = ae, *be = &pool_[begin_[i + 2]];
      while (a < ae || b < be) {
        if (b == be || (a < ae && a->pos < b->pos))
          scratch_[n++] = *a++;
        else if (a == ae || b->pos < a->pos)
          scratch_[n++] = *b++;
        else
          scratch_[n++] = Entry{a->count + b->count, a->pos}, ++a, ++b;
      }
      sizes_[out] = sizes_[i] + sizes_[i + 1];
    } else {
      while (a < ae) scratch_[n++] = *a++;
      sizes_[out] = sizes_[i];
    }
    std::copy(scratch_.begin(), scratch_.begin() + long(n), pool_.begin() + long(w));
    begin_[out] = w;
    w += n;
  }
  begin_.resize(out + 1);
  begin_[out] = w;
  sizes_.resize(out);
  min_batch_ *= 2;
  return true;
}

BatchMean Batches::cdf_at(const LatencyStats& s, uint64_t ppm) const {
  const Pct est = s.percentile_ppm(ppm);
  if (!est.ok) {
    BatchMean m;
    m.why = "not measured";
    return m;
  }
  const uint32_t at = uint32_t(coarse(LatencyStats::position(est.v)));
  std::vector<double> c(count()), n(count());
  for (size_t i = 0; i < count(); ++i) {
    uint64_t below = 0;
    for (size_t e = begin_[i]; e < begin_[i + 1] && pool_[e].pos <= at; ++e) below += pool_[e].count;
    c[i] = double(below);
    n[i] = double(sizes_[i]);
  }
  return batch_mean(c, n);
}

Interval Batches::interval(const LatencyStats& s, uint64_t ppm, double confidence) const {
  Interval out;
  const BatchMean m = cdf_at(s, ppm);
  if (m.why) {
    out.why = m.why;
    return out;
  }
  // The effective sample size: the batched samples over the design effect,
  // at least that of every less extreme quantile down to p90 (p99: p90's;
  // p99.9: p99's and p90's).
  const double total = double(batched_);
  auto effective = [total](const BatchMean& b) {
    const double v = b.ratio * (1 - b.ratio);
    return v > 0 && b.se > 0 ? std::min(total, v / (b.se * b.se)) : total;
  };
  double neff = effective(m), df = m.df;
  for (uint64_t less = 1000000 - 10 * (1000000 - ppm); ppm >= 990000 && less >= 900000;
       less = 1000000 - 10 * (1000000 - less)) {
    const BatchMean partner = cdf_at(s, less);
    if (partner.why) {  // what a less extreme quantile cannot support, a more extreme one cannot either
      out.why = partner.why;
      return out;
    }
    if (effective(partner) < neff) {
      neff = effective(partner);
      df = partner.df;
    }
  }
  const double alpha = 1 - confidence, p = double(ppm) / 1e6;
  const double z = normal_quantile(1 - alpha / 2), t = student_t_quantile(1 - alpha / 2, df);
  if (neff * (z / t) * (z / t) * (1 - p) < 1 || neff * (z / t) * (z / t) * p < 1) {
    out.why = "fewer than one independent sample beyond it";
    return out;
  }
  double p_lo = 0, p_hi = 1;
  proportion_bounds(p, neff, df, confidence, &p_lo, &p_hi);
  const double n = double(s.count());
  const uint64_t r_lo = uint64_t(std::ceil(n * p_lo)), r_hi = uint64_t(std::ceil(n * p_hi));
  if (r_lo <= 1 || r_hi >= s.count()) {
    out.why = "a bound beyond the samples";
    return out;
  }
  out.lo = s.low_at(s.position_of_rank(r_lo));
  out.hi = s.high_at(s.position_of_rank(r_hi));
  out.valid = true;
  return out;
}

void Batches::fill(Summary* sum, const LatencyStats& s, double confidence) const {
  sum->ci_confidence = confidence;
  sum->ci_batches = count();
  const std::pair<Interval*, uint64_t> want[] = {
      {&sum->p50_ci, 500000}, {&sum->p99_ci, 990000}, {&sum->p999_ci, 999000}};
  for (const auto& [ci, ppm] : want) *ci = interval(s, ppm, confidence);
}

FlowBatches::FlowBatches() {
  for (auto* v : {&received_, &ns_, &lost_, &expected_}) v->reserve(Batches::kMaxBatches);
}

void FlowBatches::observe(int64_t t_ns, uint64_t received, uint64_t expected) {
  if (t_ >= 0 && t_ns > t_) {
    received_.push_back(double(received - r_));
    ns_.push_back(double(t_ns - t_));
    lost_.push_back(double(int64_t(expected - received) - int64_t(e_ - r_)));  // gaps filled late: negative
    expected_.push_back(double(expected - e_));
    if (count() >= Batches::kMaxBatches) {
      for (auto* v : {&received_, &ns_, &lost_, &expected_}) {
        for (size_t i = 0; i < v->size(); i += 2) (*v)[i / 2] = (*v)[i] + (i + 1 < v->size() ? (*v)[i + 1] : 0);
        v->resize((v->size() + 1) / 2);
      }
    }
  }
  t_ = t_ns;
  r_ = received;
  e_ = expected;
}

Range FlowBatches::rate(double confidence) const {
  Range r;
  const BatchMean m = batch_mean(received_, ns_);
  r.est = m.ratio * 1e9;
  if (m.why) {
    r.why = m.why;
    return r;
  }
  const double half = student_t_quantile(1 - (1 - confidence) / 2, m.df) * m.se * 1e9;
  r.lo = std::max(0.0, r.est - half);
  r.hi = r.est + half;
  r.valid = true;
  return r;
}

Range FlowBatches::loss(double confidence) const {
  Range r;
  const BatchMean m = batch_mean(lost_, expected_);
  r.est = std::clamp(m.ratio, 0.0, 1.0);
  if (m.why) {
    r.why = m.why;
    return r;
  }
  double total = 0;
  for (double e : expected_) total += e;
  const double v = r.est * (1 - r.est);
  const double neff = v > 0 && m.se > 0 ? std::min(total, v / (m.se * m.se)) : total;
  proportion_bounds(r.est, neff, m.df, confidence, &r.lo, &r.hi);
  r.valid = total > 0;
  if (!r.valid) r.why = "nothing expected yet";
  return r;
}

double spent_alpha(double confidence, int64_t from_ns, int64_t to_ns, int64_t max_ns, int quantities) {
  auto by = [max_ns](int64_t t) {
    return std::log(1 + (std::exp(1.0) - 1) * std::clamp(double(t) / double(std::max<int64_t>(max_ns, 1)), 0.0, 1.0));
  };
  return (1 - confidence) * (by(to_ns) - by(from_ns)) / quantities;
}

}  // namespace mwperf
