// The Huber distribution (Gowtham, Gokularam, Tholeti & Kalyani, "Introducing the Huber mechanism for
// differentially private low-rank matrix completion", arXiv 2022, Eqs. 2–3) and the Huber mechanism
// (Def. 2.4, Thm 2.1).
#include "dpstream/privacy/huber.hpp"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/snap.hpp"

namespace dpstream::privacy {

using base::format_value;
using base::require_positive;

namespace {

constexpr double kSqrt2 = std::numbers::sqrt2;
constexpr double kSqrt2Pi = 2.5066282746310002;  // √(2π)

// The bisection range of alpha_for_variance.
constexpr double kAlphaMin = 1e-3;
constexpr double kAlphaMax = 50.0;

// Below this core acceptance 2Φ(α)−1 (i.e. α ≲ 0.385) rejection from N(0,1) needs > 3.3 Gaussian
// draws per core sample on average, and the inversion sampler is used instead.
constexpr double kRejectionMinAcceptance = 0.3;

// The two masses of the unnormalised density exp(−ρ_α): core ∫_{−α}^{α} e^{−t²/2} dt = √(2π)·erf(α/√2)
// (= √(2π)(2Φ(α)−1), erf avoids the cancellation of 2Φ(α)−1 at small α) and both tails
// 2∫_α^∞ e^{−α(t−α/2)} dt = (2/α) e^{−α²/2}.
double core_mass(double alpha) { return kSqrt2Pi * std::erf(alpha / kSqrt2); }
double tails_mass(double alpha) { return (2.0 / alpha) * std::exp(-0.5 * alpha * alpha); }

// Var(α) = κ_α [√(2π)(2Φ(α)−1) − 2αe + 2e(α + 2/α + 2/α³)], e = e^{−α²/2} (our derivation: the core's
// ∫t²e^{−t²/2} plus 2e∫(α+u)²e^{−αu}du). The ±2αe terms cancel, leaving
// Var = (Z_c + 4e(1/α + 1/α³)) / (Z_c + 2e/α), which is computed without that cancellation.
double huber_variance(double alpha) {
  const double e = std::exp(-0.5 * alpha * alpha);
  const double zc = core_mass(alpha);
  return (zc + 4.0 * e * (1.0 / alpha + 1.0 / (alpha * alpha * alpha))) / (zc + 2.0 * e / alpha);
}

// erf⁻¹(y) for |y| ≤ 0.3 (all the inversion sampler needs): the Maclaurin series to y⁷ (relative
// error < 1e-5 there), then Newton steps on erf, each squaring the relative error; erf is
// well-conditioned near 0, so the result is within a few ulp.
double erf_inverse_small(double y) {
  constexpr double pi = std::numbers::pi;
  const double y2 = y * y;
  double x = 0.5 * std::sqrt(pi) * y *
             (1.0 + y2 * (pi / 12.0 + y2 * (7.0 * pi * pi / 480.0 + y2 * 127.0 * pi * pi * pi / 40320.0)));
  const double two_over_sqrt_pi = 2.0 / std::sqrt(pi);
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
  return x;
}

double checked_positive(const char* name, double value) {
  require_positive(name, value);
  return value;
}

}  // namespace

// ---- HuberDistribution ---------------------------------------------------------------------------

HuberDistribution::HuberDistribution(double alpha) : alpha_(checked_positive("alpha", alpha)) {
  const double zc = core_mass(alpha);
  const double zt = tails_mass(alpha);
  kappa_ = 1.0 / (zc + zt);
  // 2/α overflows only for α < 2/DBL_MAX; the density would then be identically 0 in doubles.
  if (!(kappa_ > 0.0)) {
    throw InvalidParameter("huber: alpha must be large enough for κ_α > 0 in double precision, got " +
                           format_value(alpha));
  }
  core_probability_ = kappa_ * zc;
}

double HuberDistribution::loss(double t) const noexcept {
  const double a = std::fabs(t);
  return a <= alpha_ ? 0.5 * t * t : alpha_ * (a - 0.5 * alpha_);
}

double HuberDistribution::density(double t) const noexcept { return kappa_ * std::exp(-loss(t)); }

double HuberDistribution::cdf(double t) const noexcept {
  // Symmetric: F(t) = 1 − F(−t) for t > 0 keeps the two halves exactly consistent.
  if (t > 0.0) return 1.0 - cdf(-t);
  if (t <= -alpha_) {
    // Left tail: ∫_{−∞}^t e^{αs + α²/2} ds = e^{α(t+α)} e^{−α²/2}/α, written so nothing overflows.
    return kappa_ * std::exp(alpha_ * (t + alpha_) - 0.5 * alpha_ * alpha_) / alpha_;
  }
  if (t == t) {
    // Core, −α < t ≤ 0: left tail mass + √(2π)(Φ(t) − Φ(−α)), with Φ(t) − Φ(−α) as a difference of
    // erfc at non-negative arguments (no cancellation against 1).
    const double core = 0.5 * kSqrt2Pi * (std::erfc(-t / kSqrt2) - std::erfc(alpha_ / kSqrt2));
    return kappa_ * (std::exp(-0.5 * alpha_ * alpha_) / alpha_ + core);
  }
  return t;  // NaN in, NaN out
}

double HuberDistribution::variance() const noexcept { return huber_variance(alpha_); }

double HuberDistribution::tail_mass() const noexcept { return 1.0 - core_probability_; }

double HuberDistribution::sample(NoiseSource& noise) const {
  // The density is the mixture p_core·(core N(0,1) truncated to [−α, α]) + (1 − p_core)·(two-sided
  // tail), since κ_α e^{−ρ_α} restricted to each piece is that piece's law times its mass.
  if (noise.uniform_open() < core_probability_) {
    const double acceptance = std::erf(alpha_ / kSqrt2);  // 2Φ(α) − 1
    if (acceptance >= kRejectionMinAcceptance) {
      // Rejection: N(0,1) conditioned on |g| ≤ α is exactly the truncated core.
      for (;;) {
        const double g = noise.gaussian();
        if (std::fabs(g) <= alpha_) return g;
      }
    }
    // Inversion: (Φ(t) − Φ(−α))/(2Φ(α) − 1) = U  ⇔  erf(t/√2) = (2U − 1)·erf(α/√2). The signed
    // uniform v = 2U − 1 is built like NoiseSource::gaussian's: exact and symmetric in (−1, 1).
    const std::uint64_t w = noise.next_word();
    const double v = (static_cast<double>(static_cast<std::int64_t>(w) >> 11) + 0.5) * 0x1.0p-52;
    const double t = kSqrt2 * erf_inverse_small(v * acceptance);
    return std::fmin(std::fmax(t, -alpha_), alpha_);  // rounding must not leave the core
  }
  // Tail: on |t| > α the density is ∝ e^{−α(|t|−α)}, i.e. |t| − α ~ Exponential(rate α). The fine
  // exponential: the coarse one's support gaps outgrow the snapping grid far in the tail (Mironov).
  const double magnitude = alpha_ + noise.exponential_fine() / alpha_;
  return (noise.next_word() & 1) ? -magnitude : magnitude;
}

double HuberDistribution::alpha_for_variance(double variance) {
  // Var is strictly decreasing in α, Var(50) = 1 in doubles and Var(1e-3) ≈ 2·10⁶.
  const double max_variance = huber_variance(kAlphaMin);
  if (!(variance > 1.0 && variance <= max_variance)) {
    throw InvalidParameter(
        "huber alpha_for_variance: variance must be in (1, " + format_value(max_variance) +
        "] (unit-core Huber noise always has variance > 1), got " + format_value(variance));
  }
  double lo = kAlphaMin, hi = kAlphaMax;  // Var(lo) ≥ variance > Var(hi)
  for (int i = 0; i < 200 && hi - lo > 4e-16 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (huber_variance(mid) > variance ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// ---- HuberMechanism ------------------------------------------------------------------------------

HuberMechanism::HuberMechanism(double l1_sensitivity, double alpha, double scale)
    : AdditiveMechanism("huber mechanism", "huber"),
      l1_sensitivity_(checked_positive("l1_sensitivity", l1_sensitivity)),
      distribution_(alpha),
      scale_(checked_positive("scale", scale)) {
  const double eps = epsilon();
  if (!(std::isfinite(eps) && eps > 0.0)) {
    throw InvalidParameter("huber mechanism: epsilon = alpha·l1_sensitivity/scale must be finite and > 0, got " +
                           format_value(eps));
  }
  const double noise_sd = scale_ * std::sqrt(distribution_.variance());
  if (!(std::isfinite(noise_sd) && noise_sd > 0.0)) {
    throw InvalidParameter("huber mechanism: noise standard deviation scale·sqrt(Var(alpha)) must be finite, got " +
                           format_value(noise_sd));
  }
}

HuberMechanism HuberMechanism::for_epsilon(double l1_sensitivity, double epsilon, double scale) {
  require_positive("l1_sensitivity", l1_sensitivity);
  require_positive("epsilon", epsilon);
  require_positive("scale", scale);
  const double alpha = epsilon * scale / l1_sensitivity;  // Thm 2.1 solved for α, with the scale s
  if (!(std::isfinite(alpha) && alpha > 0.0)) {
    throw InvalidParameter("huber for_epsilon: alpha = epsilon·scale/l1_sensitivity must be finite and > 0, got " +
                           format_value(alpha) + " (epsilon " + format_value(epsilon) + ")");
  }
  return HuberMechanism(l1_sensitivity, alpha, scale);
}

double HuberMechanism::epsilon() const noexcept {
  return distribution_.alpha() * l1_sensitivity_ / scale_;
}

double HuberMechanism::variance() const noexcept {
  return scale_ * scale_ * distribution_.variance();
}

// Thm 2.1: the whole vector costs ε = αΔ₁/s.
void HuberMechanism::charge(PrivacyAccountant& accountant, const std::string& label) const {
  accountant.charge_pure(label, epsilon());
}

void HuberMechanism::perturb(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise) const {
  const double grid = snap_granularity(scale_ * std::sqrt(distribution_.variance()));
  for (Eigen::Index i = 0; i < value.size(); ++i)
    value[i] = snap_to_grid(value[i] + scale_ * distribution_.sample(noise), grid);
}

}  // namespace dpstream::privacy
