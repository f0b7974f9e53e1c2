// Private Oja (pca/private_oja.hpp) of Jain, Thakkar & Thakurta, "Differentially private matrix
// completion revisited" (ICML 2018), §3.2, Algorithm 2: σ pins for both calibrations, the option and
// row checks, the per-step noise against N(0, σ²), the wiring of the update, the Rayleigh gap on a
// rank-one rating-like matrix against a reference prototype's table and Thm 3.3's bound, the
// sparse path at n = 10⁵ in bounded memory and against the dense path, accounting and reproducibility.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "stat_helpers.hpp"
#include "unaccounted.hpp"

namespace test_private_oja {

using namespace dpstream;
using namespace dpstream::pca;
using Catch::Matchers::Contains;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using privacy::Calibration;
using privacy::EpsDelta;
using SparseRows = Eigen::SparseMatrix<double, Eigen::RowMajor>;

namespace {

PrivateOjaOptions options_with(int iterations, double row_norm_bound, EpsDelta target, Calibration calibration,
                               std::uint64_t seed) {
  PrivateOjaOptions o;
  o.iterations = iterations;
  o.privacy.row_norm_bound = row_norm_bound;
  o.privacy.target = target;
  o.privacy.calibration = calibration;
  o.privacy.noise.seed = seed;
  return o;
}

// The rank-one rating-like matrix of the paper's synthetic set (§4): u ∈ ℝ^m, v ∈ ℝ^n i.i.d.
// U[−1, 1], each divided by its max-abs (‖Y*‖_∞ = 1); each user rates `per_user` distinct items chosen uniformly; A_ij = u_i v_j on them.
// Rows have ‖a‖ ≤ √per_user. Drawn from a SeededNoiseSource (portable, unlike <random>'s distributions).
SparseRows rating_matrix(Index users, Index items, int per_user, std::uint64_t seed) {
  privacy::SeededNoiseSource rng(seed);
  auto uniform_pm1 = [&] { return 2.0 * rng.uniform_open() - 1.0; };
  VectorXd u(users), v(items);
  for (Index i = 0; i < users; ++i) u(i) = uniform_pm1();
  for (Index j = 0; j < items; ++j) v(j) = uniform_pm1();
  u /= u.cwiseAbs().maxCoeff();
  v /= v.cwiseAbs().maxCoeff();
  SparseRows a(users, items);
  a.reserve(Eigen::VectorXi::Constant(users, per_user));
  std::vector<int> order(static_cast<std::size_t>(items));
  std::iota(order.begin(), order.end(), 0);
  for (Index i = 0; i < users; ++i) {
    // Partial Fisher–Yates: the first per_user entries of `order` are a uniform sample.
    for (int k = 0; k < per_user; ++k) {
      const auto pick = k + static_cast<Index>(rng.uniform_open() * static_cast<double>(items - k));
      std::swap(order[static_cast<std::size_t>(k)], order[static_cast<std::size_t>(pick)]);
    }
    std::vector<int> chosen(order.begin(), order.begin() + per_user);
    std::sort(chosen.begin(), chosen.end());
    for (int j : chosen) a.insert(i, j) = u(i) * v(j);
  }
  a.makeCompressed();
  return a;
}

// ‖A‖₂² = λ_max(AᵀA), exactly (n small).
double top_eigenvalue(const SparseRows& a) {
  const MatrixXd gram = MatrixXd(SparseRows(a.transpose()) * a);
  return linalg::SymmetricEigenSolver(gram, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
}

double squared_image_norm(const SparseRows& a, const VectorXd& v) { return (a * v).squaredNorm(); }

long peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024L;  // Linux reports kilobytes
}

}  // namespace

// ---- σ pins, option and row checks ---------------------------------------------------------------

TEST_CASE("Oja sigma pins: paper as printed, tight = analytic Gaussian over Gamma+1 releases", "[oja][calibration]") {
  // paper: σ = L²·√(256·Γ·ln(2/δ))/ε. Hand values (ln(2e6) = 14.508658):
  //   L = 1, Γ = 1, (1, 1e-6):    √(256 · 14.508658)            = 16 · 3.809023 = 60.94437
  //   L² = 20, Γ = 10, ε = 1:     20·√(2560 · 14.508658)        = 20 · 192.7230 = 3854.460
  //   L² = 20, Γ = 100, ε = 5:    20·√(25600 · 14.508658)/5     = 4 · 609.4437  = 2437.775
  // (σ_Oja/σ_FW = √(256Γ ln(2/δ))/√(64 ln(1/δ)) ≈ 2.05√Γ; 2·√(14.508658/13.815511) = 2.0495.)
  CHECK(paper_oja_sigma(1.0, 1, EpsDelta(1.0, 1e-6)) == Approx(60.94437).epsilon(1e-6));
  CHECK(paper_oja_sigma(std::sqrt(20.0), 10, EpsDelta(1.0, 1e-6)) == Approx(3854.460).epsilon(1e-6));
  CHECK(paper_oja_sigma(std::sqrt(20.0), 100, EpsDelta(5.0, 1e-6)) == Approx(2437.775).epsilon(1e-6));
  const double fw_sigma = std::sqrt(64.0 * std::log(1e6));  // L = 1, T = 1, ε = 1
  CHECK(paper_oja_sigma(1.0, 1, EpsDelta(1.0, 1e-6)) / fw_sigma == Approx(2.0495).margin(1e-4));
  // The class uses it, whatever release_eigenvalue says (the printed σ does not depend on it).
  auto paper = options_with(10, std::sqrt(20.0), EpsDelta(1.0, 1e-6), Calibration::paper, 1);
  CHECK(PrivateOja(paper).sigma() == paper_oja_sigma(std::sqrt(20.0), 10, EpsDelta(1.0, 1e-6)));
  paper.release_eigenvalue = false;
  CHECK(PrivateOja(paper).sigma() == paper_oja_sigma(std::sqrt(20.0), 10, EpsDelta(1.0, 1e-6)));

  // tight: σ = analytic_gaussian_sigma(L²·√k, target), k = Γ + 1 (Γ without the eigenvalue). The
  // analytic σ is linear in Δ (δ depends on Δ/σ only); σ(Δ = 1; 1, 1e-6) = 4.2246789, found by
  // bisecting Balle & Wang's δ(σ) = Φ(1/(2σ) − σ) − e·Φ(−1/(2σ) − σ) = 1e-6 (calibration.hpp: 4.2247).
  //   L = 1, Γ = 3, eigenvalue:   Δ = √4 = 2        → σ = 8.449358
  //   L = 1, Γ = 4, no eigenvalue: Δ = √4 = 2       → σ = 8.449358 (the same four releases)
  //   L² = 20, Γ = 10, eigenvalue: Δ = 20·√11      → σ = 66.33250 · 4.2246789 = 280.2335
  CHECK(PrivateOja(options_with(3, 1.0, EpsDelta(1.0, 1e-6), Calibration::tight, 1)).sigma() ==
        Approx(8.449358).epsilon(1e-6));
  auto no_eigenvalue = options_with(4, 1.0, EpsDelta(1.0, 1e-6), Calibration::tight, 1);
  no_eigenvalue.release_eigenvalue = false;
  CHECK(PrivateOja(no_eigenvalue).sigma() == Approx(8.449358).epsilon(1e-6));
  const PrivateOja tight(options_with(10, std::sqrt(20.0), EpsDelta(1.0, 1e-6), Calibration::tight, 1));
  CHECK(tight.sigma() == Approx(280.2335).epsilon(1e-6));
  CHECK(tight.releases() == 11);
  CHECK(tight.release_sensitivity() == Approx(20.0).epsilon(1e-15));
  CHECK(tight.joint_sensitivity() == Approx(20.0 * std::sqrt(11.0)).epsilon(1e-15));
  // Exactly the target: the run's μ-GDP profile at ε is δ.
  CHECK(privacy::analytic_gaussian_delta(tight.joint_sensitivity(), tight.sigma(), 1.0) == Approx(1e-6).epsilon(1e-6));
  CHECK(tight.step_size(100) == Approx(1.0 / (tight.sigma() * std::sqrt(100.0 * 10))).epsilon(1e-15));
  CHECK(tight.secure() == false);  // seeded

  // The paper σ is valid with the margin the header derives: ρ = k L⁴/(2σ²) converts (standard
  // bound) to ε' ≤ ε·(1/8 + 1/128); and its exact profile at ε is far below δ. It is 11.9–14.4× tight.
  for (double eps : {0.1, 1.0, 5.0, 27.0})
    for (int gamma : {1, 10, 100}) {
      INFO("epsilon " << eps << ", Gamma " << gamma);
      const PrivateOja p(options_with(gamma, std::sqrt(20.0), EpsDelta(eps, 1e-6), Calibration::paper, 1));
      const double rho = privacy::gaussian_rho(p.joint_sensitivity(), p.sigma());
      CHECK(rho == Approx((gamma + 1) * 400.0 / (2 * p.sigma() * p.sigma())).epsilon(1e-12));
      CHECK(privacy::epsilon_from_rho_standard(rho, 1e-6) <= eps * (1.0 / 8 + 1.0 / 128));
      CHECK(privacy::analytic_gaussian_delta(p.joint_sensitivity(), p.sigma(), eps) < 1e-6);
    }
  for (double eps : {1.0, 5.0})
    for (int gamma : {10, 100}) {
      const double ratio = PrivateOja(options_with(gamma, std::sqrt(20.0), EpsDelta(eps, 1e-6), Calibration::paper, 1)).sigma() /
                           PrivateOja(options_with(gamma, std::sqrt(20.0), EpsDelta(eps, 1e-6), Calibration::tight, 1)).sigma();
      CHECK(ratio > 11.8);
      CHECK(ratio < 14.4);
    }
}

TEST_CASE("Oja privacy: the condition epsilon <= 2 ln(1/delta) in paper mode; bad options name the field", "[oja][validation]") {
  // 2 ln(1e6) = 27.631: 27.6 passes, 28 is refused in paper mode only.
  CHECK_NOTHROW(PrivateOja(options_with(10, 1.0, EpsDelta(27.6, 1e-6), Calibration::paper, 1)));
  CHECK_THROWS_NAMING(PrivateOja(options_with(10, 1.0, EpsDelta(28.0, 1e-6), Calibration::paper, 1)), InvalidParameter,
                      Contains("epsilon <= 2 ln(1/delta) = 27.631") && Contains("got epsilon = 28"));
  CHECK_THROWS_NAMING(paper_oja_sigma(1.0, 10, EpsDelta(28.0, 1e-6)), InvalidParameter, Contains("epsilon <= 2 ln(1/delta)"));
  CHECK_NOTHROW(PrivateOja(options_with(10, 1.0, EpsDelta(28.0, 1e-6), Calibration::tight, 1)));

  auto with = [](auto edit) {
    PrivateOjaOptions o;
    o.privacy.noise.seed = 1;
    edit(o);
    return o;
  };
  CHECK_THROWS_NAMING(PrivateOja(with([](auto& o) { o.iterations = 0; })), InvalidParameter,
                      Contains("iterations must be >= 1, got 0"));
  CHECK_THROWS_NAMING(PrivateOja(with([](auto& o) { o.iterations = -3; })), InvalidParameter, Contains("iterations"));
  for (double bad : {0.0, -1.0, std::nan(""), HUGE_VAL})
    CHECK_THROWS_NAMING(PrivateOja(with([bad](auto& o) { o.privacy.row_norm_bound = bad; })), InvalidParameter,
                        Contains("row_norm_bound must be finite and > 0"));
  // L² must be a normal number, or σ ∝ L² would be 0 or inf.
  CHECK_THROWS_NAMING(PrivateOja(with([](auto& o) { o.privacy.row_norm_bound = 1e-200; })), InvalidParameter,
                      Contains("row_norm_bound^2"));
  CHECK_THROWS_NAMING(PrivateOja(with([](auto& o) { o.privacy.row_norm_bound = 1e200; })), InvalidParameter,
                      Contains("row_norm_bound^2"));
  CHECK_THROWS_NAMING(PrivateOja(with([](auto& o) { o.privacy.target = EpsDelta(1.0, 0.0); })), InvalidParameter,
                      Contains("target.delta must be > 0"));
  CHECK_THROWS_NAMING(PrivateOja(with([](auto& o) { o.privacy.calibration = static_cast<Calibration>(7); })), InvalidParameter,
                      Contains("calibration must be paper or tight"));
  CHECK_THROWS_NAMING(PrivateOja(with([](auto& o) { o.privacy.relation = static_cast<privacy::Neighbours>(9); })),
                      InvalidParameter, Contains("relation must be add_remove_row or replace_row"));
  // The defaults are valid: Γ = 100, L = 1, (1, 1e-6), tight, add/remove, eigenvalue released.
  const PrivateOjaOptions defaults;
  CHECK(defaults.iterations == 100);
  CHECK(defaults.privacy.calibration == Calibration::tight);
  CHECK_FALSE(defaults.privacy.noise.seed.has_value());
  const PrivateOja secure(defaults);
  CHECK(secure.secure());
}

TEST_CASE("Oja rows are checked, not clipped: a row over L and a NaN are refused naming the row", "[oja][validation]") {
  PrivateOja oja(options_with(5, 1.0, EpsDelta(1.0, 1e-6), Calibration::tight, 3));
  MatrixXd a = MatrixXd::Zero(6, 4);
  a(0, 0) = 1.0;                      // exactly L
  a(1, 1) = 1.0 + 1e-13;              // within the 1e-12 round-off allowance
  a.row(2) << 0.6, 0.8, 0.0, 0.0;     // norm 1 (up to rounding)
  CHECK_NOTHROW(oja.run(a, test_budget::unaccounted()));
  CHECK_NOTHROW(oja.run(SparseRows(a.sparseView()), test_budget::unaccounted()));

  MatrixXd over = a;
  over.row(3) << 0.8, 0.0, 0.7, 0.0;  // norm 1.063
  CHECK_THROWS_NAMING(oja.run(over, test_budget::unaccounted()), InvalidRow, Contains("row 3: l2 norm") && Contains("exceeds row_norm_bound 1"));
  CHECK_THROWS_NAMING(oja.run(SparseRows(over.sparseView()), test_budget::unaccounted()), InvalidRow, Contains("row 3: l2 norm"));
  try {
    oja.run(over, test_budget::unaccounted());
  } catch (const InvalidRow& e) {
    CHECK(e.row_index() == 3);
  }
  over = a;
  over(4, 3) = 1.0 + 1e-11;  // past the allowance
  CHECK_THROWS_NAMING(oja.run(over, test_budget::unaccounted()), InvalidRow, Contains("row 4: l2 norm"));

  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    MatrixXd nan_row = a;
    nan_row(5, 2) = bad;
    CHECK_THROWS_NAMING(oja.run(nan_row, test_budget::unaccounted()), InvalidRow, Contains("row 5: entry at column 2 is not finite"));
    // sparseView drops only zeros, so the NaN is stored.
    SparseRows sparse = a.sparseView();
    sparse.insert(5, 2) = bad;
    CHECK_THROWS_NAMING(oja.run(sparse, test_budget::unaccounted()), InvalidRow, Contains("row 5: entry at column 2 is not finite"));
  }
  // A zero-column matrix is refused; zero rows are fine (pure noise, still private).
  CHECK_THROWS_NAMING(oja.run(MatrixXd(3, 0), test_budget::unaccounted()), InvalidParameter, Contains("at least one column"));
  CHECK(oja.run(MatrixXd(0, 4), test_budget::unaccounted()).vector.size() == 4);
}

