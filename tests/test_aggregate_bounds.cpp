// A worker's part must be a sum its row count of guarded rows could make (block_aggregate.hpp):
// forged covariance parts — an off-diagonal no rows give, a matrix that is not positive
// semidefinite — are refused before the stream changes; genuine parts, low-rank ones included,
// give a single process's releases.
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/stream/block_aggregate.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "unaccounted.hpp"

namespace test_aggregate_bounds {

using namespace dpstream;
using namespace dpstream::stream;

namespace {

ContinualSumOptions seeded(std::uint64_t block) {
  ContinualSumOptions o;
  o.horizon = 32;
  o.block_rows = block;
  o.privacy.noise.seed = 7;
  return o;
}

RowGuardOptions clip_guard(Eigen::Index d) { return {d, 1.0, OverNormPolicy::clip}; }

// Packed upper-triangle offset of (i, j), i ≤ j (accumulators.hpp).
Eigen::Index packed(Eigen::Index i, Eigen::Index j) { return j * (j + 1) / 2 + i; }

// A genuine one-row part of a covariance stream in blocks of one, with its sum replaced by `c`.
BlockAggregate one_row_part(const Eigen::MatrixXd& c) {
  const Eigen::Index d = c.rows();
  BlockAggregate part = aggregate_rows("covariance", Eigen::RowVectorXd::Constant(d, 0.1), 0, 1, clip_guard(d)).at(0);
  for (Eigen::Index j = 0; j < d; ++j)
    for (Eigen::Index i = 0; i <= j; ++i) part.packed_sum(packed(i, j)) = c(i, j);
  return part;
}

void refused_unchanged(const BlockAggregate& part, const std::string& reason) {
  ContinualCovariance sum(part.dimension, seeded(1), test_budget::unaccounted());
  CHECK_THROWS_NAMING(sum.add_aggregate(part), InvalidParameter, Catch::Contains(reason));
  CHECK(sum.rows() == 0);
  CHECK(sum.steps() == 0);
}

}  // namespace

TEST_CASE("a one-row part with an off-diagonal no row gives is refused", "[aggregate][privacy]") {
  // Diagonal 0.1 each (trace 0.3 ≤ 1·L²): only |c_01| ≤ √(c_00·c_11) = 0.1 tells it from a row.
  Eigen::MatrixXd c = Eigen::MatrixXd::Identity(3, 3) * 0.1;
  c(0, 1) = c(1, 0) = 1e6;
  refused_unchanged(one_row_part(c), "Cauchy-Schwarz");
}

TEST_CASE("a part that is not positive semidefinite is refused", "[aggregate][privacy]") {
  // (I + 0.9·B)/3 with B = [[0,1,1],[1,0,-1],[1,-1,0]] (eigenvalues 1, 1, −2): trace 1, every
  // |c_ij| = 0.3 ≤ √(c_ii·c_jj) = 1/3, ‖C‖_F = 0.94 ≤ tr C; its smallest eigenvalue is −0.8/3.
  Eigen::Matrix3d b;
  b << 0, 1, 1, 1, 0, -1, 1, -1, 0;
  const Eigen::MatrixXd c = (Eigen::Matrix3d::Identity() + 0.9 * b) / 3.0;
  refused_unchanged(one_row_part(c), "not positive semidefinite");
  // Negative by far less than the rounding allowance: a tiny negative eigenvalue is a rounding.
  Eigen::MatrixXd rank_one = Eigen::VectorXd::Constant(3, 0.5) * Eigen::RowVectorXd::Constant(3, 0.5);
  rank_one(0, 0) -= 1e-17;
  ContinualCovariance sum(3, seeded(1), test_budget::unaccounted());
  CHECK_NOTHROW(sum.add_aggregate(one_row_part(rank_one)));
}

TEST_CASE("a part over the norm bound is still refused; a vector part's size is what it can check", "[aggregate][privacy]") {
  refused_unchanged(one_row_part(Eigen::MatrixXd::Identity(2, 2)), "trace");  // trace 2 > 1·L²
  BlockAggregate v = aggregate_rows("vector", Eigen::RowVectorXd::Constant(2, 0.5), 0, 1, clip_guard(2)).at(0);
  v.packed_sum << 1.0, 1.0;  // norm √2 > 1·L
  ContinualVectorSum vector_sum(2, seeded(1), test_budget::unaccounted());
  CHECK_THROWS_NAMING(vector_sum.add_aggregate(v), InvalidParameter, Catch::Contains("norm"));
}

TEST_CASE("genuine parts, rank-deficient and one-row ones, are accepted and give a single process's releases", "[aggregate]") {
  const Eigen::Index d = 12;  // blocks of 1 and 5 rows: every part has rank < d
  std::mt19937_64 gen(4);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd rows(20, d);
  for (Eigen::Index i = 0; i < rows.rows(); ++i)
    for (Eigen::Index j = 0; j < d; ++j) rows(i, j) = normal(gen) * (i % 3 == 0 ? 1.0 : 1e-3);
  rows.row(4).setZero();
  rows.row(9) = rows.row(8);
  for (const std::uint64_t block : {std::uint64_t{1}, std::uint64_t{5}}) {
    ContinualCovariance single(d, seeded(block), test_budget::unaccounted()), split(d, seeded(block), test_budget::unaccounted());
    RowGuard guard(clip_guard(d));
    Eigen::MatrixXd guarded = rows;
    for (Eigen::Index i = 0; i < rows.rows(); ++i) {
      Eigen::VectorXd row = rows.row(i).transpose();
      guard.admit(row);
      guarded.row(i) = row.transpose();
    }
    single.update_block(guarded);
    for (const BlockAggregate& part : aggregate_rows("covariance", rows, 0, block, clip_guard(d))) split.add_aggregate(part);
    REQUIRE(split.steps() == single.steps());
    // Same noise; the exact sums differ only by the order of ≤ 20 additions of terms ≤ 1 (error
    // ≤ 20·2^-53·20 ≈ 4e-14) or one step of the 2^-30·σ snapping grid: 1e-9 of the largest entry.
    const double scale = single.noisy_prefix().cwiseAbs().maxCoeff();
    CHECK((split.noisy_prefix() - single.noisy_prefix()).cwiseAbs().maxCoeff() <= 1e-9 * scale);
  }
}

}  // namespace test_aggregate_bounds
