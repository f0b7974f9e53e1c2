// NoisyPowerMethod (Hardt & Price 2014 block form, row-level): calibration and accounting, the
// eigenvalue noise against its closed form, convergence on a gapped covariance within the noise
// bound, warm starts, and bad input.
#include <cmath>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/streaming_private_pca.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "stat_helpers.hpp"
#include "unaccounted.hpp"

namespace test_noisy_power_method {

using namespace dpstream;
using namespace dpstream::pca;
using Catch::Matchers::Contains;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

NoisyPowerMethodOptions options(Index k, int iterations, std::uint64_t seed, double epsilon = 1.0) {
  NoisyPowerMethodOptions o;
  o.k = k;
  o.iterations = iterations;
  o.privacy.noise.seed = seed;
  o.privacy.target = privacy::EpsDelta(epsilon, 1e-6);
  return o;
}

// m unit-bounded rows whose covariance has k strong directions (the first k axes, rotated).
MatrixXd spiked_rows(Index m, Index d, Index k, double spike, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  MatrixXd rows(m, d);
  stream::RowGuard guard({d, 1.0, stream::OverNormPolicy::clip});  // clip to L = 1, as a pipeline would
  for (Index i = 0; i < m; ++i) {
    VectorXd row(d);
    for (Index j = 0; j < d; ++j) row(j) = normal(gen) * (j < k ? spike * (1.0 - 0.1 * static_cast<double>(j)) : 1.0);
    guard.admit(row);
    rows.row(i) = row.transpose();
  }
  return rows;
}

}  // namespace

TEST_CASE("noisy power method: sigma, mu and the accountant's charge", "[power][privacy]") {
  const privacy::EpsDelta target(1.0, 1e-6);
  NoisyPowerMethod tight(10, options(3, 9, 1));  // R = 9 rounds + 1 eigenvalue release
  // μ-GDP with μ = Δ√R/σ is exactly the target: the analytic Gaussian with sensitivity μ, σ = 1.
  CHECK(tight.sigma() == Approx(privacy::analytic_gaussian_sigma(std::sqrt(10.0), target)).epsilon(1e-12));
  CHECK(privacy::analytic_gaussian_delta(tight.mu(), 1.0, 1.0) == Approx(1e-6).epsilon(1e-6));
  NoisyPowerMethodOptions paper = options(3, 9, 1);
  paper.privacy.calibration = privacy::Calibration::paper;
  // HR13's formula with R = 10 rounds: 2·√(4·10·ln 1e6) = 47.01; ≈ 3.6× the tight σ at (1, 1e-6).
  CHECK(NoisyPowerMethod(10, paper).sigma() == Approx(2.0 * std::sqrt(40.0 * std::log(1e6))).epsilon(1e-12));
  NoisyPowerMethodOptions replace = options(3, 9, 1);
  replace.privacy.relation = privacy::Neighbours::replace_row;
  CHECK(NoisyPowerMethod(10, replace).sigma() == Approx(std::sqrt(2.0) * tight.sigma()).epsilon(1e-9));
  privacy::PrivacyAccountant accountant(target);
  tight.run(MatrixXd::Zero(4, 10), accountant);
  REQUIRE(accountant.ledger().size() == 1);
  CHECK(*accountant.ledger()[0].rho == Approx(10.0 / (2 * tight.sigma() * tight.sigma())).epsilon(1e-12));
  CHECK(accountant.spent().epsilon <= 1.0 + 1e-9);
  CHECK_THROWS_AS(tight.run(MatrixXd::Zero(4, 10), accountant), BudgetExhausted);  // the budget is spent
}

