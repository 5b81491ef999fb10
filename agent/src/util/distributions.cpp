#include "util/distributions.h"

#include <algorithm>
#include <cmath>

namespace mwperf {
namespace {

double log_beta(double a, double b) { return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b); }

// The continued fraction of I_x(a, b) (DLMF 8.17.22), by the modified Lentz
// method; converges fast for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < tiny ? tiny : d);
  double f = d;
  for (int m = 1; m < 100000; ++m) {
    for (int half = 0; half < 2; ++half) {
      const double num = half == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                                   : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + num * d;
      c = 1 + num / c;
      d = 1 / (std::fabs(d) < tiny ? tiny : d);
      if (std::fabs(c) < tiny) c = tiny;
      f *= c * d;
      if (half == 1 && std::fabs(c * d - 1) < eps) return f;
    }
  }
  return f;
}

}  // namespace

double normal_quantile(double p) {
  // Acklam's rational approximation.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
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

double beta_inc(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(a * std::log(x) + b * std::log1p(-x) - log_beta(a, b));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double beta_quantile(double p, double a, double b) {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  // Newton steps on I_x(a, b) - p, kept inside a bracket that bisection narrows
  // whenever a step would leave it.
  const double lb = log_beta(a, b);
  double lo = 0, hi = 1, x = a / (a + b);
  for (int i = 0; i < 300; ++i) {
    const double f = beta_inc(a, b, x) - p;
    if (f == 0) return x;
    (f < 0 ? lo : hi) = x;
    const double density = std::exp((a - 1) * std::log(x) + (b - 1) * std::log1p(-x) - lb);
    double next = density > 0 && std::isfinite(density) ? x - f / density : -1;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (std::fabs(next - x) <= 1e-15 * std::max(x, 1e-300) || hi - lo <= 1e-300) return next;
    x = next;
  }
  return x;
}

double student_t_quantile(double p, double df) {
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  // P(|T| > t) = I_{df / (df + t^2)}(df / 2, 1 / 2)
  const double x = beta_quantile(2 * (1 - p), df / 2, 0.5);
  return std::sqrt(df * (1 - x) / x);
}

}  // namespace mwperf
