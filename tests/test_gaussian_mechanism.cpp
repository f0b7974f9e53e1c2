#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/gaussian_mechanism.hpp"
#include "stat_helpers.hpp"
#include "unaccounted.hpp"

namespace test_gaussian_mechanism {

using namespace dpstream::privacy;
using dpstream::BudgetExhausted;
using dpstream::InvalidParameter;
using Catch::Matchers::Contains;

TEST_CASE("Gaussian mechanism takes σ from the calibration") {
  const EpsDelta target(0.5, 1e-6);
  REQUIRE(GaussianMechanism(2.0, target, Calibration::paper).sigma() ==
          paper_gaussian_sigma(2.0, target));
  REQUIRE(GaussianMechanism(2.0, target).sigma() == analytic_gaussian_sigma(2.0, target));
  // tight is the default and never noisier than paper where paper is defined.
  REQUIRE(GaussianMechanism(2.0, target).sigma() < GaussianMechanism(2.0, target, Calibration::paper).sigma());
  REQUIRE_THROWS_WITH(GaussianMechanism(1.0, EpsDelta(1.0, 1e-6), Calibration::paper), Contains("epsilon"));
  REQUIRE(GaussianMechanism(1.0, EpsDelta(3.0, 1e-6)).sigma() > 0);
  REQUIRE_THROWS_WITH(GaussianMechanism(0.0, target), Contains("sensitivity"));
  REQUIRE_THROWS_WITH(GaussianMechanism::with_sigma(1.0, -1.0), Contains("sigma"));
}

TEST_CASE("Gaussian mechanism noise matches N(0, σ²)") {
  // 2·10⁵ seeded releases of the value 3.0. Tolerances: mean within 5 standard errors σ/√N;
  // sample variance within 5·σ²·√(2/(N−1)) (its standard error for normal data); KS p-value above
  // 1e-4 on this fixed seed (a false failure would need a 1-in-10⁴ draw).
  const GaussianMechanism mech(1.0, EpsDelta(0.5, 1e-6));
  const double sigma = mech.sigma();
  SeededNoiseSource noise(20261122);
  const std::size_t n = 200000;
  std::vector<double> z(n);
  for (std::size_t i = 0; i < n; ++i) z[i] = (mech.release(3.0, noise, test_budget::unaccounted()) - 3.0) / sigma;
  const auto m = dpstream::testing::moments(z);
  REQUIRE(std::abs(m.mean) < 5.0 / std::sqrt(double(n)));
  REQUIRE(std::abs(m.variance - 1.0) < 5.0 * std::sqrt(2.0 / (n - 1)));
  const double d = dpstream::testing::ks_statistic(z, dpstream::testing::normal_cdf);
  REQUIRE(dpstream::testing::ks_p_value(d, n) > 1e-4);
}

TEST_CASE("Gaussian mechanism noises every coordinate independently") {
  // Vector release: per-coordinate variance and the correlation of two coordinates over T draws.
  // |corr| of independent normals has standard error 1/√T; 5/√T is the band.
  const auto mech = GaussianMechanism::with_sigma(1.0, 2.0);
  SeededNoiseSource noise(7);
  const int T = 20000;
  Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(4, -1.0, 1.0);
  Eigen::MatrixXd draws(T, 4);
  for (int t = 0; t < T; ++t) draws.row(t) = (mech.release(x, noise, test_budget::unaccounted()) - x).transpose() / 2.0;
  const Eigen::RowVectorXd mean = draws.colwise().mean();
  const Eigen::MatrixXd centred = draws.rowwise() - mean;
  const Eigen::MatrixXd cov = centred.transpose() * centred / (T - 1);
  for (int i = 0; i < 4; ++i) {
    REQUIRE(std::abs(cov(i, i) - 1.0) < 5.0 * std::sqrt(2.0 / (T - 1)));
    for (int j = 0; j < i; ++j) REQUIRE(std::abs(cov(i, j)) < 5.0 / std::sqrt(double(T)));
  }
}

TEST_CASE("Gaussian mechanism charges the accountant and refuses past the budget before drawing") {
  const EpsDelta single(0.5, 1e-7);
  const GaussianMechanism mech(1.0, single);
  PrivacyAccountant accountant(EpsDelta(1.0, 1e-6));
  SeededNoiseSource noise(1), twin(1);
  int released = 0;
  for (;;) {
    try {
      mech.release(0.0, noise, accountant, "query");
      (void)twin.gaussian();  // keep the twin in step: one Gaussian per release
      ++released;
    } catch (const BudgetExhausted& e) {
      REQUIRE_THAT(e.what(), Contains("query"));
      break;
    }
    REQUIRE(released < 1000);
  }
  // Basic composition allows two releases (ε = 0.5 each); zCDP with the CKS conversion three
  // (σ = 8.9957, ρ = 0.0061788 each: 3ρ → ε = 0.864 at δ = 1e-6, 4ρ → 1.008); every charge being
  // Gaussian, the GDP bound allows four: μ = √4/σ = 0.2223 → ε = 0.935 on the exact profile at
  // δ = 1e-6, but not five (μ = 0.2486 → ε = 1.054).
  REQUIRE(released == 4);
  REQUIRE(accountant.ledger().size() == std::size_t(released));
  REQUIRE(accountant.spent().epsilon <= 1.0 + 1e-9);
  REQUIRE(noise.next_word() == twin.next_word());  // the refused release drew no noise
}

TEST_CASE("with_sigma reports the analytic guarantee") {
  const auto mech = GaussianMechanism::with_sigma(1.0, 4.0);
  const EpsDelta g = mech.guarantee(1e-6);
  REQUIRE(analytic_gaussian_delta(1.0, 4.0, g.epsilon()) == Approx(1e-6).epsilon(1e-6));
  REQUIRE(mech.rho() == Approx(1.0 / 32.0));
}

TEST_CASE("Gaussian mechanism rejects non-finite values") {
  const GaussianMechanism mech(1.0, EpsDelta(0.5, 1e-6));
  SeededNoiseSource noise(3);
  Eigen::VectorXd v(2);
  v << 1.0, std::nan("");
  REQUIRE_THROWS_WITH(mech.release(v, noise, test_budget::unaccounted()), Contains("value[1]"));
}

}  // namespace test_gaussian_mechanism
