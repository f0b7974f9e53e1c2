// Input perturbation ("randomized response"), HR12's baseline (Hardt & Roth,
// "Beating randomized response on incoherent matrices", STOC 2012, §1): release A + G with
// G_ij ~ N(0, σ²) i.i.d., then take the top-k SVD of the release. Its Frobenius error on a rank-k A
// with a strong signal is ≈ σ·√(k(m + n) − k²) (the tests check it), optimal without assumptions
// on A (HR12 §1, DN03) and the figure PFP (find_and_project.hpp) has to beat.
//
// Privacy contract
//  * Neighbouring relation: MatrixNeighbours (find_and_project.hpp): A − A' is one row of ℓ2 norm
//    ≤ Δ (row_change: Δ = L; add_remove_row: rows ‖a_i‖ ≤ L checked, Δ = L; replace_row: Δ = 2L).
//  * Sensitivity: ‖A − A'‖_F ≤ Δ, the whole matrix being one vector query.
//  * Noise and calibration: tight (default) σ = analytic_gaussian_sigma(Δ, target) (Balle & Wang);
//    paper σ = Δ·√(2 ln(1.25/δ))/ε, the classical constant (HR12 gives only
//    O(ε⁻¹√log(1/δ))). The classical proof needs ε < 1; at ε ≥ 1 the constructor checks the exact
//    profile instead (analytic_gaussian_delta ≤ δ, true e.g. at (1, 1e-6): 3.2e-9) and refuses the
//    configuration otherwise. Either way the release is a proven (ε, δ) Gaussian mechanism.
//  * Accounting: one Gaussian charge (Δ, σ, target), so zCDP composition applies. The SVD and the
//    PrivateSubspace are post-processing. Released entries are snapped (snap.hpp).
// Cost: m·n Gaussians and the Gram matrix of the shorter side, O(mn·min(m, n)).
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/pca/find_and_project.hpp"
#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::pca {

struct InputPerturbationOptions {
  Eigen::Index k = 1;  // rank of the approximation, 1 ≤ k ≤ min(m, n)
  privacy::PrivacySpec privacy;  // target (δ > 0), calibration, L (see spec_row_change)
  MatrixNeighbours relation = MatrixNeighbours::add_remove_row;
};

struct InputPerturbationResult {
  LowRankFactors approximation;  // the top-k SVD of A + G
  PrivateSubspace subspace;      // n × k right singular vectors, values s_i² (not debiased); "rr"
};

class InputPerturbation {
 public:
  // InvalidParameter naming the bad field (k, delta, row_norm_bound, or a paper calibration the exact
  // profile does not support).
  explicit InputPerturbation(const InputPerturbationOptions& options);

  // The release A + G (m × n). Checks the rows of a, charges `budget`, then draws G
  // (column-major) from `noise`.
  Eigen::MatrixXd perturb(const Eigen::Ref<const Eigen::MatrixXd>& a, privacy::NoiseSource& noise,
                          const privacy::Budget& budget,
                          const std::string& label = "input perturbation") const;
  // perturb, then top_k_svd (k ≤ min(m, n), checked before anything is charged).
  InputPerturbationResult release(const Eigen::Ref<const Eigen::MatrixXd>& a, privacy::NoiseSource& noise,
                                  const privacy::Budget& budget,
                                  const std::string& label = "input perturbation") const;

  double sigma() const noexcept { return sigma_; }
  double sensitivity() const noexcept { return sensitivity_; }
  const InputPerturbationOptions& options() const noexcept { return options_; }

 private:
  InputPerturbationOptions options_;
  double sensitivity_;
  double sigma_;
};

}  // namespace dpstream::pca
