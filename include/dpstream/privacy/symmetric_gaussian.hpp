// The symmetric-matrix Gaussian mechanism of Analyze Gauss, Algorithm 1: Ĉ = AᵀA + E.
//
// Privacy contract
//  * Neighbouring relation: add/remove one row (add_remove_row; zero_out_row is the same here: the
//    release depends on AᵀA only, to which a zero row adds nothing), or replace one row; every row
//    has ‖a‖₂ ≤ L (RowGuard enforces it).
//  * Sensitivity of the upper triangle u(AᵀA) = ((AᵀA)_ij)_{i≤j}:
//      add/remove: ‖u(aaᵀ)‖₂ = √((‖a‖₂⁴ + ‖a‖₄⁴)/2) ≤ ‖a‖₂² ≤ L², tight for a = L·e_j;
//      replace:    ‖u(aaᵀ − bbᵀ)‖₂ ≤ √2·L², attained for orthogonal a, b of norm L (e.g. e₁ → e₂).
//    The release is a bijection of u, so this is the sensitivity of the whole release.
//  * Noise shapes:
//      paper_symmetric (Algorithm 1): the n(n+1)/2 upper entries, diagonal included, i.i.d.
//        N(0, σ²), mirrored. Exactly the Gaussian mechanism on u.
//      goe: diagonal N(0, σ²), off-diagonal N(0, σ²/2), mirrored. Proof: view AᵀA as the n²-vector;
//        its Frobenius sensitivity is ‖aaᵀ‖_F = ‖a‖₂² ≤ L² (add/remove), ‖aaᵀ − bbᵀ‖_F ≤ √2 L²
//        (replace) — the same Δ as above. Adding i.i.d. N(0, σ²) to all n² entries is the Gaussian
//        mechanism with that Δ; symmetrising (M + Mᵀ)/2 is post-processing and gives exactly this
//        shape (off-diagonal (g + g')/2 has variance σ²/2). Since AᵀA is symmetric, the symmetrised
//        result is AᵀA + E_goe. So goe is private with the same σ, and ‖E‖₂ ≈ √2·σ√n instead of 2σ√n.
//  * Calibration: σ = gaussian_sigma(Δ, target, calibration); accounting: one Gaussian charge.
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/privacy_spec.hpp"

namespace dpstream::privacy {

enum class SymmetricNoiseShape { paper_symmetric, goe };
// "paper" | "goe": the tools' spelling (checkpoints record paper_symmetric under its enum name).
const char* to_string(SymmetricNoiseShape shape) noexcept;
// The inverse, also taking "paper_symmetric"; any other text: InvalidParameter naming it.
SymmetricNoiseShape parse_symmetric_noise_shape(const std::string& text);

// Δ of u(AᵀA) under `relation` for rows of norm ≤ row_norm_bound: L² or √2·L².
double covariance_sensitivity(Neighbours relation, double row_norm_bound);

class SymmetricGaussianMechanism {
 public:
  struct Options {
    // Target, calibration, relation and L set σ. privacy.noise is read by the estimator that owns the
    // source (GaussianPca, FplOnlinePca); release() draws from the source it is given.
    PrivacySpec privacy;
    SymmetricNoiseShape shape = SymmetricNoiseShape::paper_symmetric;
  };
  explicit SymmetricGaussianMechanism(const Options& options);

  double sigma() const noexcept { return sigma_; }
  double sensitivity() const noexcept { return sensitivity_; }
  const Options& options() const noexcept { return options_; }
  // Variance of E_ij: σ² on the diagonal; σ² (paper_symmetric) or σ²/2 (goe) off it.
  double entry_variance(Eigen::Index i, Eigen::Index j) const noexcept;

  // A fresh symmetric noise matrix E (n × n), bitwise symmetric. Does not charge.
  Eigen::MatrixXd sample_noise(Eigen::Index n, NoiseSource& noise) const;
  // Ĉ = C + E with C symmetric (checked: square, finite). Charges `budget` first.
  Eigen::MatrixXd release(const Eigen::Ref<const Eigen::MatrixXd>& covariance, NoiseSource& noise,
                          const Budget& budget,
                          const std::string& label = "covariance") const;

 private:
  Options options_;
  double sensitivity_;
  double sigma_;
};

}  // namespace dpstream::privacy