TEST_CASE("noisy power method: eigenvalue noise is N(0, sigma^2) (chi-square, seeded)", "[power][statistical]") {
  // On zero data λ̂ᵢ = xᵢᵀ·0·xᵢ + N(0, σ²): 400 runs × k = 5 values = 2000 samples; Σλ̂²/σ² ~ χ²_2000,
  // checked against the Laurent–Massart interval at α = 1e-7 (about ±12%).
  NoisyPowerMethod npm(8, options(5, 2, 11));
  const MatrixXd zero = MatrixXd::Zero(3, 8);
  double sum_sq = 0;
  int samples = 0;
  for (int run = 0; run < 400; ++run) {
    const PrivateSubspace s = npm.run(zero, test_budget::unaccounted());
    sum_sq += s.values.squaredNorm();
    samples += static_cast<int>(s.values.size());
    // Released in descending order, with orthonormal vectors.
    for (Index i = 1; i < s.values.size(); ++i) REQUIRE(s.values(i - 1) >= s.values(i));
    REQUIRE((s.vectors.transpose() * s.vectors - MatrixXd::Identity(5, 5)).cwiseAbs().maxCoeff() <= 1e-12);
  }
  const auto [lo, hi] = dpstream::testing::chi_square_interval(samples, 1e-7);
  CHECK(sum_sq / (npm.sigma() * npm.sigma()) >= lo);
  CHECK(sum_sq / (npm.sigma() * npm.sigma()) <= hi);
}

TEST_CASE("noisy power method: converges to the top-k subspace within the noise bound; warm starts", "[power][pca]") {
  // d = 40, k = 3, 20000 rows with three strong directions. Per round the iterate is the top-k of
  // C plus a Gaussian d × k perturbation of spectral norm ≈ σ(√d + √k); Wedin/Davis–Kahan then bound
  // sin θ by about that over the gap λ_k − λ_{k+1}. Checked: the mean over 10 seeds is below twice
  // that scale, and the captured variance is within the same relative bound of the optimum.
  const Index d = 40, k = 3;
  const MatrixXd rows = spiked_rows(20000, d, k, 4.0, 5);
  const MatrixXd c = rows.transpose() * rows;
  const VectorXd all = linalg::SymmetricEigenSolver(c, Eigen::EigenvaluesOnly).eigenvalues().reverse();
  const double gap = all(k - 1) - all(k);
  const TopEigen exact = top_k_eigen(c, k);
  double distance = 0, captured = 0, sigma = 0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    NoisyPowerMethod npm(d, options(k, 8, 40 + seed));
    const PrivateSubspace s = npm.run(rows, test_budget::unaccounted());
    sigma = npm.sigma();
    distance += projector_distance(exact.vectors, s.vectors) / 10;
    captured += captured_variance(c, s.vectors) / exact.values.sum() / 10;
  }
  const double scale = sigma * (std::sqrt(double(d)) + std::sqrt(double(k))) / gap;
  INFO("gap " << gap << ", sigma " << sigma << ", mean sin theta " << distance << " vs scale " << scale
              << ", captured ratio " << captured);
  REQUIRE(scale < 0.2);  // the setting is in the converging regime
  CHECK(distance <= 2 * scale);
  CHECK(captured >= 1 - 2 * scale * scale - 1e-9);  // loss ∝ sin²θ on the top block
  // A warm start at the truth with a single round stays there (within one round's noise).
  NoisyPowerMethodOptions one = options(k, 1, 99);
  NoisyPowerMethod warm(d, one);
  const PrivateSubspace w = warm.run(rows, test_budget::unaccounted(), &exact.vectors);
  CHECK(projector_distance(exact.vectors, w.vectors) <= 2 * warm.sigma() * (std::sqrt(double(d)) + std::sqrt(double(k))) / all(k - 1) + 0.05);
}

