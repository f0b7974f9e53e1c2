// Closed forms of a BLT's sensitivity and error (stream/blt.hpp), templated on the scalar so that the
// optimiser differentiates exactly what BufferedToeplitz reports (T = double or detail::Dual).
// Poles are passed as u = 1 − θ: every geometric sum is then evaluated through log1p/expm1 without
// forming 1 − θ from a θ near 1. Internal header (not installed).
#pragma once

#include <cmath>
#include <vector>

#include "dual.hpp"

namespace dpstream::stream::detail {

using std::exp;
using std::expm1;
using std::log;
using std::log1p;

// u of the product of two poles: 1 − (1 − a)(1 − b).
template <class T>
T pole_product(const T& a, const T& b) {
  return a + b - a * b;
}

// G(u, n) = Σ_{i<n} (1 − u)^i for 0 < u ≤ 1 and real n ≥ 0.
template <class T>
T geometric_sum(const T& u, double n) {
  if (value(u) >= 1) return constant(n >= 1 ? 1.0 : 0.0, u);  // θ = 0: only the i = 0 term
  return -expm1(n * log1p(-u)) / u;
}

// H(u, n) = Σ_{t=1}^{n} G(u, t) = (n − (1 − u)·G(u, n))/u, rearranged so that nothing cancels when
// n·u is small: n·u + expm1(L) = expm1mx(L) + n·log1mpx(u) with L = n·log(1 − u).
template <class T>
T cumulative_geometric_sum(const T& u, double n) {
  if (value(u) >= 1) return constant(n, u);
  const T l = n * log1p(-u);
  const T g = -expm1(l) / u;
  return ((expm1mx(l) + n * log1mpx(u)) / u + u * g) / u;
}

// ω of the BLT with poles u whose inverse has poles u_hat (partial fractions, arXiv 2404.16706
// Lemma 5.2): ω_i = ∏_j (θ_i − θ̂_j) / ∏_{j≠i} (θ_i − θ_j) = ∏_j (û_j − u_i) / ∏_{j≠i} (u_j − u_i).
template <class T>
std::vector<T> output_scale_from_poles(const std::vector<T>& u, const std::vector<T>& u_hat) {
  std::vector<T> omega;
  for (std::size_t i = 0; i < u.size(); ++i) {
    T numerator = constant(1.0, u[i]), denominator = constant(1.0, u[i]);
    for (std::size_t j = 0; j < u.size(); ++j) {
      numerator *= u_hat[j] - u[i];
      if (j != i) denominator *= u[j] - u[i];
    }
    omega.push_back(numerator / denominator);
  }
  return omega;
}

// Σ_{k<n} c_k² = 1 + Σ_{j,l} ω_j ω_l G(u_jl, n − 1): the squared norm of C's first column.
template <class T>
T sensitivity_squared(const std::vector<T>& u, const std::vector<T>& omega, double n, const T& one) {
  T sum = one;
  for (std::size_t j = 0; j < u.size(); ++j)
    for (std::size_t l = 0; l < u.size(); ++l) sum += omega[j] * omega[l] * geometric_sum(pole_product(u[j], u[l]), n - 1);
  return sum;
}

// θ^e = (1 − u)^e for an integer e ≥ 0 (θ = 0 included: 0^0 = 1).
template <class T>
T pole_power(const T& u, double e) {
  if (value(u) >= 1) return constant(e == 0 ? 1.0 : 0.0, u);
  return exp(e * log1p(-u));
}

// Σ_{s<M} c_{s+d} c_s for d ≥ 1 = c_d + Σ_{j,l} ω_j ω_l θ_j^d G(u_jl, M − 1), c_d = Σ_j ω_j θ_j^(d−1):
// the inner product of C's columns d apart, truncated to the M rows they share.
template <class T>
T column_cross_product(const std::vector<T>& u, const std::vector<T>& omega, double d, double m, const T& one) {
  T sum = constant(0.0, one);
  for (std::size_t j = 0; j < u.size(); ++j) {
    sum += omega[j] * pole_power(u[j], d - 1);
    const T theta_d = pole_power(u[j], d);
    for (std::size_t l = 0; l < u.size(); ++l)
      sum += omega[j] * omega[l] * theta_d * geometric_sum(pole_product(u[j], u[l]), m - 1);
  }
  return sum;
}

// ‖Σ_{p<k} C e_{1+pb}‖² over n rows (k ≤ ⌈n/b⌉): k participations exactly b apart from step 1, the
// worst (k, b) pattern for non-negative, non-increasing coefficients (participation.hpp):
// Σ_p sensitivity²(n − pb) + 2 Σ_{p<q} cross((q − p)b, n − qb). k = 1 is sensitivity_squared(n).
template <class T>
T participation_sensitivity_squared(const std::vector<T>& u, const std::vector<T>& omega, double n, double k,
                                    double b, const T& one) {
  T sum = constant(0.0, one);
  for (double p = 0; p < k; ++p) {
    sum += sensitivity_squared(u, omega, n - p * b, one);
    for (double q = p + 1; q < k; ++q) sum += 2.0 * column_cross_product(u, omega, (q - p) * b, n - q * b, one);
  }
  return sum;
}

// b_m = Σ_{k≤m} ĉ_k = β + Σ_j γ_j θ̂_j^m with β = 1 + Σ ω̂_j/û_j (the limit b_∞) and γ_j = −ω̂_j/û_j.
// For the optimal strategies β is small and the γ_j > 0 (ω̂ < 0), so the expansions below add
// terms of one sign: no cancellation even at n = 10⁷.
template <class T>
void noise_expansion(const std::vector<T>& u_hat, const std::vector<T>& omega_hat, const T& one, T& beta,
                     std::vector<T>& gamma) {
  beta = one;
  gamma.clear();
  for (std::size_t j = 0; j < u_hat.size(); ++j) {
    beta += omega_hat[j] / u_hat[j];
    gamma.push_back(-omega_hat[j] / u_hat[j]);
  }
}

// error(n) = Σ_{m<n} b_m² = nβ² + 2β Σ_j γ_j G(û_j, n) + Σ_{j,l} γ_j γ_l G(û_jl, n).
template <class T>
T prefix_error(const std::vector<T>& u_hat, const std::vector<T>& omega_hat, double n, const T& one) {
  T beta;
  std::vector<T> gamma;
  noise_expansion(u_hat, omega_hat, one, beta, gamma);
  T sum = n * beta * beta;
  for (std::size_t j = 0; j < u_hat.size(); ++j) {
    sum += 2.0 * beta * gamma[j] * geometric_sum(u_hat[j], n);
    for (std::size_t l = 0; l < u_hat.size(); ++l)
      sum += gamma[j] * gamma[l] * geometric_sum(pole_product(u_hat[j], u_hat[l]), n);
  }
  return sum;
}

// (1/n) Σ_{t=1}^{n} error(t) = (1/n)[β² n(n+1)/2 + 2β Σ_j γ_j H(û_j, n) + Σ_{j,l} γ_j γ_l H(û_jl, n)].
template <class T>
T mean_error(const std::vector<T>& u_hat, const std::vector<T>& omega_hat, double n, const T& one) {
  T beta;
  std::vector<T> gamma;
  noise_expansion(u_hat, omega_hat, one, beta, gamma);
  T sum = (0.5 * n * (n + 1)) * beta * beta;
  for (std::size_t j = 0; j < u_hat.size(); ++j) {
    sum += 2.0 * beta * gamma[j] * cumulative_geometric_sum(u_hat[j], n);
    for (std::size_t l = 0; l < u_hat.size(); ++l)
      sum += gamma[j] * gamma[l] * cumulative_geometric_sum(pole_product(u_hat[j], u_hat[l]), n);
  }
  return sum / n;
}

}  // namespace dpstream::stream::detail
