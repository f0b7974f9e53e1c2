// Checks of Algorithm 1 of Dwork, Talwar, Thakurta & Zhang, "Analyze Gauss: Optimal Bounds for
// Privacy-Preserving Principal Component Analysis" (STOC 2014): calibration, sensitivity, noise
// structure and spectral norm.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>


#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "stat_helpers.hpp"
#include "unaccounted.hpp"

namespace test_symmetric_gaussian {

using namespace dpstream::privacy;
using dpstream::InvalidParameter;
using Catch::Matchers::Contains;

namespace {
SymmetricGaussianMechanism make(SymmetricNoiseShape shape, Calibration calibration = Calibration::paper,
                                EpsDelta target = EpsDelta(0.5, 1e-6)) {
  SymmetricGaussianMechanism::Options o;
  o.privacy.target = target;
  o.privacy.calibration = calibration;
  o.shape = shape;
  return SymmetricGaussianMechanism(o);
}

// ‖u(aaᵀ)‖₂ over the upper triangle, diagonal included.
double upper_norm(const Eigen::MatrixXd& m) {
  double s = 0;
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i <= j; ++i) s += m(i, j) * m(i, j);
  return std::sqrt(s);
}

double spectral_norm(const Eigen::MatrixXd& e) {
  dpstream::linalg::SymmetricEigenSolver es(e, Eigen::EigenvaluesOnly);
  return es.eigenvalues().cwiseAbs().maxCoeff();
}
}  // namespace

TEST_CASE("the paper calibration reproduces Δ_{ε,δ}") {
  // Δ(0.5, 1e-6) = 10.5976 (Δ_{ε,δ} = √(2 ln(1.25/δ))/ε, §2), sensitivity 1.
  REQUIRE(make(SymmetricNoiseShape::paper_symmetric).sigma() == Approx(10.5976).margin(1e-4));
  REQUIRE(make(SymmetricNoiseShape::paper_symmetric).sensitivity() == 1.0);
  // tight: analytic Gaussian, smaller.
  REQUIRE(make(SymmetricNoiseShape::paper_symmetric, Calibration::tight).sigma() <
          make(SymmetricNoiseShape::paper_symmetric).sigma());
}

TEST_CASE("sensitivity of the upper triangle") {
  // Random unit rows: ‖u(aaᵀ)‖ = √((‖a‖⁴ + ‖a‖₄⁴)/2) ≤ 1; equality for basis vectors; replace-one √2.
  Eigen::VectorXd a(6);
  std::srand(5);
  for (int trial = 0; trial < 200; ++trial) {
    a.setRandom();
    a.normalize();
    const double expected = std::sqrt((1.0 + a.array().pow(4).sum()) / 2.0);
    REQUIRE(upper_norm(a * a.transpose()) == Approx(expected).epsilon(1e-12));
    REQUIRE(upper_norm(a * a.transpose()) <= 1.0 + 1e-15);
  }
  const Eigen::VectorXd e1 = Eigen::VectorXd::Unit(6, 0), e2 = Eigen::VectorXd::Unit(6, 1);
  REQUIRE(upper_norm(e1 * e1.transpose()) == 1.0);
  REQUIRE(upper_norm(e1 * e1.transpose() - e2 * e2.transpose()) == Approx(std::sqrt(2.0)));
  REQUIRE(covariance_sensitivity(Neighbours::add_remove_row, 1.0) == 1.0);
  REQUIRE(covariance_sensitivity(Neighbours::replace_row, 1.0) == Approx(std::sqrt(2.0)));
  REQUIRE(covariance_sensitivity(Neighbours::add_remove_row, 3.0) == 9.0);
  REQUIRE_THROWS_WITH(covariance_sensitivity(Neighbours::add_remove_row, 0.0), Contains("row_norm_bound"));

  // The replace relation multiplies σ by √2 at the same target.
  SymmetricGaussianMechanism::Options o;
  o.privacy.target = EpsDelta(0.5, 1e-6);
  o.privacy.calibration = Calibration::paper;
  o.privacy.relation = Neighbours::replace_row;
  REQUIRE(SymmetricGaussianMechanism(o).sigma() ==
          Approx(std::sqrt(2.0) * make(SymmetricNoiseShape::paper_symmetric).sigma()));
}