TEST_CASE("noisy power method rejects bad options and rows", "[power]") {
  CHECK_THROWS_NAMING(NoisyPowerMethod(5, options(6, 3, 1)), InvalidParameter, Contains("k must be in [1, 5], got 6"));
  CHECK_THROWS_NAMING(NoisyPowerMethod(5, options(2, 0, 1)), InvalidParameter, Contains("iterations must be >= 1"));
  NoisyPowerMethod npm(5, options(2, 3, 1));
  MatrixXd rows = MatrixXd::Zero(4, 5);
  rows(2, 1) = 1.5;
  CHECK_THROWS_NAMING(npm.run(rows, test_budget::unaccounted()), InvalidRow, Contains("row 2"));
  CHECK_THROWS_NAMING(npm.run(MatrixXd::Zero(4, 6), test_budget::unaccounted()), InvalidParameter, Contains("6 columns"));
  const MatrixXd bad_start = MatrixXd::Constant(4, 2, 1.0);
  CHECK_THROWS_AS(npm.run(MatrixXd::Zero(4, 5), test_budget::unaccounted(), &bad_start), InvalidParameter);
}

TEST_CASE("streaming private PCA: one charge for the stream, warm refreshes every B rows", "[power][streaming]") {
  // 12000 rows, a refresh every 2000: 6 refreshes of R = 2 + 1 rounds, σ calibrated for all 18.
  const Index d = 30, k = 2;
  const MatrixXd rows = spiked_rows(12000, d, k, 4.0, 8);
  StreamingPrivatePcaOptions o;
  o.horizon_rows = 12000;
  o.refresh_every = 2000;
  o.refresh.k = k;
  o.refresh.privacy.noise.seed = 5;
  privacy::PrivacyAccountant accountant(privacy::EpsDelta(1.0, 1e-6));
  StreamingPrivatePca stream(d, o, accountant);
  REQUIRE(accountant.ledger().size() == 1);
  CHECK(accountant.spent().epsilon == Approx(1.0).epsilon(1e-6));
  CHECK(stream.planned_refreshes() == 6);
  CHECK(stream.sigma() == Approx(noisy_power_sigma(1.0, 18, privacy::EpsDelta(1.0, 1e-6), privacy::Calibration::tight)).epsilon(1e-12));
  std::vector<std::uint64_t> refresh_rows;
  std::vector<double> distances;
  stream.subscribe([&](const StreamingPrivatePca::Refresh& r) {
    refresh_rows.push_back(r.rows);
    const MatrixXd c = rows.topRows(static_cast<Index>(r.rows)).transpose() * rows.topRows(static_cast<Index>(r.rows));
    distances.push_back(projector_distance(top_k_eigen(c, k).vectors, r.subspace.vectors));
  });
  stream.update_block(rows.topRows(4500));  // two refreshes inside one block, at exactly 2000 and 4000 rows
  for (Index i = 4500; i < 12000; ++i) stream.update(rows.row(i).transpose());
  CHECK(refresh_rows == std::vector<std::uint64_t>{2000, 4000, 6000, 8000, 10000, 12000});
  // The signal grows with the rows while σ is fixed: the later refreshes track the top-k subspace
  // of the rows so far more closely (the gap grows ∝ rows; sin θ ∝ σ√d/gap).
  INFO("sin theta by refresh: " << distances[0] << " " << distances[2] << " " << distances[5]);
  CHECK(distances[5] < distances[0]);
  CHECK(distances[5] < 0.2);
  CHECK_THROWS_AS(stream.update(rows.row(0).transpose()), BudgetExhausted);  // past the horizon
  // A bad row in a block: refused by index, nothing of the block taken.
  StreamingPrivatePca fresh(d, o, test_budget::unaccounted());
  MatrixXd bad = rows.topRows(10);
  bad(7, 3) = 5.0;
  CHECK_THROWS_NAMING(fresh.update_block(bad), InvalidRow, Contains("row 7"));
  CHECK(fresh.rows() == 0);
  // An accountant that cannot cover the whole stream refuses it up front.
  privacy::PrivacyAccountant small(privacy::EpsDelta(0.5, 1e-6));
  CHECK_THROWS_AS(StreamingPrivatePca(d, o, small), BudgetExhausted);
  o.refresh_every = 0;
  CHECK_THROWS_NAMING(StreamingPrivatePca(d, o, test_budget::unaccounted()), InvalidParameter, Contains("refresh_every"));
}

}  // namespace test_noisy_power_method
