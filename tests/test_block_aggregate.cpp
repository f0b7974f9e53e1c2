// Pre-aggregated blocks (stream/block_aggregate.hpp): parts summed by "workers" over partitions that
// do not line up with the blocks give a single process's releases; every inconsistent part is refused
// before it changes the stream; the wire format round-trips and refuses corruption.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/stream/block_aggregate.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "unaccounted.hpp"

namespace test_block_aggregate {

using namespace dpstream;
using namespace dpstream::stream;

namespace {

// Gaussian rows, a quarter of them over norm 1 (so the guard clips some).
Eigen::MatrixXd rows_with_outliers(Eigen::Index n, Eigen::Index d, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd rows(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) rows(i, j) = normal(gen);
    rows.row(i) /= rows.row(i).norm() * (i % 4 == 0 ? 0.5 : 1.5);
  }
  return rows;
}

ContinualSumOptions seeded(std::uint64_t horizon, std::uint64_t block, std::uint64_t seed) {
  ContinualSumOptions o;
  o.horizon = horizon;
  o.block_rows = block;
  o.privacy.noise.seed = seed;
  o.shape = privacy::SymmetricNoiseShape::goe;
  return o;
}

RowGuardOptions clip_guard(Eigen::Index d) { return {d, 1.0, OverNormPolicy::clip}; }

}  // namespace

TEST_CASE("parts from partitions that straddle blocks give a single process's releases", "[aggregate]") {
  const Eigen::Index d = 5;
  const std::uint64_t block = 7, n = 45;  // 6 full blocks and a partial one, flushed
  const Eigen::MatrixXd a = rows_with_outliers(static_cast<Eigen::Index>(n), d, 3);

  privacy::PrivacyAccountant single_budget({1.0, 1e-6}), split_budget({1.0, 1e-6});
  ContinualCovariance single(d, seeded(7, block, 11), single_budget);
  ContinualCovariance split(d, seeded(7, block, 11), split_budget);
  std::vector<Eigen::MatrixXd> single_releases, split_releases;
  single.subscribe([&](const ContinualCovariance::Release& r) { single_releases.push_back(r.noisy_prefix); });
  split.subscribe([&](const ContinualCovariance::Release& r) { split_releases.push_back(r.noisy_prefix); });

  RowGuard guard(clip_guard(d));
  Eigen::MatrixXd guarded = a;
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    Eigen::VectorXd row = a.row(i).transpose();
    guard.admit(row);
    guarded.row(i) = row.transpose();
  }
  single.update_block(guarded);
  single.flush();

  // Three "workers" with partitions of 10, 19 and 16 rows: none starts or ends on a block boundary.
  std::vector<BlockAggregate> parts;
  RowGuardCounts counted;
  for (const auto& [first, rows] : std::vector<std::pair<Eigen::Index, Eigen::Index>>{{0, 10}, {10, 19}, {29, 16}}) {
    for (BlockAggregate& p : aggregate_rows("covariance", a.middleRows(first, rows), first, block, clip_guard(d))) {
      counted.seen += p.counts.seen;
      counted.clipped += p.counts.clipped;
      // The reduction: a part that continues the previous one's block is merged into it.
      if (!parts.empty() && mergeable(parts.back(), p))
        parts.back() = merge_aggregates(parts.back(), p);
      else
        parts.push_back(BlockAggregate::load(p.save()));  // over the wire and back
    }
  }
  REQUIRE(parts.size() == 7);
  for (const BlockAggregate& p : parts) split.add_aggregate(p);
  split.flush();

  CHECK(counted.seen == guard.counts().seen);
  CHECK(counted.clipped == guard.counts().clipped);
  CHECK(counted.clipped > 0);
  REQUIRE(split_releases.size() == single_releases.size());
  REQUIRE(split_releases.size() == 7);
  CHECK(split.rows() == single.rows());
  // Same noise (same seed, same strategy, one draw per release); the exact sums differ only by the
  // order of at most 45 additions of terms ≤ 1 (|error| ≤ 45·2^-53·45 ≈ 2e-13), so the releases agree
  // to that, or by one step of the snapping grid where the sum sits on a grid boundary: 2^-30·σ is
  // below 1e-9 of the largest entry, which is the tolerance.
  for (std::size_t t = 0; t < single_releases.size(); ++t) {
    const double scale = single_releases[t].cwiseAbs().maxCoeff();
    CHECK((split_releases[t] - single_releases[t]).cwiseAbs().maxCoeff() <= 1e-9 * scale);
  }
  // The budget is charged once, at construction, for the split stream as for the single one.
  CHECK(split_budget.ledger().size() == 1);
  CHECK(split_budget.spent().epsilon == single_budget.spent().epsilon);
}

