// Noise calibration: classical and analytic Gaussian, zCDP and its conversions to (ε, δ).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/calibration.hpp"

namespace test_calibration {

using namespace dpstream::privacy;
using dpstream::InvalidParameter;
using Catch::Contains;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double Phi(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }
double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi); }

// The CKS bound at one order α, written directly from the header's formula
//   δ(α) = exp((α−1)(αρ−ε)) · (1−1/α)^{α−1} / α
// (no logs, no reparametrisation): an independent evaluation to check the minimisation against.
double cks_delta_at(double rho, double eps, double alpha) {
  return std::exp((alpha - 1.0) * (alpha * rho - eps)) * std::pow(1.0 - 1.0 / alpha, alpha - 1.0) / alpha;
}
}  // namespace

// ---- classical (paper) calibration ----------------------------------------------------------------

TEST_CASE("paper multiplier reproduces the printed Delta_{eps,delta} table", "[calibration][paper]") {
  // Analyze Gauss §2's Δ_{ε,δ}: exact formula, printed to 6 and 4 decimals; tolerance = half the last
  // printed digit.
  CHECK(paper_gaussian_multiplier(EpsDelta(1.0, 1e-6)) == Approx(5.298803).margin(1e-6));
  CHECK(paper_gaussian_multiplier(EpsDelta(0.1, 1e-5)) == Approx(48.4481).margin(1e-4));
  CHECK(paper_gaussian_multiplier(EpsDelta(0.1, 1e-6)) == Approx(52.9880).margin(1e-4));
  CHECK(paper_gaussian_multiplier(EpsDelta(0.5, 1e-9)) == Approx(12.9449).margin(1e-4));
  CHECK(paper_gaussian_multiplier(EpsDelta(1.0, 1e-9)) == Approx(6.4725).margin(1e-4));
  // Scaling Δ ∝ 1/ε exactly (one division): relative 1e-15.
  CHECK(paper_gaussian_multiplier(EpsDelta(0.25, 1e-6)) ==
        Approx(4.0 * paper_gaussian_multiplier(EpsDelta(1.0, 1e-6))).epsilon(1e-15));
}

TEST_CASE("paper sigma is Δ times the multiplier, and refused for eps >= 1", "[calibration][paper]") {
  CHECK(paper_gaussian_sigma(1.0, EpsDelta(0.1, 1e-5)) == Approx(48.4481).margin(1e-4));
  CHECK(paper_gaussian_sigma(2.5, EpsDelta(0.5, 1e-6)) ==
        Approx(2.5 * paper_gaussian_multiplier(EpsDelta(0.5, 1e-6))).epsilon(1e-15));
  REQUIRE_NOTHROW(paper_gaussian_sigma(1.0, EpsDelta(std::nextafter(1.0, 0.0), 1e-6)));
  REQUIRE_THROWS_AS(paper_gaussian_sigma(1.0, EpsDelta(1.0, 1e-6)), InvalidParameter);
  REQUIRE_THROWS_WITH(paper_gaussian_sigma(1.0, EpsDelta(1.0, 1e-6)), Contains("epsilon") && Contains("< 1"));
  REQUIRE_THROWS_WITH(paper_gaussian_sigma(1.0, EpsDelta(2.0, 1e-6)),
                      Contains("epsilon") && Contains("< 1") && Contains("got 2"));
  REQUIRE_THROWS_AS(gaussian_sigma(1.0, EpsDelta(2.0, 1e-6), Calibration::paper), InvalidParameter);
}

TEST_CASE("why paper refuses large eps: the classical sigma is not (eps, delta)-DP there", "[calibration][paper]") {
  // At ε = 10, δ = 1e-5 the classical σ = √(2 ln 1.25e5)/10 = 0.4845 has exact δ ≈ 2.3e-5 (exact
  // profile, Balle & Wang 2018), more than twice the claimed 1e-5. At ε = 20, δ = 1e-6 it is ≈ 1.6e-4.
  const double s10 = paper_gaussian_multiplier(EpsDelta(10.0, 1e-5));
  const double d10 = analytic_gaussian_delta(1.0, s10, 10.0);
  CHECK(d10 > 1e-5);
  CHECK(d10 == Approx(2.3e-5).margin(0.05e-5));
  const double s20 = paper_gaussian_multiplier(EpsDelta(20.0, 1e-6));
  CHECK(analytic_gaussian_delta(1.0, s20, 20.0) == Approx(1.6e-4).margin(0.05e-4));
  // Below ε = 1, where the classical proof holds, its σ is valid (true δ below the claim).
  for (double eps : {0.01, 0.1, 0.5, 0.99}) {
    for (double delta : {1e-3, 1e-6, 1e-10}) {
      const double s = paper_gaussian_sigma(1.0, EpsDelta(eps, delta));
      CHECK(analytic_gaussian_delta(1.0, s, eps) <= delta);
    }
  }
}

