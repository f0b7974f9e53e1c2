// Exact accumulators (update, block update, merge, pack) and the vectorised snap.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/snap.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace test_accumulators {

using namespace dpstream;
using namespace dpstream::stream;

namespace {
Eigen::MatrixXd random_rows(Eigen::Index n, Eigen::Index d, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd rows(n, d);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < d; ++j) rows(i, j) = normal(gen);
  return rows;
}
}  // namespace

TEST_CASE("covariance accumulator: rows, blocks and batches all give AᵀA", "[accumulator]") {
  // d = 17 takes the rank-update path, d = 200 the column-panel GEMM path (3 panels, the last partial).
  for (Eigen::Index d : {17, 200}) {
    INFO("d = " << d);
    const Eigen::MatrixXd a = random_rows(300, d, 1);
    const Eigen::MatrixXd exact = a.transpose() * a;
    // Batch of 7 rows: 300 single rows cross many batch flushes.
    CovarianceAccumulator by_row(d, 7), by_block(d), mixed(d, 5);
    for (Eigen::Index i = 0; i < a.rows(); ++i) by_row.update(a.row(i).transpose());
    by_block.update_block(a);
    mixed.update_block(a.topRows(101));
    for (Eigen::Index i = 101; i < 150; ++i) mixed.update(a.row(i).transpose());
    mixed.update_block(a.bottomRows(150));
    // Different summation orders: agreement to a few ulps of the entries' magnitude (|C_ij| ≲ 300·|a|²).
    const double tol = 1e-12 * exact.cwiseAbs().maxCoeff();
    for (const auto* acc : {&by_row, &by_block, &mixed}) {
      CHECK(acc->rows() == 300);
      const Eigen::MatrixXd m = acc->matrix();
      CHECK((m - exact).cwiseAbs().maxCoeff() <= tol);
      CHECK(m == m.transpose());  // bitwise symmetric
    }
  }
}

TEST_CASE("accumulators merge (sharded ingestion) and round-trip through their packed form", "[accumulator]") {
  const Eigen::MatrixXd a = random_rows(120, 9, 2);
  CovarianceAccumulator whole(9), left(9), right(9);
  whole.update_block(a);
  for (Eigen::Index i = 0; i < 50; ++i) left.update(a.row(i).transpose());  // still buffered
  right.update_block(a.bottomRows(70));
  left.merge(right);
  CHECK(left.rows() == 120);
  CHECK((left.matrix() - whole.matrix()).cwiseAbs().maxCoeff() <= 1e-12 * whole.matrix().cwiseAbs().maxCoeff());

  Eigen::VectorXd packed(whole.packed_size());
  CHECK(packed.size() == 9 * 10 / 2);
  whole.pack(packed);
  CovarianceAccumulator restored(9);
  restored.unpack(packed, whole.rows());
  CHECK(restored.matrix() == whole.matrix());
  CHECK(restored.rows() == 120);
  CovarianceAccumulator copy = left;  // copies flush the batch first
  CHECK(copy.matrix() == left.matrix());

  VectorAccumulator v(9), w(9);
  v.update_block(a.topRows(60));
  for (Eigen::Index i = 60; i < 120; ++i) w.update(a.row(i).transpose());
  v.merge(w);
  CHECK((v.sum() - a.colwise().sum().transpose()).cwiseAbs().maxCoeff() <= 1e-12 * a.cwiseAbs().sum());

  CHECK_THROWS_AS(v.merge(VectorAccumulator(8)), InvalidParameter);
  CHECK_THROWS_AS(left.merge(CovarianceAccumulator(8)), InvalidParameter);
  CHECK_THROWS_AS(restored.unpack(Eigen::VectorXd(44), 1), InvalidParameter);
  CHECK_THROWS_AS(CovarianceAccumulator(0), InvalidParameter);
  CHECK_THROWS_AS(CovarianceAccumulator(3, -1), InvalidParameter);
  CHECK_THROWS_AS(v.update(Eigen::VectorXd(3)), InvalidParameter);
}

TEST_CASE("covariance release: noise on the packed upper triangle, GOE scaling, mirrored", "[accumulator]") {
  CovarianceAccumulator acc(4);
  Eigen::VectorXd row(4);
  row << 1, 2, 3, 4;
  acc.update(row);
  Eigen::VectorXd noise = Eigen::VectorXd::LinSpaced(10, 1, 10);  // packed (0,0),(0,1),(1,1),(0,2),...
  Eigen::MatrixXd out;
  acc.release(noise, 1.0, 0x1.0p-40, out);
  CHECK(out(0, 0) == 1 + 1);
  CHECK(out(0, 1) == 2 + 2);
  CHECK(out(1, 1) == 4 + 3);
  CHECK(out(2, 3) == 12 + 9);
  CHECK(out(3, 3) == 16 + 10);
  CHECK(out == out.transpose());
  acc.release(noise, 0.5, 0x1.0p-40, out);
  CHECK(out(0, 0) == 1 + 1);    // diagonal unscaled
  CHECK(out(0, 1) == 2 + 1.0);  // off-diagonal scaled
  CHECK(out(1, 0) == out(0, 1));
}

TEST_CASE("vector snap equals the scalar snap, ties and large values included", "[snap]") {
  std::mt19937_64 gen(5);
  std::normal_distribution<double> normal;
  for (double g : {0x1.0p-40, 0x1.0p-3, 1.0, 0x1.0p10}) {
    std::vector<double> values;
    for (int i = 0; i < 2000; ++i) values.push_back(normal(gen) * std::ldexp(1.0, i % 80 - 20));
    for (double k : {0.5, 1.5, 2.5, -0.5, -2.5, 0x1.0p51 + 0.5, -0x1.0p51 - 1.5, 0x1.0p52, 0x1.8p52 - 1.0})
      values.push_back(k * g);  // ties and the edges of the exact range
    values.push_back(-0.0);
    values.push_back(-0.25 * g);  // snaps to zero: must come out +0
    values.push_back(std::numeric_limits<double>::infinity());
    std::vector<double> expected = values;
    for (double& v : expected) v = privacy::snap_to_grid(v, g);
    privacy::snap_to_grid(std::span<double>(values), g);
    for (std::size_t i = 0; i < values.size(); ++i) {
      INFO("g = " << g << ", i = " << i);
      CHECK(std::bit_cast<std::uint64_t>(values[i]) == std::bit_cast<std::uint64_t>(expected[i]));
    }
  }
  std::vector<double> one = {1.0};
  CHECK_THROWS_AS(privacy::snap_to_grid(std::span<double>(one), 3.0), InvalidParameter);
}

}  // namespace test_accumulators
