// The Laplace mechanism: b = Δ₁/ε, i.i.d. Laplace(b) per coordinate (Dwork et al. 2006; as in
// Gowtham, Gokularam, Tholeti & Kalyani, "Introducing the Huber mechanism ...", arXiv 2022, §2.1).
#include "dpstream/privacy/laplace_mechanism.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/snap.hpp"

namespace dpstream::privacy {

using base::format_value;
using base::require_positive;

LaplaceMechanism::LaplaceMechanism(double l1_sensitivity, double epsilon)
    : AdditiveMechanism("laplace mechanism", "laplace"),
      l1_sensitivity_(l1_sensitivity),
      epsilon_(epsilon),
      scale_(0.0) {
  require_positive("l1_sensitivity", l1_sensitivity);
  require_positive("epsilon", epsilon);
  scale_ = l1_sensitivity / epsilon;
  // Δ₁/ε can overflow (huge Δ₁, tiny ε) or underflow to 0: refuse rather than add no/inf noise.
  if (!(std::isfinite(scale_) && scale_ > 0.0)) {
    throw InvalidParameter("laplace mechanism: scale b = l1_sensitivity/epsilon must be finite and > 0, got " +
                           format_value(scale_));
  }
}

void LaplaceMechanism::check_release(Eigen::Index coordinates) const { grid_noise_scale(coordinates); }

// Pure ε-DP for the whole vector (the ℓ1 sensitivity covers all coordinates).
void LaplaceMechanism::charge(PrivacyAccountant& accountant, const std::string& label) const {
  accountant.charge_pure(label, epsilon_);
}

void LaplaceMechanism::perturb(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise) const {
  const std::uint64_t t = grid_noise_scale(value.size());  // checked by check_release
  // Floating-point safe release (Mironov 2012): the value is snapped to the grid Λ first and the
  // noise is Λ·Y, Y exact discrete Laplace. Each release is then a function of the integer
  // snap(x)/Λ + Y alone (the final rounding of the sum, if any, is a fixed function of it), so its
  // bits carry nothing of x below the grid. Privacy: snapping moves each coordinate by ≤ Λ/2, so
  // neighbours' snapped vectors differ by ≤ Δ₁ + nΛ in ℓ1, i.e. ≤ (Δ₁ + nΛ)/Λ grid steps, and
  // P(y)/P'(y) ≤ exp((Δ₁ + nΛ)/(tΛ)) ≤ e^ε for t = ⌈b/Λ + n/ε⌉ + 1 (the + 1 absorbs the rounding
  // of b = Δ₁/ε). The noise scale tΛ exceeds b by a factor ≤ 1 + 2^-29·(2 + n/ε) (Λ ≤ b·2^-29).
  const double grid = snap_granularity(scale_);
  for (Eigen::Index i = 0; i < value.size(); ++i)
    value[i] = snap_to_grid(value[i], grid) + grid * static_cast<double>(noise.discrete_laplace(t));
}

std::uint64_t LaplaceMechanism::grid_noise_scale(Eigen::Index coordinates) const {
  const double t = std::ceil(scale_ / snap_granularity(scale_) + static_cast<double>(coordinates) / epsilon_) + 1.0;
  if (!(t <= 0x1.0p62))
    throw InvalidParameter("laplace mechanism: " + std::to_string(coordinates) + " coordinates at epsilon " +
                           format_value(epsilon_) + " need a noise scale of " + format_value(t) +
                           " grid steps, over the sampler's 2^62");
  return static_cast<std::uint64_t>(t);
}

}  // namespace dpstream::privacy
