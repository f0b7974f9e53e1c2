// The Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006).
//
// Privacy contract
//  * Neighbouring relation: the caller's, through `l1_sensitivity` = max ‖f(D) − f(D')‖₁.
//  * Noise: i.i.d. Laplace(b), b = Δ₁/ε, per coordinate; variance 2b².
//  * Guarantee: pure ε-DP. Accounting: charges (ε, 0) and ρ = ε²/2 (charge_pure) BEFORE any noise is
//    drawn; a release past the budget throws BudgetExhausted and releases nothing.
//  * Floating-point safety (Mironov 2012): the value is snapped to the power-of-two grid Λ ≈ b·2^-30
//    (snap.hpp) and the noise is Λ·Y with Y exact discrete Laplace of scale t grid steps (CKS 2020),
//    t = ⌈b/Λ + n/ε⌉ + 1 for an n-vector: the + n/ε pays for the snapping (≤ Λ/2 a coordinate), so
//    the guarantee is exactly ε; the noise scale tΛ is b·(1 + at most 2^-29·(2 + n/ε)).
//  * Δ₁, ε finite and > 0 and b representable (finite, > 0), else InvalidParameter naming the
//    parameter; every released value must be finite (InvalidParameter naming value[i], nothing charged).
//  * Release protocol (finite values, size check and charge first, default label "laplace"):
//    additive_mechanism.hpp.
#pragma once

#include <cstdint>
#include <string>

#include <Eigen/Core>

#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/additive_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::privacy {

class LaplaceMechanism final : public AdditiveMechanism {
 public:
  LaplaceMechanism(double l1_sensitivity, double epsilon);

  double scale() const noexcept { return scale_; }
  double epsilon() const noexcept { return epsilon_; }
  double l1_sensitivity() const noexcept { return l1_sensitivity_; }
  // 2b², the continuous law's; the discrete noise's is within a relative 2^-28·(2 + n/ε) of it.
  double variance() const noexcept { return 2.0 * scale_ * scale_; }
  // t of the noise added to an n-vector: Λ·Y, P(Y = y) ∝ exp(−|y|/t). InvalidParameter past 2^62.
  std::uint64_t grid_noise_scale(Eigen::Index coordinates) const;

  // add_noise / release: AdditiveMechanism's. Charges (ε, 0) for the whole vector.

 private:
  void check_release(Eigen::Index coordinates) const override;  // grid_noise_scale's refusal
  void charge(PrivacyAccountant& accountant, const std::string& label) const override;
  void perturb(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise) const override;

  double l1_sensitivity_;
  double epsilon_;
  double scale_;
};

}  // namespace dpstream::privacy