TEST_CASE("Oja sensitivity: L^2 per release under add/remove and under replacement", "[oja][privacy]") {
  // ‖(aaᵀ − bbᵀ)v‖ ≤ ‖aaᵀ − bbᵀ‖₂ ≤ max(‖a‖², ‖b‖²) = L² for unit v (−bbᵀ ⪯ aaᵀ − bbᵀ ⪯ aaᵀ), and
  // |(aᵀv)² − (bᵀv)²| ≤ L²: replacement does not double Δ. Brute force over random pairs, then the
  // attaining pair a = L·v, b ⊥ v.
  const double l = 1.7, l2 = l * l;
  CHECK(oja_release_sensitivity(privacy::Neighbours::add_remove_row, l) == l2);
  CHECK(oja_release_sensitivity(privacy::Neighbours::replace_row, l) == l2);
  privacy::SeededNoiseSource rng(17);
  double worst_product = 0, worst_eigen = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    VectorXd a(5), b(5), v(5);
    for (auto* x : {&a, &b, &v})
      for (Index j = 0; j < 5; ++j) (*x)(j) = rng.gaussian();
    v.normalize();
    // Rows of norm ≤ L, often exactly L; sometimes aligned with v to probe the extremes.
    a *= l / a.norm() * (trial % 3 == 0 ? 1.0 : rng.uniform_open());
    b *= l / b.norm();
    if (trial % 5 == 0) a = l * v;
    worst_product = std::max(worst_product, ((a * a.transpose() - b * b.transpose()) * v).norm());
    worst_product = std::max(worst_product, (a * a.transpose() * v).norm());
    worst_eigen = std::max(worst_eigen, std::fabs(std::pow(a.dot(v), 2) - std::pow(b.dot(v), 2)));
  }
  CHECK(worst_product <= l2 * (1 + 1e-12));
  CHECK(worst_eigen <= l2 * (1 + 1e-12));
  const VectorXd v = VectorXd::Unit(5, 0), a = l * v, b = l * VectorXd::Unit(5, 1);
  CHECK(((a * a.transpose() - b * b.transpose()) * v).norm() == Approx(l2).epsilon(1e-15));
  // Hence σ is the same under both relations.
  auto replace = options_with(10, l, EpsDelta(1.0, 1e-6), Calibration::tight, 1);
  replace.privacy.relation = privacy::Neighbours::replace_row;
  CHECK(PrivateOja(replace).sigma() == PrivateOja(options_with(10, l, EpsDelta(1.0, 1e-6), Calibration::tight, 1)).sigma());
}

