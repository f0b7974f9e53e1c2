// The doubly nonnegative projection of a noisy second-moment matrix (pca/doubly_nonnegative.hpp):
// a fixed point on its set, never farther from a truth in the set (round by round), entrywise
// nonnegative and exactly symmetric output, better top-k subspaces on nonnegative data, and bad
// input named. DoublyNonnegativeReader: with refresh ratio 0 it is the exact projection; its full
// solves are where the schedule says and its other releases are max(C_t + N_s, 0); a reader restored
// from another's state continues bit for bit; bad options and states are named.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/linalg/psd_projection.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "random_matrices.hpp"

namespace test_doubly_nonnegative {

using dpstream::InvalidParameter;
using dpstream::pca::captured_variance;
using dpstream::pca::DoublyNonnegativeOptions;
using dpstream::pca::DoublyNonnegativeReader;
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

// Releases C_1..C_T of a continual estimate of Σ a aᵀ over nonnegative rows: C_t = t·truth + W_t, W_t
// the running sum of t GOE-shaped draws (sd `noise_sd` each), so the noise of consecutive releases is
// correlated as a continual release's is, and about half of each C_t's spectrum is negative when the
// noise dominates. Each C_t is exactly symmetric, as a release is (the product's triangles may differ
// in the last bit, so the truth is symmetrised; W_t is a sum of exactly symmetric draws): the reader
// reads the lower triangle, and the checks below compare whole matrices bit for bit.
std::vector<MatrixXd> release_sequence(int releases, Index d, double noise_sd, SeededNoiseSource& source) {
  const MatrixXd product = nonnegative_second_moment(300, d, source);
  const MatrixXd truth = (product + product.transpose()) / 2.0;
  MatrixXd walk = MatrixXd::Zero(d, d);
  std::vector<MatrixXd> out;
  for (int t = 1; t <= releases; ++t) {
    walk += symmetric_noise(d, noise_sd, source);
    out.push_back(static_cast<double>(t) * truth + walk);
  }
  return out;
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

TEST_CASE("doubly nonnegative reader: refresh ratio 0 is the exact projection at every release", "[doubly_nonnegative]") {
  // The same operations on the same input (project_psd, then the clip), so equal bit for bit.
  SeededNoiseSource source(21);
  const Index d = 24;
  const std::vector<MatrixXd> releases = release_sequence(12, d, 2.0, source);
  for (int rounds : {1, 2}) {
    DoublyNonnegativeReader reader(d, {.rounds = rounds, .refresh_ratio = 0.0});
    for (const MatrixXd& c : releases) {
      MatrixXd read = c, exact = c;
      reader.apply(read);
      project_doubly_nonnegative(exact, rounds);
      REQUIRE(read == exact);
    }
    CHECK(reader.releases() == 12);
    CHECK(reader.full_solves() == 12);
    CHECK(reader.cheap_steps() == 0);
  }
}

TEST_CASE("doubly nonnegative reader: full solves where the schedule says, max(C_t + N_s, 0) between them",
          "[doubly_nonnegative]") {
  // α = 1/4: release t is full if t − s > s/4 (s the last full one): 1, 2, 3, 4, 6, 8, 11, 14, 18, 23,
  // 29, 37, 47, 59 within 60 (worked by hand from the header's rule).
  const std::vector<std::uint64_t> expected = {1, 2, 3, 4, 6, 8, 11, 14, 18, 23, 29, 37, 47, 59};
  SeededNoiseSource source(22);
  const Index d = 16;
  const std::vector<MatrixXd> releases = release_sequence(60, d, 3.0, source);
  DoublyNonnegativeReader reader(d, {.rounds = 1, .refresh_ratio = 0.25});
  std::vector<std::uint64_t> full;
  MatrixXd correction;  // N_s = P₊(C_s) − C_s, computed here independently of the reader
  for (std::uint64_t t = 1; t <= releases.size(); ++t) {
    const MatrixXd& c = releases[t - 1];
    const bool due = reader.next_is_full();
    REQUIRE(due == DoublyNonnegativeReader::full_release(t, full.empty() ? 0 : full.back(), 0.25));
    MatrixXd read = c;
    reader.apply(read);
    INFO("release " << t);
    if (due) {
      full.push_back(t);
      MatrixXd exact = c;
      project_doubly_nonnegative(exact);
      REQUIRE(read == exact);  // a full release is the exact projection (bit for bit, as above)
      MatrixXd psd = c;
      dpstream::linalg::project_psd(psd);
      correction = psd - c;
      REQUIRE(reader.state().correction == correction);
      CHECK(reader.last_full() == t);
    } else {
      // Entry by entry the same sum and comparison: bit for bit.
      REQUIRE(read == (c + correction).cwiseMax(0.0));
    }
    REQUIRE(read.minCoeff() >= 0.0);
    REQUIRE(read == read.transpose());  // exactly
  }
  CHECK(full == expected);
  CHECK(reader.full_solves() == expected.size());
  CHECK(reader.cheap_steps() == 60 - expected.size());
  // The correction is PSD (−P₋(C_s)): its smallest eigenvalue is ≥ 0 up to the eigensolver's
  // backward error, ~d·2⁻⁵³·‖C‖ ≪ 1e-9·‖C‖_F.
  const dpstream::linalg::SymmetricEigenSolver spectrum(correction);
  CHECK(spectrum.eigenvalues().minCoeff() >= -1e-9 * releases.back().norm());
}

TEST_CASE("doubly nonnegative reader: a reader restored from another's state continues bit for bit",
          "[doubly_nonnegative]") {
  SeededNoiseSource source(23);
  const Index d = 12;
  const std::vector<MatrixXd> releases = release_sequence(40, d, 3.0, source);
  const DoublyNonnegativeOptions options{.rounds = 1, .refresh_ratio = 0.5};
  DoublyNonnegativeReader first(d, options);
  // α = 1/2: full at 1, 2, 4, 7, 11, 17, 26, 40. The first reader stops after release 17, so the
  // restored one reads 18..25 with the saved N, then solves afresh at 26 and 40.
  for (int t = 0; t < 17; ++t) {
    MatrixXd read = releases[static_cast<std::size_t>(t)];
    first.apply(read);
  }
  REQUIRE_FALSE(first.next_is_full());
  DoublyNonnegativeReader second(d, options);
  second.restore(first.state());
  for (std::size_t t = 17; t < releases.size(); ++t) {
    MatrixXd a = releases[t], b = releases[t];
    first.apply(a);
    second.apply(b);
    REQUIRE(a == b);
  }
  CHECK(second.full_solves() == first.full_solves());
  CHECK(second.releases() == 40);
}

// apply_lower and apply_projected_lower (the replay's path) read a release from its lower triangle
// alone (the strict upper one here is NaN) and give apply()'s reading there, bit for bit: the same
// sums and clips on the same entries, the full releases from the same projection whichever projector
// computed it. α = 1/4 over 30 releases: 11 full ones, 19 cheap ones.
TEST_CASE("doubly nonnegative reader: apply_lower and apply_projected_lower are apply() on the lower triangle",
          "[doubly_nonnegative]") {
  SeededNoiseSource source(24);
  const Index d = 40;  // two 32-wide tiles
  const std::vector<MatrixXd> releases = release_sequence(30, d, 3.0, source);
  const DoublyNonnegativeOptions options{.rounds = 1, .refresh_ratio = 0.25};
  DoublyNonnegativeReader whole(d, options), lower_only(d, options), projected_elsewhere(d, options);
  dpstream::linalg::PsdProjector projector;  // another thread's, as in the replay
  MatrixXd projection;
  for (std::size_t t = 0; t < releases.size(); ++t) {
    INFO("release " << t + 1);
    MatrixXd a = releases[t], b = releases[t];
    b.triangularView<Eigen::StrictlyUpper>().setConstant(std::nan(""));
    MatrixXd c = b;
    whole.apply(a);
    lower_only.apply_lower(b);
    if (projected_elsewhere.next_is_full()) {
      DoublyNonnegativeReader::full_projection(c, projection, projector);
      projected_elsewhere.apply_projected_lower(c, projection);
    } else {
      projected_elsewhere.apply_lower(c);
    }
    REQUIRE(MatrixXd(b.triangularView<Eigen::Lower>()) == MatrixXd(a.triangularView<Eigen::Lower>()));
    REQUIRE(MatrixXd(c.triangularView<Eigen::Lower>()) == MatrixXd(a.triangularView<Eigen::Lower>()));
  }
  CHECK(lower_only.state().correction == whole.state().correction);
  CHECK(projected_elsewhere.state().correction == whole.state().correction);
  CHECK(lower_only.full_solves() == 11);  // 1, 2, 3, 4, 6, 8, 11, 14, 18, 23, 29 (the test above)
  CHECK(projected_elsewhere.full_solves() == 11);

  // Bad input: named, nothing read, the matrix unchanged. NaN above the diagonal is not read. α = 4:
  // release 2 is not full (2 − 1 ≤ 4·1).
  DoublyNonnegativeReader reader(3, {.rounds = 1, .refresh_ratio = 4.0});
  MatrixXd first = MatrixXd::Identity(3, 3);
  first(0, 2) = std::nan("");
  reader.apply_lower(first);  // full (the first release): the upper NaN is never read
  CHECK(first.allFinite());
  MatrixXd bad = MatrixXd::Identity(3, 3);
  bad(2, 1) = -INFINITY;
  const MatrixXd before = bad;
  CHECK_THROWS_NAMING(reader.apply_lower(bad), InvalidParameter,
                      Contains("apply_lower") && Contains("matrix(2,1) is not finite, got -inf"));
  CHECK(reader.releases() == 1);
  CHECK(bad.cwiseEqual(before).all());
  MatrixXd wrong = MatrixXd::Identity(3, 4);
  CHECK_THROWS_NAMING(reader.apply_lower(wrong), InvalidParameter, Contains("a 3 x 4 matrix, expected 3 x 3"));
  MatrixXd ok = MatrixXd::Identity(3, 3);
  CHECK_THROWS_NAMING(reader.apply_projected_lower(ok, MatrixXd::Identity(3, 3)), InvalidParameter,
                      Contains("apply_projected_lower: release 2 is not a full release (the last was 1)"));
  CHECK(reader.releases() == 1);
}

TEST_CASE("doubly nonnegative reader: bad options, input and states are named", "[doubly_nonnegative]") {
  CHECK_THROWS_NAMING(DoublyNonnegativeReader(4, {.rounds = 0}), InvalidParameter, Contains("rounds must be >= 1, got 0"));
  for (double bad : {-0.25, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    CHECK_THROWS_NAMING(DoublyNonnegativeReader(4, {.refresh_ratio = bad}), InvalidParameter,
                        Contains("refresh_ratio must be finite and >= 0"));
  CHECK_THROWS_NAMING(DoublyNonnegativeReader(0), InvalidParameter, Contains("d must be >= 1, got 0"));
  DoublyNonnegativeReader reader(3);
  MatrixXd wrong = MatrixXd::Identity(4, 4);
  CHECK_THROWS_NAMING(reader.apply(wrong), InvalidParameter, Contains("a 4 x 4 matrix, expected 3 x 3"));
  MatrixXd asymmetric = MatrixXd::Identity(3, 3);
  asymmetric(0, 2) = 0.5;
  CHECK_THROWS_NAMING(reader.apply(asymmetric), InvalidParameter, Contains("not symmetric"));
  CHECK(reader.releases() == 0);  // nothing read
  DoublyNonnegativeReader::State bad_counts{.releases = 2, .full_solves = 3, .last_full = 1,
                                            .correction = MatrixXd::Zero(3, 3)};
  CHECK_THROWS_NAMING(reader.restore(bad_counts), InvalidParameter, Contains("inconsistent counts"));
  DoublyNonnegativeReader::State bad_shape{.releases = 2, .full_solves = 1, .last_full = 1,
                                           .correction = MatrixXd::Zero(2, 2)};
  CHECK_THROWS_NAMING(reader.restore(bad_shape), InvalidParameter, Contains("correction is 2 x 2, expected 3 x 3"));
}

}  // namespace test_doubly_nonnegative
