// Matrix-factorization noise for continual release beyond the binary tree: the square-root Toeplitz
// factorization (Fichtenberger, Henzinger & Upadhyay 2023) and buffered linear Toeplitz (BLT)
// strategies (Dvijotham et al. 2024; McMahan, Xu & Zhang 2024). Same interface as the trees
// (continual_noise.hpp); the figures, computed from exact variance formulas, are pinned in
// tests/test_factorization_noise.cpp.
//
// Privacy contract (for a sum whose one-row l2 sensitivity is Δ, e.g. L² for AᵀA with ‖a‖ ≤ L)
//  * Neighbouring relation: streams that differ in one row (zeroed in its slot, or replaced — Δ says
//    which; a removal that shifts later rows is not covered), single participation: a row enters one step and stays in every later prefix.
//    A unit in up to k steps ≥ b apart: participation.hpp (exact here: participation_bound).
//  * Mechanism: for a lower-triangular Toeplitz strategy C over the horizon T, the releases are
//    A·x + B·z = B·(C·x + z) with A the prefix-sum matrix, B = A·C⁻¹ and z_t ~ N(0, σ²) i.i.d. per
//    step and coordinate, each drawn once. C·x is one query whose l2 sensitivity is Δ times C's
//    largest column norm, ‖C e_1‖ = √(Σ_{k<T} c_k²) (single participation; every later column is a
//    truncation of the first), and every release is post-processing of C·x + z.
//  * Guarantee: μ = Δ·√(Σ_{k<T} c_k²)/σ Gaussian DP for the whole stream of T releases; σ is the
//    Gaussian mechanism's for that sensitivity and the target (tight: analytic Gaussian; paper: the
//    classical formula, ε < 1). Valid for adaptively chosen rows (C is causal; Denisov et al. 2022,
//    Thm 2.1). One accountant charge covers the stream.
//  * Error: Var(N_t) = σ²·Σ_{m<t} b_m² per coordinate, b the coefficients of B.
//
// Square-root Toeplitz: C = B = Toeplitz(f), f_k = ∏_{j≤k}(2j−1)/(2j) ≈ 1/√(πk) (the coefficients of
//   1/√(1 − x)), optimal among Toeplitz strategies for max error. N_t = Σ_{i≤t} f_{t−i} z_i needs
//   every past draw: memory O(T·size) and O(t·size) work at step t. The exact reference, for small
//   sizes (a 784 × 784 covariance over 469 releases holds 1.2 GB of draws).
// BLT: C a BufferedToeplitz (blt.hpp). The correlated increments w = C⁻¹z stream through C⁻¹'s
//   buffers (w_t = z_t + Σ_j ω̂_j buf_j, buf_j ← θ̂_j buf_j + z_t) and N_t = N_{t−1} + w_t:
//   memory (buffers + 1)·size, O(buffers·size) work a step, and no past draw is kept.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dpstream/privacy/params.hpp"
#include "dpstream/stream/blt.hpp"
#include "dpstream/stream/continual_noise.hpp"

namespace dpstream::stream {

// f_0 … f_{n−1} of 1/√(1 − x).
Eigen::VectorXd sqrt_toeplitz_coefficients(std::uint64_t n);

class SqrtToeplitzNoise final : public ContinualNoise {
 public:
  // horizon ≥ 1; sigma finite > 0; l2_sensitivity finite > 0 (for mu()); size ≥ 1.
  SqrtToeplitzNoise(std::uint64_t horizon, double sigma, double l2_sensitivity, Eigen::Index size);

  std::string name() const override { return "sqrt_toeplitz"; }
  std::string describe() const override { return "square-root Toeplitz factorization"; }
  double draw_sigma() const override { return sigma_; }
  std::uint64_t horizon() const noexcept override { return horizon_; }
  std::uint64_t steps() const noexcept override { return steps_; }
  Eigen::Index size() const noexcept override { return size_; }
  void advance(privacy::NoiseSource& source, Eigen::Ref<Eigen::VectorXd> release_noise) override;
  double release_variance(std::uint64_t t) const override;
  std::vector<NodeWeight> release_weights(std::uint64_t t) const override;
  double mu() const override;
  // Exact (participation.hpp): the f_k are positive and decreasing.
  ParticipationBound participation_bound(const Participation& participation) const override;
  void save(proto::ContinualNoiseState& out) const override;
  void load(const proto::ContinualNoiseState& in) override;

