// The Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006).
//
// Privacy contract
//  * Neighbouring relation: the caller's, through `l1_sensitivity` = max ‖f(D) − f(D')‖₁.
//  * Noise: i.i.d. Laplace(b), b = Δ₁/ε, per coordinate; variance 2b².
//  * Guarantee: pure ε-DP. Accounting: charges (ε, 0) and ρ = ε²/2 (charge_pure) BEFORE any noise is
//    drawn; a release past the budget throws BudgetExhausted and releases nothing.
//  * Released values are snapped to a power-of-two grid at scale b (snap.hpp).
//  * Δ₁, ε finite and > 0 and b representable (finite, > 0), else InvalidParameter naming the
//    parameter; every released value must be finite (InvalidParameter naming value[i], nothing charged).
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::privacy {

class LaplaceMechanism {
 public:
  LaplaceMechanism(double l1_sensitivity, double epsilon);

  double scale() const noexcept { return scale_; }
  double epsilon() const noexcept { return epsilon_; }
  double l1_sensitivity() const noexcept { return l1_sensitivity_; }
  double variance() const noexcept { return 2.0 * scale_ * scale_; }

  void add_noise(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise,
                 PrivacyAccountant* accountant = nullptr, const std::string& label = "laplace") const;
  double release(double value, NoiseSource& noise, PrivacyAccountant* accountant = nullptr,
                 const std::string& label = "laplace") const;

 private:
  double l1_sensitivity_;
  double epsilon_;
  double scale_;
};

}  // namespace dpstream::privacy
