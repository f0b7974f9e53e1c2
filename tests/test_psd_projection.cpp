// The PSD projection (linalg/psd_projection.hpp): the one-side route (tridiagonal MRRR on the smaller
// side of the spectrum) agrees with the full eigendecomposition to round-off, really runs (no silent
// fallback), and its output has the projection's defining properties whatever route made it. Also
// linalg/symmetric_product.hpp, the refresh's product C·Q, against Eigen's, and linalg/mirror.hpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Core>

#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/linalg/mirror.hpp"
#include "dpstream/linalg/psd_projection.hpp"
#include "dpstream/linalg/symmetric_product.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "random_matrices.hpp"
#include "../lib/linalg/tridiagonal_reduction.hpp"  // internal: the one-side route's reduction
#include "../lib/linalg/tridiagonal_side.hpp"       // internal: and its eigenpairs

namespace test_psd_projection {

using dpstream::linalg::project_psd;
using dpstream::linalg::PsdRoute;
using dpstream::linalg::SymmetricEigenSolver;
using dpstream::privacy::SeededNoiseSource;
using dpstream::testing::gaussian_matrix;
using dpstream::testing::orthonormal_columns;
using Eigen::Index;
using Eigen::MatrixXd;

namespace {

constexpr double kEpsilon = std::numeric_limits<double>::epsilon();

// A release-like matrix: a PSD signal of rank r (eigenvalues up to `signal`) plus GOE noise whose
// spectrum fills [−2, 2]·noise (about half of it below 0, as a noisy covariance's).
MatrixXd noisy_covariance(Index d, Index r, double signal, double noise, SeededNoiseSource& source) {
  const MatrixXd f = gaussian_matrix(d, r, source);
  MatrixXd c = f * f.transpose();
  c *= signal / SymmetricEigenSolver(c, Eigen::EigenvaluesOnly).eigenvalues()(d - 1);
  const MatrixXd g = gaussian_matrix(d, d, source);
  return c + (g + g.transpose()) * (noise / (2.0 * std::sqrt(static_cast<double>(d))));
}

// Both routes compute the exact projection of a matrix within backward error E of C, with
// ‖E‖_F ≲ c·d·ε·‖C‖_F (Householder reduction; certified or QR eigenpairs), and the projection is
// 1-Lipschitz in the Frobenius norm: the two results differ by at most the sum of both errors and
// of the final products' rounding. 64·d·ε·‖C‖_F allows c = 32 for each route.
double round_off_bound(const MatrixXd& c) { return 64.0 * static_cast<double>(c.rows()) * kEpsilon * c.norm(); }

void check_routes_agree(const MatrixXd& c) {
  MatrixXd one = c, full = c;
  const PsdRoute route = project_psd(one);
  CHECK(route == PsdRoute::one_side);  // the certificate held: the cheap route did the work
  CHECK(project_psd(full, PsdRoute::full_solve) == PsdRoute::full_solve);
  INFO("d = " << c.rows() << ", ||one-side - full||_F = " << (one - full).norm() << ", bound " << round_off_bound(c));
  CHECK((one - full).norm() <= round_off_bound(c));
  CHECK(one == one.transpose());  // exactly
  CHECK(full == full.transpose());
}

}  // namespace

TEST_CASE("PSD projection: the one-side route equals the full solve to round-off", "[psd_projection]") {
  SeededNoiseSource source(41);
  for (Index d : {2, 3, 17, 60, 200}) {
    // Noise-dominated (about half the spectrum negative), signal-dominated (few negatives), and a
    // mostly negative matrix (the positive side is the smaller one).
    check_routes_agree(noisy_covariance(d, std::min<Index>(d, 5), 100.0, 30.0, source));
    check_routes_agree(noisy_covariance(d, d, 100.0, 1.0, source));
    check_routes_agree(-noisy_covariance(d, std::min<Index>(d, 3), 100.0, 1.0, source));
  }
}

// The blocked reduction (internal, behind the one-side route): Q·T·Qᵀ = C and QᵀQ = I to round-off,
// reading the lower triangle only (the strict upper one is NaN), at sizes around its 32-column
// panels (one panel short of, at and past a boundary, several panels with a trailing update). Bound:
// a Householder reduction is backward stable with ‖E‖_F ≲ c·d·u·‖C‖_F (Higham, Accuracy and
// Stability, §19.3), and Q's orthogonality error is of the same order; 64·d·u allows c = 64.
TEST_CASE("tridiagonal reduction: Q T Q^T = C and Q orthogonal around its panel sizes", "[psd_projection]") {
  SeededNoiseSource source(47);
  dpstream::linalg::detail::TridiagonalReduction reduction;
  for (const Index d : {Index{1}, Index{2}, Index{3}, Index{31}, Index{32}, Index{33}, Index{34}, Index{65}, Index{130}}) {
    const MatrixXd c = noisy_covariance(d, std::min<Index>(d, 3), 10.0, 5.0, source);
    MatrixXd lower = c;
    lower.triangularView<Eigen::StrictlyUpper>().setConstant(std::nan(""));
    reduction.compute(lower);
    MatrixXd t = MatrixXd::Zero(d, d);
    t.diagonal() = reduction.diagonal();
    if (d > 1) {
      t.diagonal(-1) = reduction.sub_diagonal();
      t.diagonal(1) = reduction.sub_diagonal();
    }
    MatrixXd q = MatrixXd::Identity(d, d);
    reduction.apply_q(q);
    const double bound = 64.0 * static_cast<double>(d) * kEpsilon;
    INFO("d = " << d);
    CHECK((q * t * q.transpose() - c).norm() <= bound * c.norm());
    CHECK((q.transpose() * q - MatrixXd::Identity(d, d)).norm() <= bound * std::sqrt(static_cast<double>(d)));
  }
}

// The one-side route's eigenpairs (internal): the smaller side of 0 of a symmetric tridiagonal T,
// against Eigen's dense solver of T. Compared through V·Λ·Vᵀ (signs and rotations inside a cluster
// are arbitrary) and the side's values, both within 64·n·u·‖T‖_F, the order of either method's
// backward error (MRRR: O(n·u·‖T‖) residuals and orthogonality; Demmel, Marques, Parlett & Vömel
// 2008) with c = 64. Cases: noise-dominated (negative side, computed alone by dlarrv), mostly
// negative (positive side), strongly diagonally dominant (dlarrr grants relative accuracy: the
// dlarrj refinement), and T split into two blocks (dstemr computes every pair instead).
TEST_CASE("tridiagonal side: the smaller side's eigenpairs, alone where dlarrv can", "[psd_projection]") {
  SeededNoiseSource source(48);
  dpstream::linalg::detail::TridiagonalReduction reduction;
  dpstream::linalg::detail::TridiagonalSide side;
  auto check_side = [&](const Eigen::VectorXd& a, const Eigen::VectorXd& b, bool expect_negative, bool expect_alone) {
    const Index n = a.size();
    MatrixXd t = MatrixXd::Zero(n, n);
    t.diagonal() = a;
    t.diagonal(-1) = b;
    t.diagonal(1) = b;
    const SymmetricEigenSolver reference(t);
    const Eigen::VectorXd& all = reference.eigenvalues();
    Index negatives = 0;
    while (negatives < n && all(negatives) <= 0) ++negatives;
    const Index first = expect_negative ? 0 : negatives, m = expect_negative ? negatives : n - negatives;
    REQUIRE(side.compute(a, b));
    INFO("n = " << n << ", side " << (expect_negative ? "negative" : "positive") << " of " << m);
    CHECK(side.negative_side() == expect_negative);
    CHECK(side.side_only() == expect_alone);
    REQUIRE(side.values().size() == m);
    if (m == 0) return;
    const double bound = 64.0 * static_cast<double>(n) * kEpsilon * t.norm();
    CHECK((side.values() - all.segment(first, m)).cwiseAbs().maxCoeff() <= bound);
    const MatrixXd v = side.vectors();
    const MatrixXd u = reference.eigenvectors().middleCols(first, m);
    CHECK((v * side.values().asDiagonal() * v.transpose() - u * all.segment(first, m).asDiagonal() * u.transpose())
              .norm() <= bound);
    CHECK((v.transpose() * v - MatrixXd::Identity(m, m)).cwiseAbs().maxCoeff() <= 64.0 * static_cast<double>(n) * kEpsilon);
  };
  for (const Index n : {Index{3}, Index{17}, Index{60}, Index{200}}) {
    reduction.compute(noisy_covariance(n, std::min<Index>(n, 5), 100.0, 30.0, source));
    check_side(reduction.diagonal(), reduction.sub_diagonal(), true, true);
    reduction.compute(-noisy_covariance(n, std::min<Index>(n, 3), 100.0, 1.0, source));
    check_side(reduction.diagonal(), reduction.sub_diagonal(), false, true);
  }
  // Diagonally dominant, graded diagonal of both signs (fewer negative ones).
  const Index n = 80;
  Eigen::VectorXd a(n), b(n - 1);
  for (Index i = 0; i < n; ++i) a(i) = (i % 3 == 0 ? -1.0 : 1.0) * (1.0 + static_cast<double>(i));
  for (Index i = 0; i + 1 < n; ++i) b(i) = 1e-3 * source.gaussian();
  check_side(a, b, true, true);
  // Split: a zero subdiagonal entry makes two blocks.
  b(n / 2) = 0;
  check_side(a, b, true, false);
}

TEST_CASE("PSD projection: repeated eigenvalues on both sides", "[psd_projection]") {
  // Q·diag(−2 ×20, 3 ×40)·Qᵀ: two exact clusters, MRRR's hard case. Projection: 3·Q₊Q₊ᵀ.
  SeededNoiseSource source(42);
  const Index d = 60;
  const MatrixXd q = orthonormal_columns(gaussian_matrix(d, d, source));
  Eigen::VectorXd values(d);
  values.head(20).setConstant(-2.0);
  values.tail(40).setConstant(3.0);
  const MatrixXd c = q * values.asDiagonal() * q.transpose();
  const MatrixXd expected = 3.0 * q.rightCols(40) * q.rightCols(40).transpose();
  MatrixXd projected = c;
  project_psd(projected);
  CHECK((projected - expected).norm() <= round_off_bound(c));
  check_routes_agree(c);
}

TEST_CASE("PSD projection: the result is the projection (PSD, C − P negative semidefinite, complementary)",
          "[psd_projection]") {
  // The Frobenius projection P of C onto the PSD cone is characterised by P ⪰ 0, C − P ⪯ 0 and
  // P(C − P) = 0 (both share eigenvectors, with disjoint supports): checked on eigenvalues and the
  // product, each to the round-off bound above.
  SeededNoiseSource source(43);
  const MatrixXd c = noisy_covariance(120, 4, 50.0, 20.0, source);
  for (const PsdRoute route : {PsdRoute::one_side, PsdRoute::full_solve}) {
    MatrixXd p = c;
    project_psd(p, route);
    const double bound = round_off_bound(c);
    CHECK(SymmetricEigenSolver(p, Eigen::EigenvaluesOnly).eigenvalues()(0) >= -bound);
    const MatrixXd rest = c - p;
    CHECK(SymmetricEigenSolver(rest, Eigen::EigenvaluesOnly).eigenvalues()(119) <= bound);
    CHECK((p * rest).norm() <= bound * c.norm());
    // Not vacuous: about half of C's spectrum was negative, so the projection moved it.
    CHECK(rest.norm() > 0.1 * c.norm());
  }
}

TEST_CASE("PSD projection: PSD input is kept, negative definite input becomes 0, small sizes", "[psd_projection]") {
  SeededNoiseSource source(44);
  const MatrixXd f = gaussian_matrix(30, 30, source);
  const MatrixXd psd = f * f.transpose();
  MatrixXd kept = psd;
  CHECK(project_psd(kept) == PsdRoute::one_side);
  CHECK((kept - psd).norm() <= round_off_bound(psd));

  MatrixXd negative = -psd;
  project_psd(negative);
  CHECK(negative.norm() <= round_off_bound(psd));

  MatrixXd zero = MatrixXd::Zero(4, 4);
  project_psd(zero);
  CHECK(zero.isZero(0.0));

  MatrixXd one(1, 1);
  one(0, 0) = -3.0;
  project_psd(one);
  CHECK(one(0, 0) == 0.0);
  one(0, 0) = 2.5;
  project_psd(one);
  CHECK(one(0, 0) == 2.5);

  MatrixXd empty(0, 0);
  project_psd(empty);
  CHECK(empty.size() == 0);
}

TEST_CASE("PSD projection: only the lower triangle is read", "[psd_projection]") {
  SeededNoiseSource source(45);
  const MatrixXd c = noisy_covariance(40, 3, 10.0, 5.0, source);
  MatrixXd lower_only = c;
  lower_only.triangularView<Eigen::StrictlyUpper>().setConstant(1e300);
  MatrixXd full = c;
  project_psd(lower_only);
  project_psd(full);
  CHECK(lower_only == full);
}

// A PsdProjector keeps its buffers between calls; whatever it projected before (other sizes, the
// other side of the spectrum, a fallback-free PSD input, a copy's empty buffers), each result is
// project_psd's, bit for bit.
TEST_CASE("PSD projection: a projector reused across sizes and sides gives project_psd's bits", "[psd_projection]") {
  SeededNoiseSource source(46);
  dpstream::linalg::PsdProjector projector;
  for (const Index d : {Index{70}, Index{20}, Index{70}, Index{1}, Index{5}, Index{33}}) {
    for (const double signal : {1.0, 40.0}) {  // the negative side is smaller, then the positive one
      const MatrixXd c = noisy_covariance(d, std::min<Index>(3, d), signal * static_cast<double>(d), 5.0, source);
      MatrixXd reused = c, fresh = c;
      dpstream::linalg::PsdProjector copy = projector;
      MatrixXd copied = c;
      INFO("d = " << d << ", signal " << signal);
      CHECK(projector.project(reused) == project_psd(fresh));
      copy.project(copied);
      CHECK(reused == fresh);
      CHECK(copied == fresh);
    }
  }
}

// Every path of the kernel: rows in full 3-packet panels, in 1-packet panels and the last
// d mod lanes (d = 1 … 70 at any vector width from 2 to 16 lanes), more than one 256-column pass
// (d = 300, 530), b a multiple of the tile's 4 or 8 columns or not (1 … 17), blocks with an outer
// stride, both precisions; symmetric_product_upper bit for bit the same from the upper triangle.
// Tolerance: each entry is a dot product of length d, whose rounding in
// any order is ≤ d·u·Σ_j |c_ij||q_jc| (Higham, Accuracy and Stability, §3.1); the check uses that
// bound entry by entry, against Eigen's product.
TEST_CASE("symmetric_product: C·Q for symmetric C equals Eigen's product within the dot-product bound",
          "[psd_projection][symmetric_product]") {
  SeededNoiseSource source(41);
  for (const Index d : {1, 3, 4, 7, 9, 16, 33, 47, 48, 49, 70, 300, 530}) {
    for (const Index b : {1, 2, 3, 5, 7, 8, 9, 17}) {
      const MatrixXd g = gaussian_matrix(d, d, source);
      const MatrixXd c = g + g.transpose();
      const MatrixXd wide = gaussian_matrix(d, b + 2, source);
      const auto q = wide.middleCols(1, b);  // outer stride d, not b's own
      const MatrixXd bound = static_cast<double>(d) * c.cwiseAbs() * q.cwiseAbs();
      INFO("d = " << d << ", b = " << b);

      MatrixXd out = MatrixXd::Constant(d, b + 1, 7.0);
      dpstream::linalg::symmetric_product(c, q, out.leftCols(b));
      CHECK(((out.leftCols(b) - c * q).array().abs() <= kEpsilon * bound.array()).all());
      CHECK((out.col(b).array() == 7.0).all());  // nothing written past w

      // From the upper triangle alone (the strict lower one NaN, never read): the same bits.
      MatrixXd upper = c, from_upper = MatrixXd::Constant(d, b + 1, 7.0);
      upper.triangularView<Eigen::StrictlyLower>().setConstant(std::nan(""));
      dpstream::linalg::symmetric_product_upper(upper, q, from_upper.leftCols(b));
      CHECK(from_upper.leftCols(b) == out.leftCols(b));
      CHECK((from_upper.col(b).array() == 7.0).all());

      const Eigen::MatrixXf cf = c.cast<float>(), qf = q.cast<float>();
      Eigen::MatrixXf outf(d, b);
      dpstream::linalg::symmetric_product(cf, qf, outf);
      const MatrixXd exact = cf.cast<double>() * qf.cast<double>();
      const double unit = std::numeric_limits<float>::epsilon();
      CHECK(((outf.cast<double>() - exact).array().abs() <= unit * (bound.array() + exact.array().abs())).all());
    }
  }
  MatrixXd wrong(3, 2);
  CHECK_THROWS_AS(dpstream::linalg::symmetric_product(MatrixXd::Identity(4, 4), MatrixXd::Ones(4, 2), wrong),
                  std::invalid_argument);
  CHECK_THROWS_AS(dpstream::linalg::symmetric_product_upper(MatrixXd::Identity(4, 4), MatrixXd::Ones(4, 2), wrong),
                  std::invalid_argument);
}

// The tiled mirrors copy one triangle onto the other exactly and leave the source triangle and the
// diagonal alone: sizes below, at and across the 32-wide tile (1, 31, 32, 33, 70), and a block with
// an outer stride (Ref to the middle of a larger matrix, whose other entries must stay untouched).
TEST_CASE("mirror_lower / mirror_upper: one triangle copied onto the other, bit for bit", "[psd_projection][mirror]") {
  SeededNoiseSource source(43);
  for (const Index d : {1, 31, 32, 33, 70}) {
    INFO("d = " << d);
    const MatrixXd g = gaussian_matrix(d + 2, d + 1, source);
    MatrixXd lower = g, upper = g;
    dpstream::linalg::mirror_lower(lower.block(1, 0, d, d));
    dpstream::linalg::mirror_upper(upper.block(1, 0, d, d));
    const MatrixXd from_lower = g.block(1, 0, d, d).triangularView<Eigen::Lower>();
    const MatrixXd from_upper = g.block(1, 0, d, d).triangularView<Eigen::Upper>();
    CHECK(lower.block(1, 0, d, d) == MatrixXd(from_lower.selfadjointView<Eigen::Lower>()));
    CHECK(upper.block(1, 0, d, d) == MatrixXd(from_upper.selfadjointView<Eigen::Upper>()));
    CHECK(lower.row(0) == g.row(0));  // outside the block: untouched
    CHECK(upper.row(d + 1) == g.row(d + 1));
    CHECK(lower.col(d) == g.col(d));
  }
}

}  // namespace test_psd_projection
