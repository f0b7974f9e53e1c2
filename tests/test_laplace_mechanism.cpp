// The Laplace mechanism: b = Δ₁/ε, variance 2b², pure-ε accounting, snapping (as stated in
// Gowtham, Gokularam, Tholeti & Kalyani, "Introducing the Huber mechanism for differentially private
// low-rank matrix completion", arXiv 2022, §2.1).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/laplace_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/snap.hpp"
#include "stat_helpers.hpp"
#include "unaccounted.hpp"

namespace test_laplace_mechanism {

using namespace dpstream::privacy;
using dpstream::BudgetExhausted;
using dpstream::InvalidParameter;
using Catch::Matchers::Contains;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Laplace(b) CDF: ½e^{x/b} for x ≤ 0, 1 − ½e^{−x/b} beyond.
double laplace_cdf(double x, double b) { return x <= 0 ? 0.5 * std::exp(x / b) : 1.0 - 0.5 * std::exp(-x / b); }
}  // namespace

TEST_CASE("Laplace mechanism: b = Δ₁/ε and variance 2b²") {
  const LaplaceMechanism mech(3.0, 1.5);
  REQUIRE(mech.scale() == 2.0);
  REQUIRE(mech.epsilon() == 1.5);
  REQUIRE(mech.l1_sensitivity() == 3.0);
  REQUIRE(mech.variance() == 8.0);
}

TEST_CASE("Laplace Table 1 regression") {
  // Δf = 5, variance v: b = √(v/2), ε = 5/b. Printed to 4 decimals: half a unit in the last digit.
  const double expected[] = {7.0711, 5.0000, 4.0825, 3.5355};
  for (int v = 1; v <= 4; ++v) {
    INFO("v = " << v);
    const double epsilon = 5.0 / std::sqrt(v / 2.0);
    REQUIRE(std::abs(epsilon - expected[v - 1]) < 5e-5);
    REQUIRE(LaplaceMechanism(5.0, epsilon).variance() == Approx(double(v)).epsilon(1e-14));
  }
}

TEST_CASE("Laplace mechanism noise matches Laplace(b) (statistics)") {
  // 10⁶ seeded releases of −2.5 with b = 2. Noise r = released − value.
  //  * mean within 5 SE, SE = √(2b²/n);
  //  * variance within 5 SE, SE of the sample variance = √((μ4 − σ⁴)/n) with μ4 = 24b⁴, σ⁴ = 4b⁴;
  //  * KS against the Laplace(b) CDF: asymptotic p > 1e-3 on this fixed seed.
  // Snapping (grid ≤ 2^-39 b) moves each value by < 1e-12 b, far below these bands.
  const LaplaceMechanism mech(3.0, 1.5);
  const double b = mech.scale();
  SeededNoiseSource noise(31337);
  const std::size_t n = 1000000;
  const double value = -2.5;
  std::vector<double> r(n);
  for (auto& x : r) x = mech.release(value, noise, test_budget::unaccounted()) - value;
  const auto m = dpstream::testing::moments(r);
  REQUIRE(std::abs(m.mean) < 5.0 * std::sqrt(2.0 * b * b / n));
  REQUIRE(std::abs(m.variance - 2.0 * b * b) < 5.0 * std::sqrt(20.0 * b * b * b * b / n));
  const double d = dpstream::testing::ks_statistic(r, [&](double x) { return laplace_cdf(x, b); });
  REQUIRE(dpstream::testing::ks_p_value(d, n) > 1e-3);
}

TEST_CASE("Laplace mechanism snaps releases to the grid at scale b") {
  const LaplaceMechanism mech(1.0, 3.0);
  const double grid = snap_granularity(mech.scale());
  SeededNoiseSource noise(5);
  Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(16, -3.3, 7.1);
  mech.add_noise(x, noise, test_budget::unaccounted());
  for (Eigen::Index i = 0; i < x.size(); ++i) REQUIRE(x[i] / grid == std::nearbyint(x[i] / grid));
}

TEST_CASE("Laplace mechanism charges pure ε per release, before drawing") {
  const LaplaceMechanism mech(1.0, 0.5);
  PrivacyAccountant accountant(EpsDelta(1.0, 0.0));  // two releases (basic composition at δ = 0)
  SeededNoiseSource noise(8), twin(8);               // twin: same stream, to see whether noise was drawn
  Eigen::VectorXd v = Eigen::VectorXd::Constant(3, 2.0);
  for (int k = 0; k < 2; ++k) {
    mech.add_noise(v, noise, accountant, "counts");
    Eigen::VectorXd mirror = v;
    mech.add_noise(mirror, twin, test_budget::unaccounted());  // the same draws, uncharged
  }
  REQUIRE(accountant.ledger().size() == 2);
  for (const Charge& c : accountant.ledger()) {
    REQUIRE(c.label == "counts");
    REQUIRE(c.epsilon == 0.5);
    REQUIRE(c.delta == 0.0);
    REQUIRE(c.rho.has_value());
    REQUIRE(*c.rho == Approx(0.125).epsilon(1e-15));  // ρ = ε²/2
  }
  const Eigen::VectorXd before = v;
  REQUIRE_THROWS_AS(mech.add_noise(v, noise, accountant), BudgetExhausted);
  REQUIRE_THROWS_AS(mech.release(1.0, noise, accountant), BudgetExhausted);
  REQUIRE(v == before);
  REQUIRE(accountant.ledger().size() == 2);
  REQUIRE(noise.next_word() == twin.next_word());

  PrivacyAccountant fresh(EpsDelta(10.0, 0.0));
  REQUIRE_THROWS_WITH(mech.release(kInf, noise, fresh), Contains("value"));
  REQUIRE(fresh.ledger().empty());
}

TEST_CASE("Laplace bad parameters name themselves") {
  for (double bad : {0.0, -1.0, kNaN, kInf}) {
    INFO("bad = " << bad);
    REQUIRE_THROWS_AS(LaplaceMechanism(bad, 1.0), InvalidParameter);
    REQUIRE_THROWS_WITH(LaplaceMechanism(bad, 1.0), Contains("l1_sensitivity"));
    REQUIRE_THROWS_WITH(LaplaceMechanism(1.0, bad), Contains("epsilon"));
  }
  REQUIRE_THROWS_WITH(LaplaceMechanism(1e300, 1e-300), Contains("scale b"));   // b overflows
  REQUIRE_THROWS_WITH(LaplaceMechanism(1e-300, 1e300), Contains("scale b"));   // b underflows to 0
}

}  // namespace test_laplace_mechanism
