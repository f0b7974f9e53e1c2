// Tests of the audit method itself (clopper_pearson.hpp, epsilon_audit.hpp), on distributions whose
// privacy profile is known exactly, without any dpstream mechanism in between.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <Eigen/Core>

#include "dpstream/privacy/noise_source.hpp"
#include "epsilon_audit.hpp"

namespace audit_method {

using dpstream::audit::clopper_pearson_lower;
using dpstream::audit::clopper_pearson_upper;
using dpstream::audit::gdp_epsilon;
using dpstream::audit::run_audit;
using dpstream::privacy::SeededNoiseSource;

namespace {

// What the bound reaches on average for N(0, 1) against N(μ, 1) with n evaluation trials a side: the
// best threshold set's Clopper–Pearson bound evaluated at the expected counts (the audit picks its
// set on other trials, so it reaches a little less).
double expected_gaussian_bound(double mu, double delta, long n) {
  auto q = [](double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); };
  double best = -1e300;
  for (double tau = -3.0; tau <= 8.0; tau += 0.01) {
    const auto k0 = static_cast<std::int64_t>(std::llround(static_cast<double>(n) * q(tau)));
    const auto k1 = static_cast<std::int64_t>(std::llround(static_cast<double>(n) * q(tau - mu)));
    best = std::max(best, dpstream::audit::detail::bound(k1, n, k0, n, delta, dpstream::audit::kAuditAlpha));
  }
  return best;
}

}  // namespace

TEST_CASE("Clopper-Pearson bounds match their closed forms", "[audit][method]") {
  // k = 0: upper = 1 − a^{1/n}; k = n: lower = a^{1/n} (the beta quantiles reduce to powers).
  CHECK(clopper_pearson_upper(0, 10, 0.05) == Approx(1.0 - std::pow(0.05, 0.1)).epsilon(1e-12));
  CHECK(clopper_pearson_lower(10, 10, 0.05) == Approx(std::pow(0.05, 0.1)).epsilon(1e-12));
  CHECK(clopper_pearson_upper(10, 10, 0.05) == 1.0);
  CHECK(clopper_pearson_lower(0, 10, 0.05) == 0.0);
  // Symmetry: lower(k, n) = 1 − upper(n − k, n).
  CHECK(clopper_pearson_lower(37, 100, 1e-3) == Approx(1.0 - clopper_pearson_upper(63, 100, 1e-3)).epsilon(1e-12));
  // Bracketing the estimate.
  CHECK(clopper_pearson_lower(300, 1000, 1e-4) < 0.3);
  CHECK(clopper_pearson_upper(300, 1000, 1e-4) > 0.3);
}

TEST_CASE("the audit's bound is valid and tight on an exact Gaussian shift", "[audit][method]") {
  // N(0, 1) against N(μ, 1) is exactly μ-GDP: the bound must stay below gdp_epsilon(μ, δ) and come
  // close to what 75000 evaluated trials can show (expected_gaussian_bound): the bound's spread over
  // seeds is ≈ 0.03 at μ ≤ 1 and ≈ 0.08 at μ = 2 (the set's probabilities are ~1e-3 there), so 0.25
  // below the expectation is > 3 spreads, while a bound that lost its power would miss it.
  for (const double mu : {0.5, 1.0, 2.0}) {
    const double claimed = gdp_epsilon(mu, 0.1);
    const auto result = run_audit("method: exact gaussian shift mu=" + std::to_string(mu), 901 + static_cast<int>(4 * mu),
                                  100000, 0.1, claimed, [mu](bool neighbour, std::uint64_t seed) {
                                    SeededNoiseSource noise(seed);
                                    return Eigen::VectorXd::Constant(1, noise.gaussian() + (neighbour ? mu : 0.0));
                                  });
    CHECK(result.epsilon_lb <= claimed);
    const double expected = expected_gaussian_bound(mu, 0.1, 75000);
    INFO("expected bound " << expected);
    CHECK(expected <= claimed);
    CHECK(result.epsilon_lb > expected - 0.25);
  }
}

TEST_CASE("the audit finds nothing between identical distributions", "[audit][method]") {
  // Identical laws: every set has p₀ = p₁, so ln((p₁ − δ)/p₀) < 0 with high probability.
  const auto result = run_audit("method: identical distributions", 910, 20000, 0.1, 0.0,
                                [](bool, std::uint64_t seed) {
                                  SeededNoiseSource noise(seed);
                                  Eigen::VectorXd f(3);
                                  for (Eigen::Index i = 0; i < 3; ++i) f(i) = noise.gaussian();
                                  return f;
                                });
  CHECK(result.epsilon_lb <= 0.0);
}

}  // namespace audit_method
