// Shared statistics for the noise tests: moments, the Kolmogorov–Smirnov statistic and its
// asymptotic p-value, the normal CDF. Tolerances in tests are derived from these (say how at the
// call site).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

namespace dpstream::testing {

inline double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

struct Moments {
  double mean = 0, variance = 0, skewness = 0, excess_kurtosis = 0;
};

inline Moments moments(const std::vector<double>& xs) {
  const double n = static_cast<double>(xs.size());
  double mean = 0;
  for (double x : xs) mean += x;
  mean /= n;
  double m2 = 0, m3 = 0, m4 = 0;
  for (double x : xs) {
    const double d = x - mean, d2 = d * d;
    m2 += d2; m3 += d2 * d; m4 += d2 * d2;
  }
  m2 /= n; m3 /= n; m4 /= n;
  return {mean, m2 * n / (n - 1), m3 / std::pow(m2, 1.5), m4 / (m2 * m2) - 3.0};
}

// D_n = sup |F_n(x) − F(x)|. Sorts a copy.
inline double ks_statistic(std::vector<double> xs, const std::function<double(double)>& cdf) {
  std::sort(xs.begin(), xs.end());
  const double n = static_cast<double>(xs.size());
  double d = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double f = cdf(xs[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return d;
}

// Asymptotic Kolmogorov p-value P(K > √n·D) = 2 Σ_{k≥1} (−1)^{k−1} exp(−2k²n D²).
inline double ks_p_value(double d, std::size_t n) {
  const double t = std::sqrt(static_cast<double>(n)) * d;
  if (t < 0.3) return 1.0;
  double p = 0;
  for (int k = 1; k <= 100; ++k) p += 2.0 * ((k % 2) ? 1.0 : -1.0) * std::exp(-2.0 * k * k * t * t);
  return std::clamp(p, 0.0, 1.0);
}

// ---- Acceptance bands with a stated false-alarm probability α (under the null hypothesis that the
// sampler is exact). Each is a tail bound, so a test built from k of them fails falsely with
// probability ≤ k·α (union bound).

// z such that a sub-Gaussian statistic with standard error se leaves [−z·se, z·se] with probability
// ≤ 2·exp(−z²/2) = α (Chernoff). Exact for a mean of normals; for asymptotically normal statistics
// the true normal tail at this z is ~15× below α at α = 1e-7, which absorbs the CLT error.
inline double chernoff_z(double alpha) { return std::sqrt(2.0 * std::log(2.0 / alpha)); }

// Dvoretzky–Kiefer–Wolfowitz with Massart's constant: P(sup|F_n − F| > ε) ≤ 2·exp(−2nε²) for every
// n, so ε = √(ln(2/α)/(2n)) bounds the KS statistic with false-alarm probability α.
inline double dkw_epsilon(std::size_t n, double alpha) {
  return std::sqrt(std::log(2.0 / alpha) / (2.0 * static_cast<double>(n)));
}

// Hoeffding for a mean of n variables in [0, 1]: P(|mean − μ| ≥ t) ≤ 2·exp(−2nt²) = α.
inline double hoeffding_t(std::size_t n, double alpha) { return dkw_epsilon(n, alpha); }

// Two-sided multiplicative Chernoff interval for a Binomial(n, p) count, α/2 per side:
// P(X ≥ (1+δ)μ) ≤ exp(−μδ²/(2+δ)) and P(X ≤ (1−δ)μ) ≤ exp(−μδ²/2).
inline std::pair<double, double> binomial_interval(double n, double p, double alpha) {
  const double mu = n * p, l = std::log(2.0 / alpha);
  const double delta_up = (l + std::sqrt(l * l + 8.0 * mu * l)) / (2.0 * mu);
  const double delta_down = std::sqrt(2.0 * l / mu);
  return {mu * (1.0 - delta_down), mu * (1.0 + delta_up)};
}

// Laurent & Massart (2000) for X ~ χ²_k: P(X − k ≥ 2√(kt) + 2t) ≤ e^−t and P(k − X ≥ 2√(kt)) ≤ e^−t.
// Two-sided interval with α/2 per side.
inline std::pair<double, double> chi_square_interval(double k, double alpha) {
  const double t = std::log(2.0 / alpha);
  return {k - 2.0 * std::sqrt(k * t), k + 2.0 * std::sqrt(k * t) + 2.0 * t};
}
// One-sided upper bound (goodness-of-fit statistics): P(X ≥ bound) ≤ α.
inline double chi_square_upper(double k, double alpha) {
  const double t = std::log(1.0 / alpha);
  return k + 2.0 * std::sqrt(k * t) + 2.0 * t;
}

}  // namespace dpstream::testing
