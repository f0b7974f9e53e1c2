#include "dpstream/privacy/gaussian_mechanism.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/snap.hpp"

namespace dpstream::privacy {

using base::require_positive;

GaussianMechanism::GaussianMechanism(double l2_sensitivity, EpsDelta target, Calibration calibration)
    : GaussianMechanism(l2_sensitivity, gaussian_sigma(l2_sensitivity, target, calibration), true,
                        target) {}

GaussianMechanism::GaussianMechanism(double l2_sensitivity, double sigma, bool has_target, EpsDelta target)
    : AdditiveMechanism("gaussian mechanism", "gaussian"),
      l2_sensitivity_(l2_sensitivity),
      sigma_(sigma),
      has_target_(has_target),
      target_(target) {
  require_positive("l2_sensitivity", l2_sensitivity);
  require_positive("sigma", sigma);
}

GaussianMechanism GaussianMechanism::with_sigma(double l2_sensitivity, double sigma) {
  // target_ is unused when has_target is false; any valid value will do.
  return GaussianMechanism(l2_sensitivity, sigma, false, EpsDelta(1.0, 0.0));
}

double GaussianMechanism::rho() const noexcept { return gaussian_rho(l2_sensitivity_, sigma_); }

EpsDelta GaussianMechanism::guarantee(double delta) const {
  if (has_target_) return target_;
  // Smallest ε with analytic δ(ε) ≤ delta: δ(ε) is decreasing in ε, so bisect on ε.
  const EpsDelta checked(1.0, delta);  // validates delta
  if (!(checked.delta() > 0)) throw InvalidParameter("delta must be > 0 for a Gaussian guarantee, got 0");
  double lo = 0.0, hi = 1.0;
  while (analytic_gaussian_delta(l2_sensitivity_, sigma_, hi) > delta) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (analytic_gaussian_delta(l2_sensitivity_, sigma_, mid) > delta ? lo : hi) = mid;
  }
  return EpsDelta(hi, delta);
}

void GaussianMechanism::charge(PrivacyAccountant& accountant, const std::string& label) const {
  if (has_target_) {
    accountant.charge_gaussian(label, l2_sensitivity_, sigma_, target_);
  } else {
    accountant.charge_gaussian(label, l2_sensitivity_, sigma_);
  }
}

void GaussianMechanism::perturb(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise) const {
  const double grid = snap_granularity(sigma_);
  for (Eigen::Index i = 0; i < value.size(); ++i)
    value[i] = snap_to_grid(value[i] + sigma_ * noise.gaussian(), grid);
}

}  // namespace dpstream::privacy
