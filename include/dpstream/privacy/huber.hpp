// The Huber distribution and mechanism (Gowtham, Gokularam, Tholeti & Kalyani, "Introducing the Huber
// mechanism for differentially private low-rank matrix completion", arXiv 2022, §2.2 and Table 1).
//
// Density (paper Eq. 2) p(t; α) = κ_α exp(−ρ_α(t)), ρ_α the Huber loss (Eq. 3): t²/2 for |t| ≤ α,
// α(|t| − α/2) beyond; κ_α = ((2/α) e^{−α²/2} + √(2π)(2Φ(α) − 1))^{−1}. A unit-variance normal core
// on [−α, α] with exponential tails of rate α. Var(α) > 1 always, decreasing in α (→ 1 as α → ∞,
// ≈ 2/α² as α → 0, where the law tends to Laplace(1/α)).
//
// Privacy contract (HuberMechanism)
//  * Neighbouring relation: the caller's, through `l1_sensitivity` Δ₁ = max ‖f(D) − f(D')‖₁.
//  * Noise: t = s·h, h ~ Huber(α) i.i.d. per coordinate; s = 1 is the paper's mechanism (Def. 2.4),
//    s > 0 a scale extension (ρ_α is α-Lipschitz, so the log density ratio of s·h is ≤ αΔ₁/s).
//  * Guarantee: pure ε-DP with ε = α·Δ₁/s (paper Thm 2.1; the bound is attained, so it is tight).
//    Accounting: charge_pure(label, ε), i.e. (ε, 0) and ρ = ε²/2, BEFORE any noise is drawn; a
//    release past the budget throws BudgetExhausted and releases nothing.
//  * The paper's ε is for ONE draw (Table 1); it never composes. Charge every release.
//  * Released values are snapped to a power-of-two grid at the noise's standard deviation s·√Var(α)
//    (snap.hpp; Mironov 2012); the exponential tail is drawn with exponential_fine, whose support has
//    no gap as wide as the grid (exponential(), −log of a 53-bit uniform, has them beyond E ≈ 16).
//  * Release protocol (finite values, charge first, default label "huber"): additive_mechanism.hpp.
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/additive_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::privacy {

class HuberDistribution {
 public:
  explicit HuberDistribution(double alpha);  // α finite and > 0, else InvalidParameter naming alpha

  double alpha() const noexcept { return alpha_; }
  double kappa() const noexcept { return kappa_; }     // normalising constant κ_α
  double loss(double t) const noexcept;                // ρ_α(t)
  double density(double t) const noexcept;             // κ_α exp(−ρ_α(t))
  double cdf(double t) const noexcept;                 // exact: Φ differences in the core, exponential tails
  double variance() const noexcept;                    // closed form (our derivation; the paper gives none)
  double tail_mass() const noexcept;                   // P(|t| > α) = κ_α (2/α) e^{−α²/2}
  // Exact sampler: core N(0,1) truncated to [−α, α] w.p. κ_α√(2π)(2Φ(α)−1), else ±(α + Exp(rate α)).
  // The core is drawn by rejection from NoiseSource::gaussian() when its acceptance 2Φ(α)−1 ≥ 0.3,
  // else by inversion (small α, where rejection would waste draws).
  double sample(NoiseSource& noise) const;

  // The α whose variance is v (bisection on [1e-3, 50]). v must be > 1 (unit-core Huber noise cannot
  // have variance ≤ 1) and ≤ Var(1e-3) ≈ 2·10⁶; otherwise InvalidParameter naming variance.
  static double alpha_for_variance(double variance);

 private:
  double alpha_;
  double kappa_;
  double core_probability_;  // κ_α √(2π)(2Φ(α) − 1)
};

class HuberMechanism final : public AdditiveMechanism {
 public:
  // Δ₁, α, s finite and > 0, and ε = αΔ₁/s and the noise deviation s·√Var(α) representable;
  // otherwise InvalidParameter naming the parameter.
  HuberMechanism(double l1_sensitivity, double alpha, double scale = 1.0);
  // Calibrated: the α giving ε at scale s: α = ε s / Δ₁.
  static HuberMechanism for_epsilon(double l1_sensitivity, double epsilon, double scale = 1.0);

  double epsilon() const noexcept;  // α Δ₁ / s
  double variance() const noexcept; // s² Var(α)
  const HuberDistribution& distribution() const noexcept { return distribution_; }
  double scale() const noexcept { return scale_; }
  double l1_sensitivity() const noexcept { return l1_sensitivity_; }

  // add_noise / release: AdditiveMechanism's. Charges ε = αΔ₁/s for the whole vector.

 private:
  void charge(PrivacyAccountant& accountant, const std::string& label) const override;
  void perturb(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise) const override;

  double l1_sensitivity_;
  HuberDistribution distribution_;
  double scale_;
};

}  // namespace dpstream::privacy