  double sigma() const noexcept { return sigma_; }
  // Σ_{k<T} f_k²: the squared l2 sensitivity of C·x per unit Δ.
  double sensitivity_squared() const noexcept { return prefix_squares_.back(); }

 private:
  std::uint64_t horizon_;
  double sigma_;
  double l2_sensitivity_;
  Eigen::Index size_;
  std::uint64_t steps_ = 0;
  Eigen::VectorXd f_;                   // f_0 … f_{T−1}
  std::vector<double> prefix_squares_;  // S_t = Σ_{k<t} f_k², t = 0 … T
  Eigen::MatrixXd draws_;               // size × T: z_1 … z_steps in the first columns
};

class BltNoise final : public ContinualNoise {
 public:
  // blt: the strategy C (checked with check_strategy over the horizon); horizon ≥ 1; sigma, Δ finite
  // > 0; size ≥ 1.
  BltNoise(const BufferedToeplitz& blt, std::uint64_t horizon, double sigma, double l2_sensitivity,
           Eigen::Index size);

  std::string name() const override { return "blt"; }
  std::string describe() const override;  // "BLT (N buffers)"
  double draw_sigma() const override { return sigma_; }
  std::uint64_t horizon() const noexcept override { return horizon_; }
  std::uint64_t steps() const noexcept override { return steps_; }
  Eigen::Index size() const noexcept override { return size_; }
  void advance(privacy::NoiseSource& source, Eigen::Ref<Eigen::VectorXd> release_noise) override;
  double release_variance(std::uint64_t t) const override;
  std::vector<NodeWeight> release_weights(std::uint64_t t) const override;
  double mu() const override;
  // Exact (participation.hpp): check_strategy made the coefficients non-negative and non-increasing.
  ParticipationBound participation_bound(const Participation& participation) const override;
  void save(proto::ContinualNoiseState& out) const override;
  void load(const proto::ContinualNoiseState& in) override;

  const BufferedToeplitz& blt() const noexcept { return blt_; }
  double sigma() const noexcept { return sigma_; }

 private:
  BufferedToeplitz blt_;
  std::uint64_t horizon_;
  double sigma_;
  double l2_sensitivity_;
  Eigen::Index size_;
  std::uint64_t steps_ = 0;
  Eigen::MatrixXd buffers_;  // size × buffers: C⁻¹'s state (weighted sums of past draws only)
  Eigen::VectorXd draw_;     // scratch: z_t
};

enum class FactorizationKind { sqrt_toeplitz, blt, separable };  // separable: separable_noise.hpp

struct FactorizationNoiseOptions {
  FactorizationKind kind = FactorizationKind::blt;
  std::uint64_t horizon = 0;  // ≥ 1: factorizations are built for a fixed horizon
  // Calibrated to a sensitivity, not a PrivacySpec (as TreeNoiseOptions): ContinualSum derives it.
  double l2_sensitivity = 1.0;
  privacy::EpsDelta target{1.0, 1e-6};
  privacy::Calibration calibration = privacy::Calibration::tight;
  // BLT only: the strategy; unset = optimize_blt for the horizon and `error` (default buffers).
  std::optional<BufferedToeplitz> blt;
  BltError error = BltError::max;
  // The privacy unit's participation (participation.hpp); the default is one row, one step. An
  // optimised BLT is optimised for it.
  Participation participation;
};

// Calibrates σ = gaussian_sigma(Δ·(C's largest column norm)·participation_bound().factor, target,
// calibration) and builds the strategy (separable: SeparableStrategy::optimize for the horizon).
// Then unit_mu(participation) is the target's μ and mu() the one-row value.
std::unique_ptr<ContinualNoise> make_factorization_noise(const FactorizationNoiseOptions& options, Eigen::Index size);

}  // namespace dpstream::stream