// ---- Noise against the closed form --------------------------------------------------------------

TEST_CASE("Oja noise: each step adds N(0, sigma^2 I), the eigenvalue N(0, sigma^2); the update is as printed", "[oja][statistical]") {
  // The observer sees y_τ and v̂_{τ−1}, so g_τ = y_τ − Aᵀ(A v̂_{τ−1}) is recovered exactly (up to the
  // product's round-off and the snap, ~1e-12·σ). Under the null, Σ(g/σ)² ~ χ²_N with N = n·Γ draws:
  // Laurent–Massart interval at α = 1e-7; the mean within chernoff_z(1e-7)/√N (in σ units); the KS
  // statistic of g/σ against Φ under the DKW bound at α = 1e-7. 2 matrices × 4 checks + 1: false
  // alarm < 1e-6.
  const double alpha = 1e-7;
  const Index n = 2000;
  const int gamma = 20;
  privacy::SeededNoiseSource data_rng(5);
  MatrixXd data(40, n);
  for (Index i = 0; i < data.rows(); ++i)
    for (Index j = 0; j < n; ++j) data(i, j) = data_rng.gaussian();
  data.rowwise().normalize();  // rows of norm 1 = L
  for (const auto& [name, a] : std::vector<std::pair<std::string, MatrixXd>>{{"zero", MatrixXd::Zero(7, n)}, {"data", data}}) {
    INFO("matrix " << name);
    PrivateOja oja(options_with(gamma, 1.0, EpsDelta(2.0, 1e-6), Calibration::tight, 11));
    const double sigma = oja.sigma(), eta = oja.step_size(n);
    std::vector<double> standardised;
    double worst_update_error = 0, worst_unit_error = 0;
    const auto result = oja.run(a, test_budget::unaccounted(), "oja", [&](int, const VectorXd& previous, const VectorXd& noisy, const VectorXd& next) {
      const VectorXd g = noisy - a.transpose() * (a * previous);
      for (Index j = 0; j < n; ++j) standardised.push_back(g(j) / sigma);
      // v̂_τ = (v̂_{τ−1} + η y_τ)/‖·‖ with η = 1/(σ√(nΓ)).
      const VectorXd expected = (previous + eta * noisy).normalized();
      worst_update_error = std::max(worst_update_error, (next - expected).cwiseAbs().maxCoeff());
      worst_unit_error = std::max({worst_unit_error, std::fabs(previous.norm() - 1), std::fabs(next.norm() - 1)});
    });
    REQUIRE(standardised.size() == static_cast<std::size_t>(n * gamma));
    CHECK(worst_update_error <= 1e-14);
    CHECK(worst_unit_error <= 1e-14);  // v̂_0 included: it is normalised before the first product
    CHECK(result.step_size == eta);
    CHECK(result.sigma == sigma);
    const double draws = static_cast<double>(standardised.size());
    double sum = 0, sum_sq = 0;
    for (double z : standardised) sum += z, sum_sq += z * z;
    const auto [lo, hi] = testing::chi_square_interval(draws, alpha);
    INFO("sum of squares / N = " << sum_sq / draws << ", mean = " << sum / draws);
    CHECK(sum_sq >= lo);
    CHECK(sum_sq <= hi);
    CHECK(std::fabs(sum / draws) <= testing::chernoff_z(alpha) / std::sqrt(draws));
    CHECK(testing::ks_statistic(standardised, testing::normal_cdf) <= testing::dkw_epsilon(standardised.size(), alpha));
  }

  // λ̂² − ‖Av̂_Γ‖² ~ N(0, σ²): 4000 independent one-step runs (one object, its source moves on) on a
  // small matrix; Σ(e/σ)² within the χ²_4000 interval at α = 1e-7 (about ±12%).
  PrivateOja small(options_with(1, 1.0, EpsDelta(1.0, 1e-6), Calibration::tight, 23));
  MatrixXd a(4, 3);
  a << 1, 0, 0, 0.6, 0.8, 0, 0, 0, 1, 0.5, 0.5, 0.5;
  const int runs = 4000;
  double sum_sq = 0;
  for (int r = 0; r < runs; ++r) {
    const auto result = small.run(a, test_budget::unaccounted());
    const double e = *result.eigenvalue - (a * result.vector).squaredNorm();
    sum_sq += (e / small.sigma()) * (e / small.sigma());
  }
  const auto [lo, hi] = testing::chi_square_interval(runs, alpha);
  INFO("eigenvalue noise: sum of squares / runs = " << sum_sq / runs);
  CHECK(sum_sq >= lo);
  CHECK(sum_sq <= hi);
}