TEST_CASE("noise structure: symmetric, per-entry variance, uncorrelated, normal") {
  for (auto shape : {SymmetricNoiseShape::paper_symmetric, SymmetricNoiseShape::goe}) {
    const auto mech = make(shape);
    const double s2 = mech.sigma() * mech.sigma();
    SeededNoiseSource noise(shape == SymmetricNoiseShape::goe ? 11 : 12);
    const int n = 8, T = 6000;
    std::vector<Eigen::MatrixXd> draws;
    draws.reserve(T);
    double frob = 0;
    for (int t = 0; t < T; ++t) {
      draws.push_back(mech.sample_noise(n, noise));
      REQUIRE(draws.back() == draws.back().transpose());  // bitwise
      frob += draws.back().squaredNorm();
    }
    // Per-entry variance / σ² over T draws: standard error √(2/(T−1)) for normal data; 5 SE band.
    // 36 entries at 5 SE: family-wise false-alarm rate < 36 · 6e-7.
    std::vector<double> pooled;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i <= j; ++i) {
        std::vector<double> x(T);
        for (int t = 0; t < T; ++t) x[t] = draws[t](i, j);
        const auto m = dpstream::testing::moments(x);
        const double expected = mech.entry_variance(i, j);
        REQUIRE(std::abs(m.variance / expected - 1.0) < 5.0 * std::sqrt(2.0 / (T - 1)));
        REQUIRE(std::abs(m.mean) < 5.0 * std::sqrt(expected / T));
        for (double v : x) pooled.push_back(v / std::sqrt(expected));
      }
    // Diagonal always σ²; off-diagonal σ² (Algorithm 1) or σ²/2 (GOE-shaped).
    REQUIRE(mech.entry_variance(0, 0) == s2);
    REQUIRE(mech.entry_variance(0, 1) == (shape == SymmetricNoiseShape::goe ? s2 / 2 : s2));
    // Correlation of distinct upper entries: standard error 1/√T, 5 SE band.
    const std::vector<std::pair<int, int>> a = {{0, 0}, {0, 1}, {2, 5}, {7, 7}};
    for (std::size_t p = 0; p < a.size(); ++p)
      for (std::size_t q = p + 1; q < a.size(); ++q) {
        double sxy = 0, sxx = 0, syy = 0;
        for (int t = 0; t < T; ++t) {
          const double x = draws[t](a[p].first, a[p].second), y = draws[t](a[q].first, a[q].second);
          sxy += x * y; sxx += x * x; syy += y * y;
        }
        REQUIRE(std::abs(sxy / std::sqrt(sxx * syy)) < 5.0 / std::sqrt(double(T)));
      }
    // Pooled standardized entries are N(0,1): KS on 216 000 values, p > 1e-4 on this seed.
    const double d = dpstream::testing::ks_statistic(pooled, dpstream::testing::normal_cdf);
    REQUIRE(dpstream::testing::ks_p_value(d, pooled.size()) > 1e-4);
    // E‖E‖_F² = n²σ² (Algorithm 1) or nσ² + n(n−1)σ²/2 (GOE). In units of σ², ‖E‖_F² is
    //   Algorithm 1: Σ_diag z² + 2Σ_off z²  → variance 2n + 8·n(n−1)/2;
    //   GOE:         Σ_diag z² + Σ_off z²   → variance 2n + 2·n(n−1)/2;
    // so the mean over T draws has standard error √(variance/T); the band is 5 of them.
    const bool goe = shape == SymmetricNoiseShape::goe;
    const double pairs = n * (n - 1) / 2.0;
    const double frob_mean = goe ? n + pairs : double(n) * n;
    const double frob_var = 2.0 * n + (goe ? 2.0 : 8.0) * pairs;
    REQUIRE(std::abs(frob / s2 / T - frob_mean) < 5.0 * std::sqrt(frob_var / T));
  }
}

TEST_CASE("spectral norm bands of the Algorithm 1 noise") {
  // Mean of ‖E‖₂/(σ√n) over 500 draws: reference bands [1.70, 1.81] at n = 10, [1.90, 1.96] at n = 50,
  // [1.94, 1.99] at n = 100 (simulated means 1.756, 1.932, 1.964 with sds 0.208, 0.078, 0.052:
  // each band is ≥ 5 standard errors of a 500-draw mean wide on either side).
  const auto mech = make(SymmetricNoiseShape::paper_symmetric);
  const double s = mech.sigma();
  SeededNoiseSource noise(93);
  struct Band { int n; double lo, hi; };
  double previous = 0;
  for (const Band b : {Band{10, 1.70, 1.81}, Band{50, 1.90, 1.96}, Band{100, 1.94, 1.99}}) {
    const int draws = 500;
    double sum = 0;
    // Single draws stay below σ(2√n + 2√(ln(2/p))) except w.p. about p (Lipschitz concentration); p = 1e-9 here.
    const double single_bound = s * (2 * std::sqrt(double(b.n)) + 2 * std::sqrt(std::log(2 / 1e-9)));
    for (int t = 0; t < draws; ++t) {
      const double norm = spectral_norm(mech.sample_noise(b.n, noise));
      REQUIRE(norm < single_bound);
      sum += norm / (s * std::sqrt(double(b.n)));
    }
    const double mean = sum / draws;
    INFO("n = " << b.n << ", mean ||E||/(sigma sqrt n) = " << mean);
    REQUIRE(mean >= b.lo);
    REQUIRE(mean <= b.hi);
    REQUIRE(mean > previous);  // monotone toward 2
    previous = mean;
  }
}

