// Separable factorization noise: the continual-release strategy built for estimating the mean of a
// stationary stream (stationary_estimate.hpp), where it beats every Toeplitz strategy.
//
// The strategy is the lower-triangular C with C_tj = α_t·β_j (j ≤ t), β_j = 1/√(Σ_{s≥j} α_s²), so
// that every column of C has norm exactly 1. Then C·x is α_t·W_t with W_t = Σ_{j≤t} β_j x_j a
// weighted prefix sum, and a release needs one previous draw, not a buffer per pole.
//
// Why this C (derived here, checked numerically; not in the papers). If every step's sum has the
// same mean m, the best linear unbiased estimate of m from y = C·x + z after t steps is
// m̂_t = Σ_{s≤t} r_s y_s / Σ_{s≤t} r_s², r = C·1, with Var = σ²/info_t, info_t = Σ_{s≤t} r_s². So
// the estimate's accuracy depends on C only through its row sums. For given row sums, the C of
// least largest column norm minimises Σ_j λ_j‖C e_j‖² for some weights λ ≥ 0 (Lagrange), row by
// row: C_tj ∝ r_t/λ_j, i.e. rank one, C_tj = α_t β_j. The optimiser below therefore searches α
// only; an unconstrained search over all 110,215 entries of C (T = 469, scipy L-BFGS) stopped at
// the same loss (20.0361 vs 20.0362 at exponent 0.4).
//
// Privacy contract (as for every factorization, factorization_noise.hpp)
//  * Neighbouring relation: streams that differ in one row (zeroed in its slot or replaced, Δ says
//    which; a removal that shifts later rows is not covered), single participation. A unit in up to
//    k steps ≥ b apart: participation.hpp (a proven upper bound here).
//  * Mechanism: y = C·x + z, z_t ~ N(0, σ²) i.i.d. per step and coordinate, drawn once; one query of
//    l2 sensitivity Δ·max_j ‖C e_j‖ = Δ (computed, not assumed). The released prefix sums
//    R = A·C⁻¹·y = S + A·C⁻¹·z (unbiased for any stream) and the stationary estimate are
//    post-processing of y. C is causal, so rows may be chosen adaptively (Denisov et al. 2022).
//  * Guarantee: μ = Δ·max_j‖C e_j‖/σ Gaussian DP for all T releases; one accountant charge.
//  * Error of the released prefix: N_t = Σ_{j≤t} g_j z_j with g_j = (√A_j − √A_{j+1})/α_j for j < t
//    and g_t = √A_t/α_t (A_j = Σ_{s≥j} α_s²): it grows about like √t, far above a BLT's — the
//    prefix is not what this strategy is for. The stationary estimate's error is σ²/info_t.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/stream/continual_noise.hpp"

namespace dpstream::stream {

class SeparableStrategy {
 public:
  // α_1 … α_T, each finite and > 0 (InvalidParameter otherwise); scale-free, stored with α_1 = 1.
  explicit SeparableStrategy(const Eigen::Ref<const Eigen::VectorXd>& alpha);

  // Minimises Σ_{t<T} info_t^(−exponent) over α (L-BFGS, LBFGS++, exact gradient). The last release
  // is left out: no later step uses it, so the optimum spends almost nothing on it (α_T → 0; at
  // T = 469, α_T ≈ 4e-8·α_1) and the estimate after step T is about the one after T − 1.
  // exponent = 1/4, i.e. the mean over steps of the estimate's standard deviation to the power 1/2:
  // regret on Fashion-MNIST (replay, ε = 1; README) was flat in it (0.15, 0.25, 0.35: 5.40, 5.40,
  // 5.41% over 3 seeds). horizon ≥ 1, exponent > 0. Beyond 1024 releases it searches a smooth
  // family of α (log α piecewise linear in log t, 65 knots and more near the end; within 1e-7 of the
  // full search at T = 2048) unless `coarse` is false.
  static SeparableStrategy optimize(std::uint64_t horizon, double exponent = 0.25, bool coarse = true);
  // The objective optimize() minimises, for tests and reports.
  double loss(double exponent) const;