// ---- Utility: Rayleigh gap on the rating-like matrix ---------------------------------------------

TEST_CASE("Oja Rayleigh gap on the rating-like matrix: a reference table's ballpark and Thm 3.3's bound", "[oja][utility][statistical-regression]") {
  // A reference prototype's setting: m = 10⁵ users, n = 100 items, ξ = 20 ratings each in [−1, 1] (rank one),
  // L = √20, δ = 1e-6, stored sparse. Our draw has ‖A‖² ≈ 4.67e4 (the prototype's: 40873; the
  // recipe fixes only the distribution, and ‖A‖² = 45–50k over five data seeds here).
  //
  // Paper calibration against the table (relative gap 1 − ‖Av̂‖²/‖A‖²; mean of 3 noise seeds):
  //  * ε = 5 (table 0.014 at Γ = 10, 0.026 at Γ = 100): converged regime (σ√n = 7.7e3 / 2.4e4 < ‖A‖²).
  //    Per-seed spread measured here ±12% (Γ = 10) / ±15% (Γ = 100), so the 3-seed mean has sd ≈ 7–9%;
  //    the gap scales about as (σ√n)²/‖A‖², so our 14% larger ‖A‖² lowers it by ~15–25%. Window:
  //    ±40% of the table value.
  //  * ε = 1 (table 0.67 / 0.69): σ√n = 3.9e4 / 1.2e5 is at or above ‖A‖²; single seeds range over
  //    0.12–0.95 (8 seeds × 5 data draws), so one printed value pins nothing. Check the 3-seed mean is
  //    far from converged (≥ 0.1) and better than a random direction (1 − tr(AᵀA)/(n‖A‖²) ≈ 0.95):
  //    ≤ 0.9.
  // Tight calibration (σ 12–14× smaller) must be better in every cell (reported, 2 seeds).
  //
  // Thm 3.3 (§3.2): ‖A‖² − ‖Av̂‖² ≤ c·σ√n·log(n/β) w.p. ≥ 1 − β²; β = 0.1 (99% per run), c = 1, the
  // strict end of the expected 1–3. log(n/β) = log(1000) = 6.91. The bound is ≥ ‖A‖² (vacuous) for every
  // paper cell and for tight ε = 1, Γ = 100; where it bites (tight ε = 1 Γ = 10, ε = 5) the measured
  // gap is 2–3 orders below it: this rank-one matrix has a large eigengap. Sharper guard [inference]:
  // once converged (σ√n ≤ ‖A‖²/2), v̂ is at worst a noisy power step (W v̂ + g)/‖·‖, whose angle to
  // the top vector has sin²θ ≈ ‖g_⊥‖²/‖A‖⁴, so the gap ‖A‖² sin²θ is about σ²(n−1)/‖A‖² or less
  // (Oja's small steps average g further down). Measured: 0.2–0.9 × (σ√n)²/‖A‖² over 8 seeds;
  // ‖g_⊥‖²/σ² ~ χ²_99 varies by ±14%, so ≤ 2× that holds with a wide margin.
  const SparseRows a = rating_matrix(100000, 100, 20, 2024);
  const double top = top_eigenvalue(a);
  const double trace = a.squaredNorm();
  const double random_direction_gap = 1.0 - trace / (100.0 * top);
  INFO("||A||^2 = " << top << ", random-direction gap " << random_direction_gap);
  REQUIRE(top > 4.0e4);
  REQUIRE(top < 5.2e4);
  const double n = 100, beta = 0.1, log_term = std::log(n / beta);
  struct Cell {
    double epsilon;
    int gamma;
    double table;
  };
  for (const Cell cell : {Cell{1.0, 10, 0.67}, Cell{1.0, 100, 0.69}, Cell{5.0, 10, 0.014}, Cell{5.0, 100, 0.026}}) {
    double mean_gap[2] = {0, 0};
    for (Calibration c : {Calibration::paper, Calibration::tight}) {
      const int seeds = c == Calibration::paper ? 3 : 2;
      for (int s = 0; s < seeds; ++s) {
        PrivateOja oja(options_with(cell.gamma, std::sqrt(20.0), EpsDelta(cell.epsilon, 1e-6), c, 700 + s));
        const auto result = oja.run(a, test_budget::unaccounted());
        const double absolute_gap = top - squared_image_norm(a, result.vector);
        const double sigma_root_n = result.sigma * std::sqrt(n);
        INFO(privacy::to_string(c) << " epsilon " << cell.epsilon << " Gamma " << cell.gamma << " seed " << s << ": sigma "
                                   << result.sigma << ", gap " << absolute_gap / top << ", Thm 3.3 bound (c = 1) "
                                   << sigma_root_n * log_term / top);
        CHECK(absolute_gap >= -1e-9 * top);  // ‖Av̂‖² ≤ ‖A‖² for a unit v̂
        CHECK(absolute_gap <= sigma_root_n * log_term);
        if (sigma_root_n <= top / 2) CHECK(absolute_gap <= 2.0 * sigma_root_n * sigma_root_n / top);
        mean_gap[c == Calibration::paper ? 0 : 1] += absolute_gap / top / seeds;
      }
    }
    const double paper = mean_gap[0], tight = mean_gap[1];
    INFO("epsilon " << cell.epsilon << ", Gamma " << cell.gamma << ": mean gap paper " << paper << " (table "
                    << cell.table << "), tight " << tight);
    if (cell.epsilon >= 5) {
      CHECK(paper >= 0.6 * cell.table);
      CHECK(paper <= 1.4 * cell.table);
    } else {
      CHECK(paper >= 0.1);
      CHECK(paper <= 0.9);
      CHECK(paper < random_direction_gap);
    }
    CHECK(tight < paper);
  }
}

