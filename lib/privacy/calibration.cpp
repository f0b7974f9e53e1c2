#include "dpstream/privacy/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"

namespace dpstream::privacy {

using base::format_value;
using base::require_positive;

namespace {

// δ must be > 0 wherever a Gaussian (or a zCDP guarantee) is turned into (ε, δ): no finite σ gives δ = 0.
void require_gaussian_delta(double delta, const char* what) {
  if (!(delta > 0.0)) {
    throw InvalidParameter("delta must be > 0 for " + std::string(what) + ", got " + format_value(delta));
  }
}

// ε of a privacy profile: finite and ≥ 0 (ε = 0 is meaningful there: δ(0) is the total variation).
void require_nonnegative_epsilon(double epsilon) {
  if (!(std::isfinite(epsilon) && epsilon >= 0.0)) {
    throw InvalidParameter("epsilon must be finite and >= 0, got " + format_value(epsilon));
  }
}

// log erfc(z) for z ≥ 0 without underflow. std::erfc is accurate (relative) down to its smallest
// normal result, near z = 26.5; beyond z = 26 use the asymptotic series
//   erfc(z) = e^{-z²}/(z√π) · Σ_n (−1)^n (2n−1)!!/(2z²)^n,
// whose n-th term at z ≥ 26 is below (2n−1)!!·(7.4e-4)^n: 8 terms leave an error < 1e-19 relative.
double log_erfc(double z) {
  if (z < 26.0) return std::log(std::erfc(z));
  const double w = 1.0 / (2.0 * z * z);
  double term = 1.0;
  double sum = 1.0;
  for (int n = 1; n <= 8; ++n) {
    term *= -static_cast<double>(2 * n - 1) * w;
    sum += term;
  }
  return -z * z - std::log(z) - 0.5 * std::log(std::numbers::pi) + std::log(sum);
}

// Φ(x) for x ≤ 0 (and everywhere): 0.5·erfc(−x/√2) is relatively accurate in the lower tail.
double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

// e^ε·Φ(−y) for y ≥ 0, without overflow of e^ε or underflow of Φ.
double exp_times_lower_tail(double epsilon, double y) {
  const double z = y / std::numbers::sqrt2;
  if (epsilon <= 700.0 && z < 26.0) return std::exp(epsilon) * 0.5 * std::erfc(z);
  return std::exp(epsilon + std::log(0.5) + log_erfc(z));
}

// CKS 2020 bound, parametrised by u = α − 1 > 0 (so that α close to 1 keeps its precision):
//   log δ(u) = u((1+u)ρ − ε) + u·log(u/(1+u)) − log(1+u)
// and its derivative in u,
//   d/du log δ = (2u+1)ρ − ε + log u − log1p(u),
// which is strictly increasing (second derivative 2ρ + 1/(u(1+u)) > 0): log δ(u) is convex with one
// minimiser, found by bisection on the sign of the derivative in t = log u.
double cks_log_delta(double rho, double epsilon, double u) {
  return u * ((1.0 + u) * rho - epsilon) + u * (std::log(u) - std::log1p(u)) - std::log1p(u);
}
double cks_log_delta_slope(double rho, double epsilon, double u) {
  return (2.0 * u + 1.0) * rho - epsilon + std::log(u) - std::log1p(u);
}

// The same bound solved for ε at a given δ:
//   ε(u) = (1+u)ρ + log(u/(1+u)) + (log(1/δ) − log(1+u))/u,
// with ε'(u) = [ρu² + log(δ(1+u))]/u². The bracket g(u) = ρu² + log δ + log1p(u) is strictly increasing,
// negative as u → 0 (δ < 1) and positive at u = √(log(1/δ)/ρ): ε(u) has one minimiser, the root of g.
double cks_epsilon_at(double rho, double delta, double u) {
  return (1.0 + u) * rho + std::log(u) - std::log1p(u) + (-std::log(delta) - std::log1p(u)) / u;
}
double cks_epsilon_sign(double rho, double delta, double u) {
  return rho * u * u + std::log(delta) + std::log1p(u);
}

// Bisection on t = log u for the root of an increasing function, over [t_lo, t_hi]; returns u.
template <class F>
double bisect_log_u(F&& increasing, double t_lo, double t_hi) {
  for (int i = 0; i < 400; ++i) {
    const double t_mid = 0.5 * (t_lo + t_hi);
    if (t_mid <= t_lo || t_mid >= t_hi) break;  // the bracket is one ulp wide
    (increasing(std::exp(t_mid)) < 0.0 ? t_lo : t_hi) = t_mid;
  }
  return std::exp(0.5 * (t_lo + t_hi));
}

}  // namespace

// ---- Gaussian mechanism, one release ------------------------------------------------------------

double paper_gaussian_multiplier(const EpsDelta& target) {
  require_gaussian_delta(target.delta(), "the Gaussian mechanism");
  return std::sqrt(2.0 * std::log(1.25 / target.delta())) / target.epsilon();
}

double paper_gaussian_sigma(double l2_sensitivity, const EpsDelta& target) {
  require_positive("l2_sensitivity", l2_sensitivity);
  if (!(target.epsilon() < 1.0)) {
    throw InvalidParameter(
        "epsilon must be < 1 for the paper (classical) Gaussian calibration, got " +
        format_value(target.epsilon()) +
        ": the classical proof (Dwork & Roth 2014, Thm A.1) needs epsilon < 1; use Calibration::tight");
  }
  return l2_sensitivity * paper_gaussian_multiplier(target);
}

double analytic_gaussian_delta(double l2_sensitivity, double sigma, double epsilon) {
  require_positive("l2_sensitivity", l2_sensitivity);
  require_positive("sigma", sigma);
  require_nonnegative_epsilon(epsilon);
  const double a = l2_sensitivity / (2.0 * sigma);
  const double b = epsilon * sigma / l2_sensitivity;
  // Φ(a − b) − e^ε Φ(−a − b). The first term as an upper tail when a < b keeps its relative accuracy.
  const double first = normal_cdf(a - b);
  const double second = exp_times_lower_tail(epsilon, a + b);
  return std::clamp(first - second, 0.0, 1.0);
}

double analytic_gaussian_sigma(double l2_sensitivity, const EpsDelta& target) {
  require_positive("l2_sensitivity", l2_sensitivity);
  require_gaussian_delta(target.delta(), "the Gaussian mechanism");
  const double eps = target.epsilon();
  const double delta = target.delta();
  const auto too_small = [&](double s) { return analytic_gaussian_delta(l2_sensitivity, s, eps) > delta; };
  // δ(σ) falls from 1 (σ → 0) to 0 (σ → ∞) monotonically. Bracket around the classical value.
  const double start = l2_sensitivity * std::sqrt(2.0 * std::log(1.25 / delta)) / eps;
  double lo = start, hi = start;
  for (int i = 0; i < 2100 && too_small(hi); ++i) hi *= 2.0;
  for (int i = 0; i < 2100 && !too_small(lo); ++i) lo *= 0.5;
  if (too_small(hi) || !too_small(lo)) {
    throw InvalidParameter("cannot calibrate the analytic Gaussian mechanism to " + target.to_string() +
                           " with l2_sensitivity " + format_value(l2_sensitivity));
  }
  // Invariant: δ(lo) > target ≥ δ(hi). Bisection on log σ to a relative width of 1e-13 (< 1e-12).
  for (int i = 0; i < 200 && hi / lo - 1.0 > 1e-13; ++i) {
    const double mid = std::sqrt(lo * hi);
    (too_small(mid) ? lo : hi) = mid;
  }
  return hi;
}

double gaussian_sigma(double l2_sensitivity, const EpsDelta& target, Calibration calibration) {
  switch (calibration) {
    case Calibration::paper: return paper_gaussian_sigma(l2_sensitivity, target);
    case Calibration::tight: return analytic_gaussian_sigma(l2_sensitivity, target);
  }
  throw InvalidParameter("calibration must be paper or tight");
}

// ---- zCDP -------------------------------------------------------------------------------------

double gaussian_rho(double l2_sensitivity, double sigma) {
  require_positive("l2_sensitivity", l2_sensitivity);
  require_positive("sigma", sigma);
  const double r = l2_sensitivity / sigma;
  return 0.5 * r * r;
}

double gaussian_sigma_for_rho(double l2_sensitivity, double rho) {
  require_positive("l2_sensitivity", l2_sensitivity);
  require_positive("rho", rho);
  return l2_sensitivity / std::sqrt(2.0 * rho);
}

double pure_epsilon_rho(double epsilon) {
  require_positive("epsilon", epsilon);
  return 0.5 * epsilon * epsilon;
}

namespace {
void require_conversion_delta(double delta) {
  if (!(delta > 0.0 && delta < 1.0)) {
    throw InvalidParameter("delta must be in (0, 1) for a zCDP to (epsilon, delta) conversion, got " +
                           format_value(delta));
  }
}
}  // namespace

double epsilon_from_rho_standard(double rho, double delta) {
  require_positive("rho", rho);
  require_conversion_delta(delta);
  return rho + 2.0 * std::sqrt(rho * std::log(1.0 / delta));
}

// Source check (2024 reference code, read through the project's code search):
//  * opendp/opendp rust/src/combinators/measure_cast/zCDP_to_approxDP/cdp_delta/cdp_delta.tex states
//    CKS20 (arXiv 2004.00010, §2.3) as δ = e^{(α−1)(τ−ε)}/(α−1) · (1 − 1/α)^α with τ = αρ, and
//    ε = inf_α αρ + (ln(1/δ) + (α−1) ln(1−1/α) − ln α)/(α−1); its cdp_delta.py bisects on the
//    derivative (2α−1)ρ − ε + ln(1 − 1/α), the same as cks_log_delta_slope below.
//    Since (1−1/α)^α/(α−1) = (1−1/α)^{α−1}/α, that δ is the header's formula.
//  * google/differential-privacy python/dp_accounting/rdp/rdp_privacy_accountant.py (_compute_epsilon,
//    citing CKS20 Prop 12) uses ε = r + log1p(−1/α) − log(δα)/(α−1), r = αρ for zCDP: identical
//    after expanding −log(δα)/(α−1).
double delta_from_rho_cks(double rho, double epsilon) {
  require_positive("rho", rho);
  require_nonnegative_epsilon(epsilon);
  const auto slope = [&](double u) { return cks_log_delta_slope(rho, epsilon, u); };
  // Slope → −∞ as u → 0; at u = e^{700} it is +∞ or huge. Both ends of t ∈ [−700, 700] bracket the root.
  const double u = bisect_log_u(slope, -700.0, 700.0);
  const double log_delta = cks_log_delta(rho, epsilon, u);
  return std::min(1.0, std::exp(log_delta));
}

double epsilon_from_rho_cks(double rho, double delta) {
  require_positive("rho", rho);
  require_conversion_delta(delta);
  const double standard = epsilon_from_rho_standard(rho, delta);
  const auto sign = [&](double u) { return cks_epsilon_sign(rho, delta, u); };
  // g(u) → log δ < 0 as u → 0; g(√(log(1/δ)/ρ)) = log1p(u) > 0.
  const double u_hi = std::sqrt(std::log(1.0 / delta) / rho);
  const double u = bisect_log_u(sign, -700.0, std::log(u_hi) + 1.0);
  const double eps = cks_epsilon_at(rho, delta, u);
  // Mathematically CKS ≤ standard at every α (its extra terms ln(1−1/α) and −ln α/(α−1) are ≤ 0 and the
  // rest is the RDP bound whose minimum over α is the standard one); the min guards float round-off.
  // For δ large against ρ the bound can go below 0, which means (0, δ)-DP: clamp at 0 as dp_accounting does.
  return std::max(0.0, std::isfinite(eps) ? std::min(eps, standard) : standard);
}

double rho_for_budget(const EpsDelta& target) {
  require_gaussian_delta(target.delta(), "a zCDP budget");
  const double eps = target.epsilon();
  const double delta = target.delta();
  const auto within = [&](double rho) { return epsilon_from_rho_cks(rho, delta) <= eps; };
  // The standard conversion inverted exactly: ρ + 2√(ρL) = ε at ρ = (√(L+ε) − √L)², L = ln(1/δ).
  // CKS ≤ standard, so this ρ is within the budget: a lower end of the bracket.
  const double L = std::log(1.0 / delta);
  const double root = std::sqrt(L + eps) - std::sqrt(L);
  double lo = root * root;
  for (int i = 0; i < 2100 && !within(lo); ++i) lo *= 0.5;
  double hi = 2.0 * lo;
  for (int i = 0; i < 2100 && within(hi); ++i) hi *= 2.0;
  if (!within(lo) || within(hi)) {
    throw InvalidParameter("cannot find the zCDP rho for the budget " + target.to_string());
  }
  // Invariant: ε(lo) ≤ target < ε(hi). Bisection on log ρ to a relative width of 1e-14.
  for (int i = 0; i < 200 && hi / lo - 1.0 > 1e-14; ++i) {
    const double mid = std::sqrt(lo * hi);
    (within(mid) ? lo : hi) = mid;
  }
  return lo;
}

namespace {

// The (ε_s, δ_s) on the μ-GDP profile whose analytic Gaussian σ is at least Δ/μ (ε_s rounded down).
EpsDelta share_target_for_mu(const EpsDelta& total, long shares, double mu) {
  const double sigma = 1.0 / mu;  // Δ = 1: the profile depends on μ = Δ/σ only
  double delta = total.delta();
  const double delta_at_zero = analytic_gaussian_delta(1.0, sigma, 0.0);
  if (delta >= delta_at_zero) delta = 0.5 * delta_at_zero;
  // δ(ε) falls from delta_at_zero (ε = 0) to 0: bracket the ε where it crosses `delta`.
  const auto above = [&](double eps) { return analytic_gaussian_delta(1.0, sigma, eps) > delta; };
  double lo = 0.0, hi = std::max(1.0, mu);
  for (int i = 0; i < 2100 && above(hi); ++i) hi *= 2.0;
  // Invariant: δ(lo) > target ≥ δ(hi). Bisection to a relative width of 1e-13; keep lo (its σ is larger).
  for (int i = 0; i < 400 && (lo == 0.0 || hi / lo - 1.0 > 1e-13); ++i) {
    const double mid = lo == 0.0 ? 0.5 * hi : std::sqrt(lo * hi);
    (above(mid) ? lo : hi) = mid;
  }
  if (!(lo > 0.0)) {
    throw InvalidParameter("cannot split the budget " + total.to_string() + " into " + std::to_string(shares) +
                           " shares");
  }
  return EpsDelta(lo, delta);
}

void require_shares(long shares) {
  if (shares < 1) throw InvalidParameter("shares must be >= 1, got " + std::to_string(shares));
}

}  // namespace

EpsDelta zcdp_share_target(const EpsDelta& total, long shares) {
  require_shares(shares);
  return share_target_for_mu(total, shares, std::sqrt(2.0 * rho_for_budget(total) / static_cast<double>(shares)));
}

double gdp_mu_for_budget(const EpsDelta& target) {
  require_gaussian_delta(target.delta(), "a Gaussian DP budget");
  return 1.0 / analytic_gaussian_sigma(1.0, target);
}

double epsilon_from_gdp(double mu, double delta) {
  require_positive("mu", mu);
  require_conversion_delta(delta);
  const double sigma = 1.0 / mu;
  const auto above = [&](double eps) { return analytic_gaussian_delta(1.0, sigma, eps) > delta; };
  if (!above(0.0)) return 0.0;
  double lo = 0.0, hi = std::max(1.0, mu);
  for (int i = 0; i < 2100 && above(hi); ++i) hi *= 2.0;
  // Invariant: δ(lo) > delta ≥ δ(hi). Bisection to a relative width of 1e-13; keep hi (within delta).
  for (int i = 0; i < 400 && (lo == 0.0 || hi / lo - 1.0 > 1e-13); ++i) {
    const double mid = lo == 0.0 ? 0.5 * hi : std::sqrt(lo * hi);
    (above(mid) ? lo : hi) = mid;
  }
  return hi;
}

double gdp_share_mu(const EpsDelta& total, long shares) {
  require_shares(shares);
  return gdp_mu_for_budget(total) / std::sqrt(static_cast<double>(shares));
}

EpsDelta gdp_share_target(const EpsDelta& total, long shares) {
  return share_target_for_mu(total, shares, gdp_share_mu(total, shares));
}

double gaussian_sigma_for_composition(double l2_sensitivity, const EpsDelta& target, long releases,
                                      Calibration calibration) {
  require_positive("l2_sensitivity", l2_sensitivity);
  if (releases < 1) {
    throw InvalidParameter("releases must be >= 1, got " + std::to_string(releases));
  }
  const double k = static_cast<double>(releases);
  switch (calibration) {
    case Calibration::paper:
      return paper_gaussian_sigma(l2_sensitivity, EpsDelta(target.epsilon() / k, target.delta() / k));
    case Calibration::tight:
      return analytic_gaussian_sigma(l2_sensitivity * std::sqrt(k), target);  // GDP: μ² adds over releases
  }
  throw InvalidParameter("calibration must be paper or tight");
}

namespace {
void require_levels(long levels) {
  if (levels < 1) throw InvalidParameter("tree levels must be >= 1, got " + std::to_string(levels));
}
}  // namespace

double tree_node_sigma(long levels, double l2_sensitivity, const EpsDelta& target,
                       Calibration calibration) {
  require_levels(levels);
  require_positive("l2_sensitivity", l2_sensitivity);
  switch (calibration) {
    case Calibration::paper:
      return gaussian_sigma_for_composition(l2_sensitivity, target, levels, Calibration::paper);
    case Calibration::tight:
      return analytic_gaussian_sigma(l2_sensitivity * std::sqrt(static_cast<double>(levels)), target);
  }
  throw InvalidParameter("calibration must be paper or tight");
}

double tree_node_sigma_joint_classical(long levels, double l2_sensitivity, const EpsDelta& target) {
  require_levels(levels);
  require_positive("l2_sensitivity", l2_sensitivity);
  return l2_sensitivity * std::sqrt(static_cast<double>(levels)) * paper_gaussian_multiplier(target);
}

}  // namespace dpstream::privacy
