// The Laplace mechanism: b = Δ₁/ε, i.i.d. Laplace(b) per coordinate (Dwork et al. 2006; seed 004 §2.1).
#include "dpstream/privacy/laplace_mechanism.hpp"

#include <cmath>
#include <string>

#include "dpstream/errors.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/snap.hpp"

namespace dpstream::privacy {

LaplaceMechanism::LaplaceMechanism(double l1_sensitivity, double epsilon)
    : l1_sensitivity_(l1_sensitivity), epsilon_(epsilon), scale_(0.0) {
  require_positive("l1_sensitivity", l1_sensitivity);
  require_positive("epsilon", epsilon);
  scale_ = l1_sensitivity / epsilon;
  // Δ₁/ε can overflow (huge Δ₁, tiny ε) or underflow to 0: refuse rather than add no/inf noise.
  if (!(std::isfinite(scale_) && scale_ > 0.0)) {
    throw InvalidParameter("laplace mechanism: scale b = l1_sensitivity/epsilon must be finite and > 0, got " +
                           format_value(scale_));
  }
}

void LaplaceMechanism::add_noise(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise,
                                 PrivacyAccountant* accountant, const std::string& label) const {
  for (Eigen::Index i = 0; i < value.size(); ++i) {
    if (!std::isfinite(value[i]))
      throw InvalidParameter("laplace mechanism: value[" + std::to_string(i) + "] must be finite, got " +
                             format_value(value[i]));
  }
  // Pure ε-DP for the whole vector (the ℓ1 sensitivity covers all coordinates). Charged before any
  // draw, so BudgetExhausted releases nothing.
  if (accountant != nullptr) accountant->charge_pure(label, epsilon_);
  const double grid = snap_granularity(scale_);
  for (Eigen::Index i = 0; i < value.size(); ++i)
    value[i] = snap_to_grid(value[i] + noise.laplace(scale_), grid);
}

double LaplaceMechanism::release(double value, NoiseSource& noise, PrivacyAccountant* accountant,
                                 const std::string& label) const {
  Eigen::VectorXd one(1);
  one[0] = value;
  add_noise(one, noise, accountant, label);
  return one[0];
}

}  // namespace dpstream::privacy
