// The doubly nonnegative projection of a noisy second-moment matrix (pca/doubly_nonnegative.hpp):
// a fixed point on its set, never farther from a truth in the set (round by round), entrywise
// nonnegative and exactly symmetric output, better top-k subspaces on nonnegative data, and bad
// input named.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <Eigen/Core>

#include "check_throws.hpp"
#include "dpstream/errors.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "random_matrices.hpp"

namespace test_doubly_nonnegative {

using dpstream::InvalidParameter;
using dpstream::pca::captured_variance;
using dpstream::pca::project_doubly_nonnegative;
using dpstream::pca::top_k_eigen;
using dpstream::privacy::SeededNoiseSource;
using dpstream::testing::gaussian_matrix;
using Eigen::Index;
using Eigen::MatrixXd;
using Catch::Matchers::Contains;

namespace {

// Σ a aᵀ / n over n nonnegative rows a = |rank-3 Gaussian + small noise|: doubly nonnegative, with
// a few strong directions like an image set's second moment.
MatrixXd nonnegative_second_moment(Index n, Index d, SeededNoiseSource& source) {
  const MatrixXd factors = gaussian_matrix(3, d, source);
  const MatrixXd rows = (gaussian_matrix(n, 3, source) * factors + 0.3 * gaussian_matrix(n, d, source)).cwiseAbs();
  return rows.transpose() * rows / static_cast<double>(n);
}

// A symmetric Gaussian matrix, entries of standard deviation `sd` (GOE-shaped: off-diagonal sd/√2
// mirrored, as a release's noise).
MatrixXd symmetric_noise(Index d, double sd, SeededNoiseSource& source) {
  const MatrixXd g = gaussian_matrix(d, d, source);
  MatrixXd e = (g + g.transpose()) * (sd / 2.0);
  e.diagonal() = g.diagonal() * sd;
  return e;
}

}  // namespace

TEST_CASE("doubly nonnegative projection: a doubly nonnegative matrix is left as it is", "[doubly_nonnegative]") {
  SeededNoiseSource source(11);
  const MatrixXd truth = nonnegative_second_moment(400, 12, source);
  MatrixXd projected = truth;
  project_doubly_nonnegative(projected, 3);
  // Only rounding moves it: the eigendecomposition reproduces C to ~d·2⁻⁵³·‖C‖.
  CHECK((projected - truth).cwiseAbs().maxCoeff() <= 1e-12 * truth.cwiseAbs().maxCoeff());
}

TEST_CASE("doubly nonnegative projection: never farther from the truth, round by round; output nonnegative and symmetric",
          "[doubly_nonnegative]") {
  // Each round is two Frobenius projections onto closed convex sets that hold the truth, so the
  // distance to it cannot grow (up to rounding: 1e-12 relative). 40 seeded noise draws, 3 sizes of
  // noise, 1 to 4 rounds.
  SeededNoiseSource source(12);
  const Index d = 16;
  const MatrixXd truth = nonnegative_second_moment(500, d, source);
  const double scale = truth.cwiseAbs().maxCoeff();
  int improved = 0, draws = 0;
  for (double relative_sd : {0.01, 0.1, 1.0})
    for (int draw = 0; draw < 40; ++draw) {
      const MatrixXd noisy = truth + symmetric_noise(d, relative_sd * scale, source);
      double previous = (noisy - truth).norm();
      const double before = previous;
      for (int rounds = 1; rounds <= 4; ++rounds) {
        MatrixXd projected = noisy;
        project_doubly_nonnegative(projected, rounds);
        const double distance = (projected - truth).norm();
        INFO("noise sd " << relative_sd << " x max|C|, draw " << draw << ", rounds " << rounds);
        REQUIRE(distance <= previous * (1 + 1e-12));
        REQUIRE(projected.minCoeff() >= 0.0);
        REQUIRE(projected == projected.transpose());  // exactly
        previous = distance;
      }
      ++draws;
      if (previous < 0.9 * before) ++improved;
    }
  // Not only "not worse": with noise this size most draws lose more than 10% of their error.
  CHECK(improved > draws / 2);
}

TEST_CASE("doubly nonnegative projection: the top-k subspace of a noisy release captures more of the truth",
          "[doubly_nonnegative][statistical]") {
  // 200 seeded noise draws on one nonnegative second moment (d = 40, k = 3). D_i = captured variance
  // of the truth in the projected release's top k minus that in the release's own top k. Checked:
  // mean(D) > 3 standard errors (a one-sided z-test; D_i are i.i.d. given the truth).
  SeededNoiseSource source(13);
  const Index d = 40, k = 3;
  const int draws = 200;
  const MatrixXd truth = nonnegative_second_moment(2000, d, source);
  const double noise_sd = 0.5 * truth.cwiseAbs().maxCoeff() / std::sqrt(static_cast<double>(d));
  double sum = 0, sum_sq = 0;
  for (int draw = 0; draw < draws; ++draw) {
    const MatrixXd release = truth + symmetric_noise(d, noise_sd, source);
    MatrixXd projected = release;
    project_doubly_nonnegative(projected);
    const double gain = captured_variance(truth, top_k_eigen(projected, k).vectors) -
                        captured_variance(truth, top_k_eigen(release, k).vectors);
    sum += gain;
    sum_sq += gain * gain;
  }
  const double mean = sum / draws;
  const double standard_error = std::sqrt((sum_sq / draws - mean * mean) / (draws - 1));
  INFO("mean gain " << mean << ", standard error " << standard_error);
  CHECK(mean > 3 * standard_error);
}

TEST_CASE("doubly nonnegative projection: a matrix with no positive eigenvalue becomes 0", "[doubly_nonnegative]") {
  MatrixXd negative = -MatrixXd::Identity(5, 5);
  negative(0, 1) = negative(1, 0) = 0.3;
  project_doubly_nonnegative(negative, 1);
  CHECK(negative.isZero(0.0));
}

TEST_CASE("doubly nonnegative projection: bad input is named", "[doubly_nonnegative]") {
  MatrixXd ok = MatrixXd::Identity(3, 3);
  CHECK_THROWS_NAMING(project_doubly_nonnegative(ok, 0), InvalidParameter, Contains("rounds must be >= 1, got 0"));
  MatrixXd wide(2, 3);
  wide.setZero();
  CHECK_THROWS_NAMING(project_doubly_nonnegative(wide), InvalidParameter,
                      Contains("project_doubly_nonnegative") && Contains("square"));
  MatrixXd nan = ok;
  nan(2, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_NAMING(project_doubly_nonnegative(nan), InvalidParameter, Contains("matrix(2,1) is not finite"));
  MatrixXd asymmetric = ok;
  asymmetric(0, 2) = 0.5;
  CHECK_THROWS_NAMING(project_doubly_nonnegative(asymmetric), InvalidParameter, Contains("not symmetric"));
}

}  // namespace test_doubly_nonnegative