// ---- analytic Gaussian ----------------------------------------------------------------------------

TEST_CASE("analytic sigma pin and comparison with the classical sigma", "[calibration][analytic]") {
  // Balle & Wang 2018's analytic σ: 4.2247 (printed to 4 decimals).
  CHECK(analytic_gaussian_sigma(1.0, EpsDelta(1.0, 1e-6)) == Approx(4.2247).margin(1e-4));
  // σ scales exactly with Δ (δ depends on Δ/σ only); bisection width 1e-13 relative on each side.
  CHECK(analytic_gaussian_sigma(3.0, EpsDelta(1.0, 1e-6)) ==
        Approx(3.0 * analytic_gaussian_sigma(1.0, EpsDelta(1.0, 1e-6))).epsilon(1e-12));
  for (double eps : {0.01, 0.1, 0.5, 0.9, 0.999}) {
    for (double delta : {1e-3, 1e-6, 1e-10}) {
      const EpsDelta t(eps, delta);
      CHECK(analytic_gaussian_sigma(1.0, t) < paper_gaussian_sigma(1.0, t));
    }
  }
  CHECK(gaussian_sigma(1.0, EpsDelta(1.0, 1e-6), Calibration::tight) ==
        analytic_gaussian_sigma(1.0, EpsDelta(1.0, 1e-6)));
  CHECK(gaussian_sigma(1.0, EpsDelta(0.5, 1e-6), Calibration::paper) ==
        paper_gaussian_sigma(1.0, EpsDelta(0.5, 1e-6)));
}

TEST_CASE("analytic sigma attains its delta, and is the smallest such sigma", "[calibration][analytic]") {
  // σ is bisected to a relative width 1e-13. The elasticity |d ln δ / d ln σ| of the Gaussian profile is
  // ≈ (b−a)(a+b) (a = 1/(2σ), b = εσ; b−a ≈ √(2 ln(1/δ)) ≤ 9, a+b ≤ ~50 over this grid), i.e. ≲ 1e3, so
  // δ(σ) matches δ to ≲ 1e-10 relative: 1e-6 is loose but still catches any real mistake. Shrinking σ
  // by 1e-9 relative raises δ by ≳ 1e-9·elasticity > 0.
  for (double eps : {0.001, 0.1, 1.0, 5.0, 20.0, 100.0, 1000.0}) {
    for (double delta : {1e-2, 1e-5, 1e-9, 1e-15}) {
      const double s = analytic_gaussian_sigma(1.0, EpsDelta(eps, delta));
      INFO("eps=" << eps << " delta=" << delta << " sigma=" << s);
      REQUIRE(std::isfinite(s));
      CHECK(analytic_gaussian_delta(1.0, s, eps) <= delta);
      CHECK(analytic_gaussian_delta(1.0, s, eps) == Approx(delta).epsilon(1e-6));
      CHECK(analytic_gaussian_delta(1.0, s * (1.0 - 1e-9), eps) > delta);
    }
  }
}

