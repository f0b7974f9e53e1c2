// Clopper–Pearson (exact binomial) confidence bounds, one-sided: the bounds every empirical-ε audit
// rests on (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021). With k successes in n trials,
//   upper(k, n, a) = Beta⁻¹(1 − a; k + 1, n − k)   (1 when k = n),
//   lower(k, n, a) = Beta⁻¹(a; k, n − k + 1)        (0 when k = 0),
// so P(p > upper) ≤ a and P(p < lower) ≤ a for every true p (exact, never asymptotic).
#pragma once

#include <cstdint>

#include <boost/math/distributions/beta.hpp>

namespace dpstream::audit {

inline double clopper_pearson_upper(std::int64_t successes, std::int64_t trials, double a) {
  if (successes >= trials) return 1.0;
  const boost::math::beta_distribution<double> beta(static_cast<double>(successes + 1),
                                                    static_cast<double>(trials - successes));
  return boost::math::quantile(beta, 1.0 - a);
}

inline double clopper_pearson_lower(std::int64_t successes, std::int64_t trials, double a) {
  if (successes <= 0) return 0.0;
  const boost::math::beta_distribution<double> beta(static_cast<double>(successes),
                                                    static_cast<double>(trials - successes + 1));
  return boost::math::quantile(beta, a);
}

}  // namespace dpstream::audit