TEST_CASE("an inconsistent part is refused, naming what, and the stream is unchanged", "[aggregate][privacy]") {
  const Eigen::Index d = 3;
  const Eigen::MatrixXd a = rows_with_outliers(12, d, 5);
  ContinualCovariance sum(d, seeded(3, 4, 1), test_budget::unaccounted());
  const std::vector<BlockAggregate> parts = aggregate_rows("covariance", a, 0, 4, clip_guard(d));
  REQUIRE(parts.size() == 3);
  sum.add_aggregate(parts[0]);
  REQUIRE(sum.steps() == 1);

  CHECK_THROWS_NAMING(sum.add_aggregate(parts[0]), InvalidParameter, Catch::Contains("rows counted twice"));
  CHECK_THROWS_NAMING(sum.add_aggregate(parts[2]), InvalidParameter, Catch::Contains("rows missing before it"));
  BlockAggregate bad = parts[1];
  bad.counts.accepted -= 1;  // a worker that summed a row its guard did not pass
  CHECK_THROWS_NAMING(sum.add_aggregate(bad), InvalidParameter, Catch::Contains("the guard's counts"));
  bad = parts[1];
  bad.guard.norm_bound = 2.0;
  CHECK_THROWS_NAMING(sum.add_aggregate(bad), InvalidParameter, Catch::Contains("guarded with norm bound 2"));
  bad = parts[1];
  bad.packed_sum(0) += 10.0;  // trace over rows × L²: a row that was never clipped
  CHECK_THROWS_NAMING(sum.add_aggregate(bad), InvalidParameter, Catch::Contains("exceeds rows × L²"));
  bad = parts[1];
  bad.packed_sum(2) = -0.5;  // the second diagonal entry (packed by columns: 0; 1, 2)
  CHECK_THROWS_NAMING(sum.add_aggregate(bad), InvalidParameter, Catch::Contains("diagonal entry 1 is negative"));
  bad = parts[1];
  bad.packed_sum(1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_NAMING(sum.add_aggregate(bad), InvalidParameter, Catch::Contains("non-finite"));
  bad = parts[1];
  bad.block_rows = 5;
  CHECK_THROWS_NAMING(sum.add_aggregate(bad), InvalidParameter, Catch::Contains("cut for blocks of 5"));
  // Two parts merged across a release boundary cannot be cut again: refused.
  CHECK_FALSE(mergeable(parts[1], parts[2]));
  CHECK_THROWS_AS(merge_aggregates(parts[1], parts[2]), InvalidParameter);
  bad = parts[1];
  bad.rows = 5, bad.counts.accepted = 5, bad.counts.seen = 5;
  CHECK_THROWS_NAMING(sum.add_aggregate(bad), InvalidParameter, Catch::Contains("crosses the release boundary at row 8"));
  ContinualVectorSum vectors(d, seeded(3, 4, 1), test_budget::unaccounted());
  CHECK_THROWS_NAMING(vectors.add_aggregate(parts[0]), InvalidParameter, Catch::Contains("this stream sums vector"));
  CHECK(sum.rows() == 4);
  CHECK(sum.steps() == 1);

  sum.add_aggregate(parts[1]);
  sum.add_aggregate(parts[2]);
  CHECK(sum.steps() == 3);
  // Past the horizon: BudgetExhausted, as for rows.
  const auto more = aggregate_rows("covariance", a.topRows(1), 12, 4, clip_guard(d));
  CHECK_THROWS_AS(sum.add_aggregate(more[0]), BudgetExhausted);
}

TEST_CASE("workers name bad rows by their place in the stream; the wire format refuses corruption", "[aggregate]") {
  const Eigen::Index d = 4;
  Eigen::MatrixXd a = rows_with_outliers(6, d, 9);
  a(4, 2) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_NAMING(aggregate_rows("covariance", a, 100, 8, clip_guard(d)), InvalidRow,
                      Catch::StartsWith("row 104: ") && Catch::Contains("column 2"));
  RowGuardOptions reject = clip_guard(d);
  reject.over_norm = OverNormPolicy::reject;
  CHECK_THROWS_NAMING(aggregate_rows("vector", a.topRows(2), 50, 8, reject), InvalidRow, Catch::StartsWith("row 50: "));
  CHECK_THROWS_AS(aggregate_rows("matrix", a.topRows(2), 0, 8, clip_guard(d)), InvalidParameter);

  const auto parts = aggregate_rows("vector", a.topRows(4), 6, 8, clip_guard(d));
  REQUIRE(parts.size() == 2);  // rows 6, 7 | 8, 9
  CHECK(parts[0].rows == 2);
  CHECK(parts[1].first_row == 8);
  std::string bytes = parts[1].save();
  const BlockAggregate back = BlockAggregate::load(bytes);
  CHECK(back.packed_sum == parts[1].packed_sum);
  CHECK(back.counts.clipped == parts[1].counts.clipped);
  bytes[bytes.size() / 2] ^= 1;
  CHECK_THROWS_AS(BlockAggregate::load(bytes), CorruptInput);
  CHECK_THROWS_AS(BlockAggregate::load(bytes.substr(0, 10)), CorruptInput);
}

}  // namespace test_block_aggregate