// ---- Sparse path ---------------------------------------------------------------------------------

TEST_CASE("Oja sparse path: n = 1e5 columns in bounded memory; the same result as the dense path", "[oja][sparse]") {
  // m = 2000 rows with 5 stored entries each in [−1, 1] (L = √5), n = 10⁵: an n × n matrix would be
  // 8n² = 80 GB and even a dense m × n copy 1.6 GB. The whole test process staying under 1 GB of peak
  // RSS (getrusage) shows neither was formed; the sparse path itself needs O(n) = 0.8 MB vectors.
  {
    const Index m = 2000, n = 100000;
    const SparseRows a = [&] {
      privacy::SeededNoiseSource rng(41);
      std::vector<Eigen::Triplet<double>> entries;
      for (Index i = 0; i < m; ++i)
        for (int k = 0; k < 5; ++k) {
          // Distinct columns: one per 20000-wide band.
          const auto j = static_cast<Index>(k * 20000 + rng.uniform_open() * 20000);
          entries.emplace_back(static_cast<int>(i), static_cast<int>(j), 2.0 * rng.uniform_open() - 1.0);
        }
      SparseRows s(m, n);
      s.setFromTriplets(entries.begin(), entries.end());
      return s;
    }();
    PrivateOja oja(options_with(20, std::sqrt(5.0), EpsDelta(1.0, 1e-6), Calibration::tight, 3));
    const auto result = oja.run(a, test_budget::unaccounted());
    CHECK(result.vector.size() == n);
    CHECK(result.vector.norm() == Approx(1.0).epsilon(1e-14));
    REQUIRE(result.eigenvalue.has_value());
    const long peak = peak_rss_bytes();
    INFO("peak RSS " << peak / (1 << 20) << " MiB");
    CHECK(peak < (1L << 30));
  }
  // Dense and sparse on a small matrix with the same seed: the same noise, and products that differ
  // only in summation order (~1e-16 relative), so the iterates agree to 1e-12.
  {
    privacy::SeededNoiseSource rng(8);
    MatrixXd a = MatrixXd::Zero(200, 30);
    for (Index i = 0; i < a.rows(); ++i)
      for (Index j = 0; j < a.cols(); ++j)
        if (rng.uniform_open() < 0.3) a(i, j) = 2.0 * rng.uniform_open() - 1.0;
    a.rowwise().normalize();
    for (Calibration c : {Calibration::paper, Calibration::tight}) {
      const auto o = options_with(50, 1.0, EpsDelta(2.0, 1e-6), c, 99);
      const auto dense = PrivateOja(o).run(a, test_budget::unaccounted());
      const auto sparse = PrivateOja(o).run(SparseRows(a.sparseView()), test_budget::unaccounted());
      SparseRows uncompressed = a.sparseView();
      uncompressed.uncompress();
      const auto loose = PrivateOja(o).run(uncompressed, test_budget::unaccounted());
      INFO(privacy::to_string(c) << ": max difference " << (dense.vector - sparse.vector).cwiseAbs().maxCoeff());
      CHECK((dense.vector - sparse.vector).cwiseAbs().maxCoeff() <= 1e-12);
      CHECK(std::fabs(*dense.eigenvalue - *sparse.eigenvalue) <= 1e-12 * std::max(1.0, std::fabs(*dense.eigenvalue)));
      CHECK(loose.vector == sparse.vector);  // storage layout does not change the arithmetic
      CHECK(*loose.eigenvalue == *sparse.eigenvalue);
    }
  }
}