TEST_CASE("GOE-shaped noise cuts the spectral norm by about √2") {
  // A reference simulation: at n = 50 the GOE shape gives ‖E‖₂/(σ√n) ≈ 1.381 (sim) against 1.932. Over 300 draws
  // the mean's standard error is ≈ 0.055/√300 = 0.003; the band [1.35, 1.41] is ±10 SE around 1.381.
  const auto goe = make(SymmetricNoiseShape::goe);
  SeededNoiseSource noise(94);
  double sum = 0;
  for (int t = 0; t < 300; ++t) sum += spectral_norm(goe.sample_noise(50, noise)) / (goe.sigma() * std::sqrt(50.0));
  const double mean = sum / 300;
  INFO("GOE mean = " << mean);
  REQUIRE(mean > 1.35);
  REQUIRE(mean < 1.41);
}

TEST_CASE("neighbours A and A + e₁ differ only in C₁₁, and release validates input") {
  const auto mech = make(SymmetricNoiseShape::paper_symmetric);
  Eigen::MatrixXd a = Eigen::MatrixXd::Random(30, 5) / 10.0;
  Eigen::MatrixXd a_plus(31, 5);
  a_plus << a, Eigen::RowVectorXd::Unit(5, 0);
  const Eigen::MatrixXd diff = a_plus.transpose() * a_plus - a.transpose() * a;
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(5, 5);
  expected(0, 0) = 1.0;
  REQUIRE((diff - expected).cwiseAbs().maxCoeff() < 1e-14);

  SeededNoiseSource noise(5);
  const Eigen::MatrixXd c = a.transpose() * a;
  const Eigen::MatrixXd symmetric_c = (c + c.transpose()) / 2;
  const Eigen::MatrixXd released = mech.release(symmetric_c, noise, test_budget::unaccounted());
  REQUIRE(released == released.transpose());
  REQUIRE_THROWS_WITH(mech.release(Eigen::MatrixXd::Zero(2, 3), noise, test_budget::unaccounted()), Contains("square"));
  Eigen::MatrixXd asym = Eigen::MatrixXd::Zero(3, 3);
  asym(0, 1) = 1.0;
  REQUIRE_THROWS_WITH(mech.release(asym, noise, test_budget::unaccounted()), Contains("not symmetric"));
  Eigen::MatrixXd nan = Eigen::MatrixXd::Zero(3, 3);
  nan(2, 2) = std::nan("");
  REQUIRE_THROWS_WITH(mech.release(nan, noise, test_budget::unaccounted()), Contains("not finite"));
  REQUIRE_THROWS_WITH(mech.sample_noise(0, noise), Contains("dimension"));
}

TEST_CASE("covariance release charges one Gaussian release") {
  const auto mech = make(SymmetricNoiseShape::paper_symmetric, Calibration::tight, EpsDelta(0.9, 1e-7));
  PrivacyAccountant accountant(EpsDelta(1.0, 1e-6));
  SeededNoiseSource noise(6);
  mech.release(Eigen::MatrixXd::Identity(4, 4), noise, accountant, "C_hat");
  REQUIRE(accountant.ledger().size() == 1);
  REQUIRE(accountant.ledger()[0].label == "C_hat");
  REQUIRE(accountant.ledger()[0].rho.value() == Approx(gaussian_rho(1.0, mech.sigma())));
  REQUIRE_THROWS_AS(mech.release(Eigen::MatrixXd::Identity(4, 4), noise, accountant, "again"),
                    dpstream::BudgetExhausted);
}

TEST_CASE("parse_symmetric_noise_shape: the tools' spelling (paper, goe), paper_symmetric too; other names refused") {
  for (const SymmetricNoiseShape shape : {SymmetricNoiseShape::paper_symmetric, SymmetricNoiseShape::goe})
    CHECK(parse_symmetric_noise_shape(to_string(shape)) == shape);
  CHECK(std::string(to_string(SymmetricNoiseShape::paper_symmetric)) == "paper");
  CHECK(std::string(to_string(SymmetricNoiseShape::goe)) == "goe");
  CHECK(parse_symmetric_noise_shape("paper_symmetric") == SymmetricNoiseShape::paper_symmetric);
  CHECK_THROWS_AS(parse_symmetric_noise_shape("GOE"), InvalidParameter);
  CHECK_THROWS_WITH(parse_symmetric_noise_shape("GOE"), Contains("noise shape 'GOE': expected paper or goe"));
}

}  // namespace test_symmetric_gaussian
