// BufferedToeplitz: a buffered linear Toeplitz (BLT) matrix — the strategy C of a matrix-
// factorization mechanism for prefix sums, with closed forms for its sensitivity and error
// (Dvijotham, McMahan, Pillutla, Steinke & Thakurta 2024, arXiv 2404.16706, §5; McMahan, Xu & Zhang
// 2024, arXiv 2408.08868; the buffered_toeplitz module of Google DeepMind's jax_privacy library).
//
// C is n × n lower-triangular Toeplitz with coefficients
//   c_0 = 1,  c_k = Σ_j ω_j θ_j^{k−1}  (k ≥ 1),   i.e. C(x) = 1 + Σ_j ω_j x/(1 − θ_j x),
// θ = buf_decay, ω = output_scale, one pair per buffer. Multiplying by C streams with one buffer per
// pair: y_t = x_t + Σ_j ω_j buf_j, then buf_j ← θ_j buf_j + x_t. C⁻¹ is again a BLT (C(x) is a
// ratio of two degree-b polynomials, ∏(1 − θ̂_j x)/∏(1 − θ_j x); inverse() swaps them), so the
// correlated noise C⁻¹z also streams in O(buffers) memory: the reason BLTs make correlated noise
// affordable for d × d covariances.
//
// The mechanism (single participation: each record enters one step): release s_t + N_t with
// N = B z, B = A·C⁻¹ (A = prefix-sum matrix), z ~ N(0, σ²) i.i.d. per step and coordinate. Then
//   sensitivity²(n) = max column norm² of C = Σ_{k<n} c_k²  (the first column: every column of a
//                     lower-triangular Toeplitz matrix is a truncation of it, whatever the signs),
//   error(t) = Var(N_t)/σ² = Σ_{m<t} b_m²,  b_m = Σ_{k≤m} ĉ_k (the coefficients of B; ĉ those of C⁻¹),
//   max error over t ≤ n = error(n) (a growing sum), mean error = (1/n)·Σ_{t≤n} error(t),
//   loss = sensitivity² × error: the variance per unit noise multiplier; √(max loss) is what
//   strategies are compared by (sqrt Toeplitz 4.731 at n = 10⁵, computed exactly; Mathias bound
//   1 + ln n/π = 4.665).
// All are closed forms in O(buffers²), independent of n (geometric sums of the θ's, evaluated with
// expm1/log1p so that θ within 1e-7 of 1 keeps full precision).
//
// Well-formedness (checked at construction): 0 ≤ θ_j < 1, θ's distinct (the closed forms and the
// inverse divide by their differences), 1–15 buffers or none (C = I), and the same for C⁻¹'s poles
// θ̂ (real, in [0, 1), distinct: the error closed forms are geometric sums of them; the optimiser's
// BLTs always qualify, arXiv 2504.21413 Thm 1). check_strategy(n) also asks
// the Toeplitz coefficients to be non-negative and non-increasing over the horizon: the condition
// under which the Toeplitz sensitivity closed forms hold for repeated participation (the trap of
// jax_privacy PR #218). It holds automatically when every ω_j > 0 and Σω ≤ 1; otherwise the
// coefficients are checked one by one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/stream/participation.hpp"

namespace dpstream::stream {

class BufferedToeplitz {
 public:
  // InvalidParameter for lengths that differ, more than 15 buffers, θ outside [0, 1), θ's closer
  // than 1e-9 (the inverse is then ill-conditioned), or a non-finite entry. Pairs are kept sorted by
  // decreasing θ.
  BufferedToeplitz(const Eigen::Ref<const Eigen::VectorXd>& buf_decay,
                   const Eigen::Ref<const Eigen::VectorXd>& output_scale);
  // C = I (no buffers): the mechanism that noises every step independently.
  static BufferedToeplitz identity();
  // The pair (C, C⁻¹) from the two sets of poles, given as u = 1 − θ and û = 1 − θ̂ (what the
  // optimiser works in: precise when θ is within 1e-7 of 1). ω and ω̂ follow by partial fractions
  // (arXiv 2404.16706 Lemma 5.2): ω_i = ∏_j(θ_i − θ̂_j)/∏_{j≠i}(θ_i − θ_j), and symmetrically.
  static BufferedToeplitz from_pole_pair(const Eigen::Ref<const Eigen::VectorXd>& one_minus_buf_decay,
                                         const Eigen::Ref<const Eigen::VectorXd>& one_minus_inverse_buf_decay);

