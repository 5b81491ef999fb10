// The few distribution functions the statistics need, in double precision:
// the standard normal quantile, Student's t quantile (any df > 0, not only
// large ones) and the regularized incomplete beta function with its inverse
// (for Clopper-Pearson bounds of a proportion and for t).
#pragma once

namespace mwperf {

// P(Z <= z) = p for a standard normal Z (|relative error| < 1.2e-9).
double normal_quantile(double p);

// I_x(a, b): the regularized incomplete beta function, a, b > 0, x in [0, 1].
double beta_inc(double a, double b, double x);

// The x with I_x(a, b) = p (p in [0, 1]).
double beta_quantile(double p, double a, double b);

// The t with P(T <= t) = p for Student's t with df > 0 degrees of freedom.
double student_t_quantile(double p, double df);

}  // namespace mwperf
