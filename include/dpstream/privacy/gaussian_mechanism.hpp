// The Gaussian mechanism on a vector (or scalar) query.
//
// Privacy contract
//  * Neighbouring relation: the caller's, expressed through `l2_sensitivity` = max ‖f(D) − f(D')‖₂
//    over neighbours D, D'. The mechanism does not know the data; it trusts this bound, so the query
//    must enforce it (RowGuard clips or rejects rows to make it true).
//  * Noise: i.i.d. N(0, σ²) per coordinate, σ from privacy/calibration.hpp:
//      tight (default): the analytic Gaussian mechanism (Balle & Wang 2018), exactly (ε, δ)-DP;
//      paper: σ = Δ√(2 ln(1.25/δ))/ε, refused for ε ≥ 1.
//  * Accounting: each release charges the budget's accountant (if accounted) ρ = Δ²/(2σ²) and its (ε, δ); a
//    release past the budget throws BudgetExhausted and releases nothing.
//  * Released values are snapped to a power-of-two grid (snap.hpp).
//  * Release protocol (finite values, charge first, default label "gaussian"): additive_mechanism.hpp.
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/additive_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::privacy {

class GaussianMechanism final : public AdditiveMechanism {
 public:
  // Calibrated to a single-release target.
  GaussianMechanism(double l2_sensitivity, EpsDelta target, Calibration calibration = Calibration::tight);
  // Expert use: a given σ (e.g. a share of a composed budget). The guarantee is then ρ = Δ²/(2σ²)
  // and the analytic profile.
  static GaussianMechanism with_sigma(double l2_sensitivity, double sigma);

  double sigma() const noexcept { return sigma_; }
  double l2_sensitivity() const noexcept { return l2_sensitivity_; }
  double rho() const noexcept;
  // The single-release guarantee: the calibration target, or for with_sigma the analytic ε at `delta`.
  EpsDelta guarantee(double delta) const;

  // add_noise / release: AdditiveMechanism's. Charges ρ = Δ²/(2σ²) (and the target, if any).

 private:
  GaussianMechanism(double l2_sensitivity, double sigma, bool has_target, EpsDelta target);
  void charge(PrivacyAccountant& accountant, const std::string& label) const override;
  void perturb(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise) const override;

  double l2_sensitivity_;
  double sigma_;
  bool has_target_;
  EpsDelta target_;
};

}  // namespace dpstream::privacy