  const Eigen::VectorXd& buf_decay() const noexcept { return theta_; }
  const Eigen::VectorXd& output_scale() const noexcept { return omega_; }
  // C⁻¹'s parameters (θ̂, ω̂): the noise generator runs them.
  const Eigen::VectorXd& inverse_buf_decay() const noexcept { return theta_hat_; }
  const Eigen::VectorXd& inverse_output_scale() const noexcept { return omega_hat_; }
  Eigen::Index buffers() const noexcept { return theta_.size(); }
  BufferedToeplitz inverse() const;

  // c_0 … c_{n−1}, and the same for C⁻¹ and for B = A·C⁻¹ (b_m, the noise weights).
  Eigen::VectorXd coefficients(std::uint64_t n) const;
  Eigen::VectorXd inverse_coefficients(std::uint64_t n) const;
  Eigen::VectorXd noise_coefficients(std::uint64_t n) const;

  // Closed forms (see the top of this header); n, t ≥ 1.
  double sensitivity_squared(std::uint64_t n) const;
  double prefix_error(std::uint64_t t) const;
  double max_error(std::uint64_t n) const { return prefix_error(n); }
  double mean_error(std::uint64_t n) const;
  double max_loss(std::uint64_t n) const { return sensitivity_squared(n) * max_error(n); }
  double mean_loss(std::uint64_t n) const { return sensitivity_squared(n) * mean_error(n); }
  // Under (k, b)-participation (participation.hpp): ‖Σ_{p<k'} C e_{1+pb}‖², closed form in
  // O(k'²·buffers²) — exact when the coefficients are non-negative and non-increasing
  // (check_strategy), an understatement otherwise. k = 1 is sensitivity_squared(n).
  double sensitivity_squared(std::uint64_t n, const Participation& participation) const;
  double max_loss(std::uint64_t n, const Participation& participation) const {
    return sensitivity_squared(n, participation) * max_error(n);
  }
  double mean_loss(std::uint64_t n, const Participation& participation) const {
    return sensitivity_squared(n, participation) * mean_error(n);
  }
  // InvalidParameter naming the first offending coefficient unless c_0 ≥ c_1 ≥ … ≥ c_{n−1} ≥ 0.
  void check_strategy(std::uint64_t n) const;

 private:
  BufferedToeplitz() = default;
  void set_inverse_from_poles();  // θ̂, ω̂ from θ, ω (eigenvalues of Θ − ω1ᵀ)

  Eigen::VectorXd theta_, omega_, theta_hat_, omega_hat_;
  Eigen::VectorXd u_, u_hat_;  // 1 − θ, 1 − θ̂, kept exactly when known
};

// The rational approximation of 1/√(1 − x) with `buffers` poles (arXiv 2404.16706 Prop 4.5, the
// "RA-BLT"), its largest θ capped at 1 − 1e-6 and then Σω/θ at 1 − 1e-6: inside the optimiser's
// domain, and its starting point.
BufferedToeplitz rational_approximation_blt(int buffers);

// Which error a strategy is optimised for (blt_optimizer.hpp): the largest release variance over
// the horizon, or the average.
enum class BltError { max, mean };
const char* to_string(BltError error) noexcept;  // "max" | "mean"
// The inverse; any other text: InvalidParameter naming it and the accepted names.
BltError parse_blt_error(const std::string& text);

}  // namespace dpstream::stream