TEST_CASE("analytic delta is monotone in sigma and in eps", "[calibration][analytic]") {
  double prev = 1.0;
  for (double s = 0.05; s < 50.0; s *= 1.1) {
    const double d = analytic_gaussian_delta(1.0, s, 1.0);
    CHECK(d <= prev);
    CHECK(d >= 0.0);
    prev = d;
  }
  prev = 1.0;
  for (double eps = 0.0; eps < 40.0; eps += 0.25) {
    const double d = analytic_gaussian_delta(1.0, 0.7, eps);
    CHECK(d <= prev);
    prev = d;
  }
  // Limits: ε = 0 gives the total variation 2Φ(Δ/(2σ)) − 1; σ → 0 gives δ → 1.
  CHECK(analytic_gaussian_delta(1.0, 2.0, 0.0) == Approx(2.0 * Phi(0.25) - 1.0).epsilon(1e-14));
  CHECK(analytic_gaussian_delta(1.0, 1e-6, 1.0) == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("analytic delta is stable for very large eps (log-space second term)", "[calibration][analytic]") {
  // With a = Δ/(2σ), b = εσ/Δ: (a+b)² − (b−a)² = 4ab = 2ε, so e^ε φ(a+b) = φ(b−a) exactly, and
  //   e^ε Φ(−(a+b)) = φ(b−a) · R(a+b),  R(z) = Φ(−z)/φ(z) = (1/z)(1 − 1/z² + 3/z⁴ − 15/z⁶ + ...)
  // (Mills ratio, asymptotic series; truncation error < 105/z⁹ relative to 1/z, ≈ 2e-13 for z ≥ 35).
  // Here e^ε overflows a double (ε > 709) or Φ(−(a+b)) underflows, so the naive formula gives NaN/0.
  struct Case { double eps, sigma; };
  for (const Case c : {Case{650.0, 0.05}, Case{750.0, 0.03}, Case{2000.0, 0.02}, Case{5000.0, 0.012}}) {
    const double a = 1.0 / (2.0 * c.sigma), b = c.eps * c.sigma, z = a + b;
    REQUIRE(z > 35.0);
    const double z2 = 1.0 / (z * z);
    const double mills = (1.0 / z) * (1.0 - z2 + 3.0 * z2 * z2 - 15.0 * z2 * z2 * z2);
    const double expected = Phi(a - b) - phi(b - a) * mills;
    INFO("eps=" << c.eps << " sigma=" << c.sigma << " expected=" << expected);
    const double got = analytic_gaussian_delta(1.0, c.sigma, c.eps);
    REQUIRE(std::isfinite(got));
    CHECK(got == Approx(expected).epsilon(1e-9));
  }
  // Continuity across the switch between the direct product and the log form at ε = 700: δ is smooth
  // in ε (|dδ/dε| ≤ e^ε Φ(−a−b) ≤ δ-scale), so a 2e-9 step changes it by ≲ 1e-8 relative.
  const double below = analytic_gaussian_delta(1.0, 0.03, 700.0 - 1e-9);
  const double above = analytic_gaussian_delta(1.0, 0.03, 700.0 + 1e-9);
  CHECK(below == Approx(above).epsilon(1e-8));
  // Calibration works there too.
  const double s = analytic_gaussian_sigma(1.0, EpsDelta(3000.0, 1e-12));
  CHECK(analytic_gaussian_delta(1.0, s, 3000.0) == Approx(1e-12).epsilon(1e-6));
}

// ---- zCDP -------------------------------------------------------------------------------------

TEST_CASE("zCDP of the Gaussian and of pure DP", "[calibration][zcdp]") {
  CHECK(gaussian_rho(1.0, 1.0) == 0.5);
  CHECK(gaussian_rho(2.0, 4.0) == 0.125);
  CHECK(gaussian_sigma_for_rho(2.0, 0.125) == Approx(4.0).epsilon(1e-15));
  for (double rho : {1e-6, 0.01, 0.3, 7.0}) {
    CHECK(gaussian_rho(1.5, gaussian_sigma_for_rho(1.5, rho)) == Approx(rho).epsilon(1e-14));
  }
  CHECK(pure_epsilon_rho(0.5) == 0.125);
  CHECK(pure_epsilon_rho(2.0) == 2.0);
}

TEST_CASE("standard zCDP conversion", "[calibration][zcdp]") {
  // ε = ρ + 2√(ρ ln(1/δ)): at ρ = 0.5, δ = e^{-2}: 0.5 + 2√1 = 2.5 (exact up to ln/sqrt rounding).
  CHECK(epsilon_from_rho_standard(0.5, std::exp(-2.0)) == Approx(2.5).epsilon(1e-15));
  CHECK(epsilon_from_rho_standard(0.01, 1e-6) == Approx(0.01 + 2.0 * std::sqrt(0.01 * std::log(1e6))).epsilon(1e-15));
}

TEST_CASE("CKS conversion: never above the standard bound, and a true infimum over alpha", "[calibration][cks]") {
  for (double rho : {1e-8, 1e-4, 1e-2, 0.1, 1.0, 10.0, 1e3}) {
    for (double delta : {1e-15, 1e-9, 1e-6, 1e-3, 0.1, 0.5}) {
      INFO("rho=" << rho << " delta=" << delta);
      const double cks = epsilon_from_rho_cks(rho, delta);
      const double std_eps = epsilon_from_rho_standard(rho, delta);
      REQUIRE(std::isfinite(cks));
      CHECK(cks >= 0.0);
      CHECK(cks <= std_eps);
    }
  }
  // Strictly better in the usual regime: ρ = 0.01, δ = 1e-6 (standard 0.7534).
  CHECK(epsilon_from_rho_cks(0.01, 1e-6) < 0.9 * epsilon_from_rho_standard(0.01, 1e-6));

  // delta_from_rho_cks is the infimum over α of the header's formula: it is ≤ every δ(α) on a grid
  // (up to rounding of the two evaluations: relative 1e-12), and the grid's minimum is within a relative
  // 1e-3 of it. Grid step 1e-4 in t = ln u, u = α−1, so some node is within h = 5e-5 of the minimiser
  // u*. At u*, d²lnδ/dt² = u*²(2ρ + 1/(u*(1+u*))) ≤ 2ρu*² + 1, with u* ≈ ε/(2ρ) ≤ 2500 on this grid,
  // so κ ≤ 1.25e4 and the grid minimum exceeds the infimum by ≤ e^{κh²/2} − 1 ≈ 1.6e-5.
  for (double rho : {1e-3, 0.05, 1.0}) {
    for (double eps : {0.1, 1.0, 5.0}) {
      const double d = delta_from_rho_cks(rho, eps);
      double grid_min = 1.0;
      for (double u = 1e-6; u < 1e6; u *= std::exp(1e-4)) grid_min = std::min(grid_min, cks_delta_at(rho, eps, 1.0 + u));
      INFO("rho=" << rho << " eps=" << eps << " delta=" << d << " grid=" << grid_min);
      CHECK(d <= grid_min * (1.0 + 1e-12));
      CHECK(d >= grid_min * (1.0 - 1e-3));
    }
  }
}

TEST_CASE("CKS round trip delta -> eps -> delta", "[calibration][cks]") {
  // ε*(δ) = min_α ε(α, δ) and δ*(ε) = min_α δ(α, ε) are exact inverses (at the minimising α the two
  // relations are the same equation, and a smaller δ at another α would give a smaller ε there). Both
  // minimisers are solved to full precision, so the round trip is limited by rounding (~1e-13).
  for (double rho : {1e-4, 0.01, 0.1, 1.0, 10.0}) {
    for (double delta : {1e-12, 1e-9, 1e-6, 1e-3}) {
      const double eps = epsilon_from_rho_cks(rho, delta);
      INFO("rho=" << rho << " delta=" << delta << " eps=" << eps);
      CHECK(delta_from_rho_cks(rho, eps) == Approx(delta).epsilon(1e-6));
    }
  }
}

TEST_CASE("CKS is a valid bound: never below the Gaussian's exact delta", "[calibration][cks]") {
  // A Gaussian with ρ = Δ²/(2σ²) is ρ-zCDP; its exact profile (Balle–Wang) is the smallest δ, so any valid
  // zCDP conversion must give δ_CKS ≥ δ_exact. And δ_CKS ≤ the standard bound's δ = exp(−(ε−ρ)²/(4ρ)).
  for (double sigma : {0.5, 2.0, 5.0, 20.0}) {
    const double rho = gaussian_rho(1.0, sigma);
    for (double eps : {0.1, 0.5, 1.0, 3.0}) {
      INFO("sigma=" << sigma << " eps=" << eps);
      const double cks = delta_from_rho_cks(rho, eps);
      CHECK(cks >= analytic_gaussian_delta(1.0, sigma, eps));
      if (eps > rho) CHECK(cks <= std::exp(-(eps - rho) * (eps - rho) / (4.0 * rho)) * (1.0 + 1e-12));
    }
  }
}

TEST_CASE("rho_for_budget inverts the CKS conversion", "[calibration][cks]") {
  // ρ is bisected to a relative width 1e-14 and ε(ρ) has elasticity ≤ 1 (ε grows at most like ρ for
  // large ρ, like √ρ for small), so the recovered ε is within ~1e-13 relative; 1e-6 is the contract.
  for (double eps : {0.01, 0.1, 1.0, 4.0, 20.0}) {
    for (double delta : {1e-12, 1e-6, 1e-3}) {
      const EpsDelta t(eps, delta);
      const double rho = rho_for_budget(t);
      INFO("eps=" << eps << " delta=" << delta << " rho=" << rho);
      CHECK(epsilon_from_rho_cks(rho, delta) <= eps);
      CHECK(epsilon_from_rho_cks(rho, delta) == Approx(eps).epsilon(1e-6));
      // More ρ than the standard conversion allows (the point of CKS): invert the standard exactly.
      const double L = std::log(1.0 / delta);
      const double r_std = std::pow(std::sqrt(L + eps) - std::sqrt(L), 2.0);
      CHECK(rho > r_std);
    }
  }
}

TEST_CASE("sigma for k composed Gaussian releases", "[calibration][composition]") {
  const EpsDelta t(1.0, 1e-6);
  // paper: basic composition, (ε/k, δ/k) each. m = 1024 tree: 11 nodes per element gives 63.07.
  CHECK(gaussian_sigma_for_composition(1.0, t, 11, Calibration::paper) == Approx(63.07).margin(0.005));
  CHECK(gaussian_sigma_for_composition(2.0, t, 4, Calibration::paper) ==
        paper_gaussian_sigma(2.0, EpsDelta(0.25, 2.5e-7)));
  // paper with ε/k ≥ 1 is refused (each release's proof needs ε/k < 1).
  REQUIRE_THROWS_WITH(gaussian_sigma_for_composition(1.0, EpsDelta(4.0, 1e-6), 2, Calibration::paper),
                      Contains("epsilon"));
  // tight: the k releases are one Gaussian mechanism of sensitivity Δ√k: their μ² add up to the
  // target's exact μ² (analytic σ bisected to 1e-12 relative), below the zCDP split's.
  for (long k : {1L, 2L, 11L, 1000L}) {
    const double s = gaussian_sigma_for_composition(1.5, t, k, Calibration::tight);
    CHECK(std::sqrt(static_cast<double>(k)) * 1.5 / s == Approx(gdp_mu_for_budget(t)).epsilon(1e-12));
    CHECK(s < 1.5 * std::sqrt(static_cast<double>(k) / (2.0 * rho_for_budget(t))));
  }
  // Composition beats splitting the budget for many releases.
  CHECK(gaussian_sigma_for_composition(1.0, t, 11, Calibration::tight) <
        0.5 * gaussian_sigma_for_composition(1.0, t, 11, Calibration::paper));
}

TEST_CASE("calibration rejects bad parameters naming them", "[calibration][errors]") {
  const EpsDelta ok(1.0, 1e-6);
  const EpsDelta pure(1.0, 0.0);
  for (double bad : {0.0, -1.0, kNaN, kInf}) {
    REQUIRE_THROWS_WITH(paper_gaussian_sigma(bad, EpsDelta(0.5, 1e-6)), Contains("l2_sensitivity"));
    REQUIRE_THROWS_WITH(analytic_gaussian_sigma(bad, ok), Contains("l2_sensitivity"));
    REQUIRE_THROWS_WITH(analytic_gaussian_delta(bad, 1.0, 1.0), Contains("l2_sensitivity"));
    REQUIRE_THROWS_WITH(analytic_gaussian_delta(1.0, bad, 1.0), Contains("sigma"));
    REQUIRE_THROWS_WITH(gaussian_rho(bad, 1.0), Contains("l2_sensitivity"));
    REQUIRE_THROWS_WITH(gaussian_rho(1.0, bad), Contains("sigma"));
    REQUIRE_THROWS_WITH(gaussian_sigma_for_rho(bad, 1.0), Contains("l2_sensitivity"));
    REQUIRE_THROWS_WITH(gaussian_sigma_for_rho(1.0, bad), Contains("rho"));
    REQUIRE_THROWS_WITH(pure_epsilon_rho(bad), Contains("epsilon"));
    REQUIRE_THROWS_WITH(epsilon_from_rho_standard(bad, 1e-6), Contains("rho"));
    REQUIRE_THROWS_WITH(epsilon_from_rho_cks(bad, 1e-6), Contains("rho"));
    REQUIRE_THROWS_WITH(delta_from_rho_cks(bad, 1.0), Contains("rho"));
    REQUIRE_THROWS_WITH(gaussian_sigma_for_composition(bad, ok, 3, Calibration::tight), Contains("l2_sensitivity"));
  }
  // ε of a profile: ≥ 0 and finite.
  for (double bad : {-1.0, kNaN, kInf}) {
    REQUIRE_THROWS_WITH(analytic_gaussian_delta(1.0, 1.0, bad), Contains("epsilon"));
    REQUIRE_THROWS_WITH(delta_from_rho_cks(0.1, bad), Contains("epsilon"));
  }
  // δ = 0 cannot be met by a Gaussian or by a zCDP conversion.
  REQUIRE_THROWS_WITH(paper_gaussian_multiplier(pure), Contains("delta") && Contains("> 0"));
  REQUIRE_THROWS_WITH(paper_gaussian_sigma(1.0, EpsDelta(0.5, 0.0)), Contains("delta"));
  REQUIRE_THROWS_WITH(analytic_gaussian_sigma(1.0, pure), Contains("delta"));
  REQUIRE_THROWS_WITH(gaussian_sigma(1.0, pure, Calibration::tight), Contains("delta"));
  REQUIRE_THROWS_WITH(rho_for_budget(pure), Contains("delta"));
  REQUIRE_THROWS_WITH(gaussian_sigma_for_composition(1.0, pure, 3, Calibration::tight), Contains("delta"));
  REQUIRE_THROWS_WITH(gaussian_sigma_for_composition(1.0, EpsDelta(0.5, 0.0), 3, Calibration::paper),
                      Contains("delta"));
  for (double bad : {0.0, -1e-6, 1.0, 2.0, kNaN}) {
    REQUIRE_THROWS_WITH(epsilon_from_rho_standard(0.1, bad), Contains("delta"));
    REQUIRE_THROWS_WITH(epsilon_from_rho_cks(0.1, bad), Contains("delta"));
  }
  for (long bad : {0L, -3L}) {
    REQUIRE_THROWS_WITH(gaussian_sigma_for_composition(1.0, ok, bad, Calibration::tight), Contains("releases"));
  }
  REQUIRE_THROWS_AS(analytic_gaussian_sigma(0.0, ok), InvalidParameter);
  REQUIRE_THROWS_AS(epsilon_from_rho_cks(0.1, 0.0), InvalidParameter);
}

TEST_CASE("gdp shares: each share's mu is the derived one, they compose to the total, ~7% less noise",
          "[calibration][composition]") {
  for (const EpsDelta total : {EpsDelta(1.0, 1e-6), EpsDelta(0.3, 1e-5), EpsDelta(8.0, 1e-9)}) {
    // μ_total: the largest μ whose exact Gaussian profile is within the total (σ for Δ = 1).
    const double mu_total = 1.0 / analytic_gaussian_sigma(1.0, total);
    CHECK(gdp_mu_for_budget(total) == mu_total);
    for (const long shares : {1L, 2L, 3L, 20L, 1000L}) {
      INFO(total.to_string() << ", " << shares << " shares");
      const double mu_s = gdp_share_mu(total, shares);
      CHECK(mu_s == Approx(mu_total / std::sqrt(static_cast<double>(shares))).epsilon(1e-15));
      // The (ε_s, δ_s) target calibrates any Δ to σ ≥ Δ/μ_s (never more than the share), within the
      // bisections' ~1e-12 (not wasteful).
      const EpsDelta share = gdp_share_target(total, shares);
      const double sensitivity = 2.5;
      const double sigma = analytic_gaussian_sigma(sensitivity, share);
      CHECK(sensitivity / sigma <= mu_s * (1 + 1e-12));
      CHECK(sensitivity / sigma >= mu_s * (1 - 1e-9));
      // Composed under GDP: √(Σ μ_s²) = μ_total, within the total's ε at its δ (and not below it).
      const double composed = std::sqrt(static_cast<double>(shares)) * sensitivity / sigma;
      CHECK(epsilon_from_gdp(composed, total.delta()) <= total.epsilon() * (1 + 1e-9));
      CHECK(epsilon_from_gdp(composed, total.delta()) >= total.epsilon() * (1 - 1e-6));
      // Against the zCDP split: μ_zcdp/μ_gdp = √(2ρ)/μ_total, whatever the number of shares.
      const double mu_zcdp = std::sqrt(2.0 * rho_for_budget(total) / static_cast<double>(shares));
      CHECK(mu_zcdp / mu_s == Approx(std::sqrt(2.0 * rho_for_budget(total)) / mu_total).epsilon(1e-12));
    }
  }
  // The figures the split is for: at (1, 1e-6) the shares compose to μ = 0.2367 under GDP, against
  // √(2ρ) = 0.2207 for zCDP shares (any n): each share's σ 6.8% lower.
  const EpsDelta t(1.0, 1e-6);
  CHECK(gdp_mu_for_budget(t) == Approx(0.2367).margin(5e-5));
  CHECK(std::sqrt(2 * rho_for_budget(t)) == Approx(0.2207).margin(5e-5));
  CHECK(gdp_share_mu(t, 2) == Approx(0.2367 / std::sqrt(2.0)).margin(5e-5));
  CHECK(std::sqrt(2 * rho_for_budget(t)) / gdp_mu_for_budget(t) < 0.94);
  CHECK_THROWS_AS(gdp_share_mu(t, 0), InvalidParameter);
  CHECK_THROWS_AS(gdp_share_target(t, 0), InvalidParameter);
}

TEST_CASE("epsilon_from_gdp inverts the Gaussian profile, rounded up", "[calibration]") {
  for (const double mu : {0.05, 0.3, 1.0, 4.0}) {
    for (const double delta : {1e-9, 1e-6, 1e-3}) {
      INFO("mu " << mu << ", delta " << delta);
      const double eps = epsilon_from_gdp(mu, delta);
      CHECK(analytic_gaussian_delta(1.0, 1.0 / mu, eps) <= delta);
      if (eps > 0) CHECK(analytic_gaussian_delta(1.0, 1.0 / mu, eps * (1 - 1e-9)) > delta);
    }
  }
  CHECK(epsilon_from_gdp(1e-3, 0.5) == 0.0);  // δ(0) below 0.5: (0, δ)-DP
  CHECK_THROWS_AS(epsilon_from_gdp(0.0, 1e-6), InvalidParameter);
  CHECK_THROWS_AS(epsilon_from_gdp(1.0, 0.0), InvalidParameter);
}

TEST_CASE("zcdp_share_target: shares calibrated alone compose within the total", "[calibration][composition]") {
  for (const EpsDelta total : {EpsDelta(1.0, 1e-6), EpsDelta(0.3, 1e-5), EpsDelta(8.0, 1e-9)}) {
    for (const long shares : {1L, 3L, 20L, 1000L}) {
      INFO(total.to_string() << ", " << shares << " shares");
      const EpsDelta share = zcdp_share_target(total, shares);
      const double delta_sens = 2.5;  // any Δ: the share is a point on a GDP profile
      const double sigma = analytic_gaussian_sigma(delta_sens, share);
      const double rho_share = rho_for_budget(total) / static_cast<double>(shares);
      // σ ≥ Δ/√(2ρ_s) (never more than the share), and within the bisections' 1e-12 of it (not wasteful).
      CHECK(gaussian_rho(delta_sens, sigma) <= rho_share * (1 + 1e-12));
      CHECK(gaussian_rho(delta_sens, sigma) >= rho_share * (1 - 1e-9));
      // All shares composed by the accountant's bound: the total's ε at its δ.
      CHECK(epsilon_from_rho_cks(static_cast<double>(shares) * gaussian_rho(delta_sens, sigma), total.delta()) <=
            total.epsilon() * (1 + 1e-9));
    }
  }
  // A single share is the whole budget's ρ; its (ε_s, δ_s) lies on the profile of μ = √(2ρ).
  const EpsDelta one = zcdp_share_target(EpsDelta(1.0, 1e-6), 1);
  CHECK(one.delta() == 1e-6);
  CHECK(analytic_gaussian_delta(1.0, 1.0 / std::sqrt(2 * rho_for_budget(EpsDelta(1.0, 1e-6))), one.epsilon()) ==
        Approx(1e-6).epsilon(1e-6));
  CHECK_THROWS_AS(zcdp_share_target(EpsDelta(1.0, 1e-6), 0), InvalidParameter);
}

}  // namespace test_calibration