// ---- Accounting, reproducibility, result ------------------------------------------------------------

TEST_CASE("accounting: one charge per run with rho = (Gamma+1) L^4 / (2 sigma^2), before any data is read", "[oja][accounting]") {
  MatrixXd a(3, 2);
  a << 1, 0, 0, 1, 0.6, 0.8;
  for (Calibration calibration : {Calibration::paper, Calibration::tight}) {
    for (bool eigenvalue : {true, false}) {
      INFO(privacy::to_string(calibration) << ", release_eigenvalue " << eigenvalue);
      auto o = options_with(10, 2.0, EpsDelta(1.0, 1e-6), calibration, 4);
      o.release_eigenvalue = eigenvalue;
      PrivateOja oja(o);
      const int k = eigenvalue ? 11 : 10;
      privacy::PrivacyAccountant accountant(EpsDelta(1.0, 1e-6));
      const auto result = oja.run(a, accountant, "oja top vector");
      REQUIRE(accountant.ledger().size() == 1);
      const privacy::Charge& charge = accountant.ledger().front();
      CHECK(charge.label == "oja top vector");
      REQUIRE(charge.rho.has_value());
      CHECK(*charge.rho == Approx(k * 16.0 / (2 * oja.sigma() * oja.sigma())).epsilon(1e-12));  // L⁴ = 16
      CHECK(*charge.rho == Approx(privacy::gaussian_rho(4.0 * std::sqrt(k), oja.sigma())).epsilon(1e-12));
      CHECK(charge.epsilon == 1.0);
      CHECK(charge.delta == 1e-6);
      CHECK(accountant.spent().epsilon <= 1.0 * (1 + 1e-9));
      CHECK(result.eigenvalue.has_value() == eigenvalue);
      CHECK(result.to_subspace().values.size() == (eigenvalue ? 1 : 0));
    }
  }
  // A run past the budget throws BudgetExhausted before reading A (a NaN row is never reached) and
  // before drawing noise: the same object then continues exactly like a fresh one.
  MatrixXd poisoned = a;
  poisoned(1, 1) = std::nan("");
  const auto o = options_with(10, 2.0, EpsDelta(1.0, 1e-6), Calibration::tight, 4);
  PrivateOja oja(o);
  privacy::PrivacyAccountant small_budget(EpsDelta(0.5, 1e-6));
  CHECK_THROWS_AS(oja.run(poisoned, small_budget), BudgetExhausted);
  CHECK_THROWS_AS(oja.run(SparseRows(poisoned.sparseView()), small_budget), BudgetExhausted);
  CHECK(small_budget.ledger().empty());
  CHECK(oja.run(a, test_budget::unaccounted()).vector == PrivateOja(o).run(a, test_budget::unaccounted()).vector);
}

