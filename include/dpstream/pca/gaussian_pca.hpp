// GaussianPca: offline private PCA by Analyze Gauss, Algorithm 1 (Dwork, Talwar, Thakurta & Zhang
// 2014): release Ĉ = AᵀA + E once, then take its algebraic top k (§3, Theorems 3–7).
//
// Privacy contract — that of privacy::SymmetricGaussianMechanism (symmetric_gaussian.hpp):
//  * Neighbouring relation: add/remove one row, or replace one row; every row ‖a‖₂ ≤ L, checked here
//    (InvalidRow naming the row; nothing is clipped: pass rows through RowGuard first).
//  * Sensitivity of the upper triangle of AᵀA: L² (add/remove) or √2·L² (replace).
//  * Noise: E symmetric Gaussian, paper_symmetric or goe shape; σ = gaussian_sigma(Δ, target,
//    calibration) (tight: analytic Gaussian, the default).
//  * Unit level (GaussianPcaOptions::max_rows_per_unit = k ≥ 1): neighbouring datasets differ in
//    all rows of one unit (a user), at most k of them — added/removed or replaced together. Her rows
//    change AᵀA by Σ_j a_j a_jᵀ, of Frobenius norm ≤ Σ_j ‖a_j‖² ≤ k·L² (triangle inequality; √2·k·L²
//    replacing), so the mechanism is calibrated for that sensitivity (as a mechanism of row bound
//    √k·L: its Δ = (√k·L)²); rows are still checked against L. Bounding each unit to k rows is the
//    caller's (stream/contribution_bound.hpp), before the rows reach release().
//    The alternative, clipping each unit's summed contribution S_u = Σ_j a_j a_jᵀ to ‖S_u‖_F ≤ C, has
//    sensitivity C whatever her row count, with no row dropped; k·L² is the same bound when C = k·L².
//    Clipping S_u is tighter when units send more than k rows in few directions each: ‖S_u‖_F ≤ m·L²
//    for m aligned rows but ≤ √m·L² for m orthogonal ones, so C = k·L² then keeps about k² of her rows
//    unscaled. Bounding rows is tighter to run: it decides row by row in O(1) state a unit, where
//    clipping S_u needs all of her rows (a d × d sum a unit, or the data grouped by unit) before any
//    release, and rescales her whole contribution, which biases Ĉ towards units with few rows.
//    This class implements row bounding (k·L²).
//  * Guarantee and accounting: (ε, δ) of the target for the release Ĉ; one Gaussian charge. The top-k
//    vectors and values are post-processing of Ĉ and cost nothing more.
//
// Utility (deterministic cores, true on every draw; the tests check them): with V_k, V̂_k the top k of
// C and Ĉ, 0 ≤ tr(V_kᵀCV_k) − tr(V̂_kᵀCV̂_k) ≤ S_k(E) ≤ 2k‖E‖₂ (Thm 3), and with gap
// g = λ_k − λ_{k+1} > ‖E‖₂: ‖Π − Π̂‖₂ ≤ ‖E‖₂/(g − ‖E‖₂) (Thms 4–6), ‖C − Ĉ_k‖₂ ≤ ‖C − C_k‖₂ + 2‖E‖₂ (Thm 7).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <Eigen/Core>

#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace dpstream::pca {

struct GaussianPcaOptions {
  Eigen::Index k = 1;  // 1 ≤ k ≤ d
  // mechanism.privacy: target, calibration, relation, L, and the noise's seed (set: reproducible,
  // NOT secure; unset: the secure source).
  privacy::SymmetricGaussianMechanism::Options mechanism;
  // 0: row level; k ≥ 1: unit level, at most k rows of one unit (the header's contract).
  std::uint32_t max_rows_per_unit = 0;
};

struct GaussianPcaRelease {
  Eigen::MatrixXd noisy_covariance;  // Ĉ = AᵀA + E, the private release (d × d, symmetric)
  PrivateSubspace subspace;          // its algebraic top k (values: eigenvalues of Ĉ), method "gauss"
};

class GaussianPca {
 public:
  // InvalidParameter naming the bad option (d < 1, k out of [1, d], bad mechanism options).
  GaussianPca(Eigen::Index dimension, const GaussianPcaOptions& options);

  // From the rows of A (m × d, one record a row): checks every row against L, then one release.
  // Charges `budget` before the noise is drawn; BudgetExhausted leaves nothing released.
  GaussianPcaRelease release(const Eigen::Ref<const Eigen::MatrixXd>& rows,
                             const privacy::Budget& budget);
  // From an exact Σ aaᵀ accumulated elsewhere; the caller vouches that every row it holds had
  // ‖a‖ ≤ L (e.g. it came through RowGuard), since the accumulator no longer has the rows.
  GaussianPcaRelease release(const stream::CovarianceAccumulator& exact,
                             const privacy::Budget& budget);

  double sigma() const noexcept { return mechanism_.sigma(); }
  const privacy::SymmetricGaussianMechanism& mechanism() const noexcept { return mechanism_; }
  Eigen::Index dimension() const noexcept { return dimension_; }
  Eigen::Index k() const noexcept { return k_; }

 private:
  GaussianPcaRelease release_covariance(const Eigen::Ref<const Eigen::MatrixXd>& covariance,
                                        const privacy::Budget& budget);

  Eigen::Index dimension_;
  Eigen::Index k_;
  double row_norm_bound_;  // L, which every row is checked against
  std::string label_;      // the accountant's label: the method and its neighbouring relation
  privacy::SymmetricGaussianMechanism mechanism_;
  std::unique_ptr<privacy::NoiseSource> noise_;
};

}  // namespace dpstream::pca
