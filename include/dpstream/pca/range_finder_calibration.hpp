// The private range finder's noise calibration (Hardt & Roth 2012, Fig 2; pca/find_and_project.hpp,
// "Privacy contract", says why): the mixture bound E_{X~χ_K}[δ_G(ε; ΔX/σ)] on the release's δ, the
// smallest σ it certifies at a target (tight), the paper's ρ (paper), and the union bound behind both
// the paper's Lemma 4.1 and the corrected two-part calibration.
#pragma once

#include <Eigen/Core>

#include "dpstream/privacy/params.hpp"

namespace dpstream::pca {

struct RangeFinderCalibration {
  double sigma = 0;                    // ρ, per entry of AΩ (Δ included)
  double paper_bound = 0;              // c = Δ√(2K ln(4K/δ)): Lemma 4.1's bound on ‖eᵀΩ‖ (union bound)
  double paper_conditional_delta = 0;  // analytic_gaussian_delta(c, ρ, ε): the Gaussian step's exact δ
                                       // given ‖eᵀΩ‖ ≤ c (the paper claims δ/2)
  double certified_delta = 0;          // the mixture bound at ε for this ρ: what is proven
};

// columns K ≥ 1, row_change Δ > 0, target δ in (0, 1).
RangeFinderCalibration range_finder_calibration(Eigen::Index columns, double row_change,
                                                const privacy::EpsDelta& target,
                                                privacy::Calibration calibration);
// The mixture bound: an upper bound on E_{X~χ_K}[δ_G(ε; ΔX/σ)] (a Riemann sum over 2000 cells of the
// χ_K law up to its 1 − 1e-30 quantile, each at its right end; the mass beyond counts as δ_G = 1).
// Over-estimates the integral by a few per cent at most. ε ≥ 0, σ > 0.
double range_finder_certified_delta(Eigen::Index columns, double row_change, double sigma, double epsilon);
// The corrected two-part calibration Δ√(2K ln(4K/δ))·√(2 ln(2.5/δ))/ε (classical Gaussian
// at δ/2 given the union bound): for reference; valid for ε < 1, ≥ 2.7× the tight ρ.
double range_finder_sigma_two_part(Eigen::Index columns, double row_change, const privacy::EpsDelta& target);

}  // namespace dpstream::pca