TEST_CASE("seeded runs are reproducible; the unseeded default is the secure source; to_subspace", "[oja][noise]") {
  MatrixXd a(4, 3);
  a << 1, 0, 0, 0.6, 0.8, 0, 0, 0, 1, 0.5, 0.5, 0.5;
  const auto o = options_with(30, 1.0, EpsDelta(1.0, 1e-6), Calibration::tight, 2718);
  PrivateOja first(o), second(o);
  const auto r1 = first.run(a, test_budget::unaccounted()), r2 = second.run(a, test_budget::unaccounted());
  CHECK(r1.vector == r2.vector);  // bitwise
  CHECK(*r1.eigenvalue == *r2.eigenvalue);
  CHECK(first.run(a, test_budget::unaccounted()).vector != r1.vector);  // one object's source moves on between runs
  auto other_seed = o;
  other_seed.privacy.noise.seed = 2719;
  CHECK(PrivateOja(other_seed).run(a, test_budget::unaccounted()).vector != r1.vector);
  auto unseeded = o;
  unseeded.privacy.noise.seed.reset();
  PrivateOja secure(unseeded);
  CHECK(secure.secure());
  CHECK(secure.run(a, test_budget::unaccounted()).vector != secure.run(a, test_budget::unaccounted()).vector);

  const PrivateSubspace subspace = r1.to_subspace();
  CHECK(subspace.method == "oja");
  REQUIRE(subspace.vectors.rows() == 3);
  REQUIRE(subspace.vectors.cols() == 1);
  CHECK(subspace.vectors.col(0) == r1.vector);
  REQUIRE(subspace.values.size() == 1);
  CHECK(subspace.values(0) == *r1.eigenvalue);
  // λ̂² is not clamped: at this σ (≈ 23 for 31 releases) it is negative about half the time.
  int negative = 0;
  for (int r = 0; r < 40; ++r) negative += *first.run(a, test_budget::unaccounted()).eigenvalue < 0 ? 1 : 0;
  CHECK(negative > 0);
}