  std::uint64_t horizon() const noexcept { return static_cast<std::uint64_t>(alpha_.size()); }
  const Eigen::VectorXd& alpha() const noexcept { return alpha_; }
  const Eigen::VectorXd& beta() const noexcept { return beta_; }
  // (C·1)_t = α_t Σ_{j≤t} β_j, for 1-based t.
  double row_sum(std::uint64_t t) const;
  // info_t = Σ_{s≤t} (C·1)_s²: the stationary estimate after t steps has variance σ²/info_t.
  double information(std::uint64_t t) const;
  // max_j ‖C e_j‖² (1 up to rounding).
  double sensitivity_squared() const noexcept { return sensitivity_squared_; }
  // The weights g_1 … g_t of the released prefix's noise N_t = Σ g_j z_j (z unit variance).
  Eigen::VectorXd noise_coefficients(std::uint64_t t) const;
  // Σ_j g_j²: the released prefix's variance per unit σ².
  double prefix_error(std::uint64_t t) const;

 private:
  void require_step(const char* what, std::uint64_t t) const;
  double last_coefficient(std::uint64_t t) const;  // g_t = √A_t/α_t, z_t's weight in N_t

  Eigen::VectorXd alpha_;
  Eigen::VectorXd beta_;
  Eigen::VectorXd tail_;                   // A_j = Σ_{s≥j} α_s², j = 1 … T (0-based storage)
  Eigen::VectorXd row_sums_;               // (C·1)_t, t = 1 … T (0-based storage)
  Eigen::VectorXd information_;            // info_t, t = 1 … T (0-based storage)
  Eigen::VectorXd interior_coefficients_;  // g_j once a later step exists, j = 1 … T (0-based)
  std::vector<double> interior_error_;     // Σ_{j<t} g_j², t = 0 … T (g_j for j < t)
  double sensitivity_squared_ = 0;
};

class SeparableNoise final : public ContinualNoise {
 public:
  // sigma, l2_sensitivity finite > 0; size ≥ 1.
  SeparableNoise(SeparableStrategy strategy, double sigma, double l2_sensitivity, Eigen::Index size);

  std::string name() const override { return "separable"; }
  std::string describe() const override { return "separable factorization"; }
  double draw_sigma() const override { return sigma_; }
  std::uint64_t horizon() const noexcept override { return strategy_.horizon(); }
  std::uint64_t steps() const noexcept override { return steps_; }
  Eigen::Index size() const noexcept override { return size_; }
  // N_t = N_{t−1} + √A_t·(z_t/α_t − z_{t−1}/α_{t−1}): x_t = (W_t − W_{t−1})/β_t, 1/β_t = √A_t.
  void advance(privacy::NoiseSource& source, Eigen::Ref<Eigen::VectorXd> release_noise) override;
  double release_variance(std::uint64_t t) const override;
  std::vector<NodeWeight> release_weights(std::uint64_t t) const override;
  double mu() const override;
  // Upper bound (participation.hpp), from the pairwise column products of C.
  ParticipationBound participation_bound(const Participation& participation) const override;
  // State: the position and the previous draw z_{t−1} (α is checked against this stream's).
  void save(proto::ContinualNoiseState& out) const override;
  void load(const proto::ContinualNoiseState& in) override;

  const SeparableStrategy& strategy() const noexcept { return strategy_; }
  double sigma() const noexcept { return sigma_; }

 private:
  SeparableStrategy strategy_;
  double sigma_;
  double l2_sensitivity_;
  Eigen::Index size_;
  std::uint64_t steps_ = 0;
  Eigen::VectorXd previous_draw_;  // z_{t−1}, σ included
  Eigen::VectorXd draw_;           // scratch: z_t
};

}  // namespace dpstream::stream