TEST_CASE("rank-k Oja by deflation: one charge for all k runs, orthonormal vectors near the top-k subspace", "[oja][deflation]") {
  // Three orthogonal directions with well-separated strengths (variances 9, 4, 1 against 0.01 of
  // noise), 20000 rows clipped to ‖a‖ ≤ 1, d = 20, ε = 8: the top three eigenvalues of AᵀA are a few
  // thousand against σ√d ≈ a few hundred, so each deflation round converges (the Oja gap law of the
  // single-vector test), and the released 3-subspace captures ≥ 95% of the optimum.
  const Index m = 20000, d = 20, k = 3;
  std::mt19937_64 gen(17);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd a(m, d);
  for (Index i = 0; i < m; ++i) {
    for (Index j = 0; j < d; ++j) a(i, j) = 0.1 * normal(gen) + (j < k ? (3.0 - static_cast<double>(j)) * normal(gen) : 0.0);
    const double norm = a.row(i).norm();
    if (norm > 1) a.row(i) *= (1 - 1e-12) / norm;
  }
  PrivateOjaOptions o;
  o.iterations = 30;
  o.components = k;
  o.privacy.target = privacy::EpsDelta(8.0, 1e-6);
  o.privacy.noise.seed = 4;
  PrivateOja oja(o);
  CHECK(oja.joint_sensitivity() == Approx(std::sqrt(3.0 * 31.0)).epsilon(1e-12));
  privacy::PrivacyAccountant accountant(privacy::EpsDelta(8.0, 1e-6));
  const PrivateSubspace s = oja.run_components(a, accountant);
  CHECK(accountant.ledger().size() == 1);
  CHECK(accountant.spent().epsilon <= 8.0 * (1 + 1e-9));
  REQUIRE(s.vectors.cols() == k);
  CHECK((s.vectors.transpose() * s.vectors - Eigen::MatrixXd::Identity(k, k)).cwiseAbs().maxCoeff() <= 1e-12);
  const Eigen::MatrixXd c = a.transpose() * a;
  const linalg::SymmetricEigenSolver es(c);
  const double best = es.eigenvalues().tail(k).sum();
  const double captured = (s.vectors.transpose() * c * s.vectors).trace();
  INFO("captured " << captured << " of " << best);
  CHECK(captured >= 0.95 * best);
  CHECK(s.values.size() == k);
  // One vector at a time through run() is refused for components > 1, and paper refuses k > 1.
  CHECK_THROWS_NAMING(oja.run(a, test_budget::unaccounted()), InvalidParameter, Contains("use run_components"));
  o.privacy.calibration = privacy::Calibration::paper;
  o.privacy.target = privacy::EpsDelta(1.0, 1e-6);
  CHECK_THROWS_NAMING(PrivateOja(o), InvalidParameter, Contains("components > 1 needs tight"));
}

}  // namespace test_private_oja
