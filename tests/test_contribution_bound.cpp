#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "check_throws.hpp"
#include "unaccounted.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/contribution_bound.hpp"

namespace test_contribution_bound {

using dpstream::InvalidParameter;
using dpstream::InvalidRow;
using dpstream::ResourceLimit;
using dpstream::stream::ContributionBound;
using dpstream::stream::ContributionBoundOptions;
using dpstream::stream::Participation;
using Catch::Matchers::Contains;

ContributionBoundOptions bound_options(std::uint32_t k, std::uint64_t b = 0, std::uint64_t bytes = 1 << 20) {
  ContributionBoundOptions o;
  o.participation = {k, b};
  o.max_state_bytes = bytes;
  return o;
}

TEST_CASE("ContributionBound keeps a unit's first k rows and counts the rest", "[bound]") {
  ContributionBound bound(bound_options(2));
  std::vector<bool> kept;
  const std::vector<std::string> keys = {"ann", "bob", "ann", "ann", "bob", "bob", "cy", "ann"};
  for (std::uint64_t i = 0; i < keys.size(); ++i) kept.push_back(bound.admit(std::string_view(keys[i]), i, 0));
  CHECK(kept == std::vector<bool>{true, true, true, false, true, false, true, false});
  CHECK(bound.counts().seen == 8);
  CHECK(bound.counts().kept == 5);
  CHECK(bound.counts().over_rows == 3);
  CHECK(bound.counts().too_close == 0);
  CHECK(bound.counts().units == 3);
  CHECK(bound.state_bytes() == 3 * ContributionBound::kBytesPerUnit);
}

TEST_CASE("ContributionBound keeps one row a block, b blocks apart, with a separation", "[bound]") {
  ContributionBound bound(bound_options(3, 4));
  CHECK(bound.admit(std::string_view("u"), 0, 0));
  CHECK_FALSE(bound.admit(std::string_view("u"), 1, 0));  // same block
  CHECK_FALSE(bound.admit(std::string_view("u"), 2, 3));  // 3 < b blocks later
  CHECK(bound.admit(std::string_view("v"), 3, 3));        // another unit is not affected
  CHECK(bound.admit(std::string_view("u"), 4, 4));        // exactly b later
  CHECK(bound.admit(std::string_view("u"), 5, 9));
  CHECK_FALSE(bound.admit(std::string_view("u"), 6, 20));  // k = 3 reached
  CHECK(bound.counts().too_close == 2);
  CHECK(bound.counts().over_rows == 1);
  CHECK_THROWS_NAMING(bound.admit(std::string_view("v"), 7, 19), InvalidRow, Contains("row 7") && Contains("before"));
}

// The decision for a row depends only on its own unit's earlier rows: removing every row of one
// unit (positions of the others kept) changes no other row's decision. Checked on a random stream
// of heavy-tailed units, for every unit in turn; it fails for any rule that looks across units (a
// global cap, a quota shared by blocks).
TEST_CASE("removing one unit's rows changes no decision about another unit's", "[bound]") {
  std::mt19937_64 rng(7);
  std::geometric_distribution<int> unit_of(0.2);
  const std::uint64_t n = 400, block_rows = 5;
  std::vector<std::string> keys(n);
  for (auto& key : keys) key = "u" + std::to_string(unit_of(rng));
  auto decide = [&](const std::string& without) {
    ContributionBound bound(bound_options(3, 2));
    std::vector<int> decision(n, -1);  // -1: the removed unit's row
    for (std::uint64_t i = 0; i < n; ++i)
      if (keys[i] != without) decision[i] = bound.admit(std::string_view(keys[i]), i, i / block_rows) ? 1 : 0;
    return decision;
  };
  const std::vector<int> all = decide("");
  std::uint64_t dropped = 0;
  for (int d : all) dropped += d == 0;
  REQUIRE(dropped > 50);  // the stream exercises the bound
  for (int u = 0; u < 10; ++u) {
    const std::string removed = "u" + std::to_string(u);
    const std::vector<int> without = decide(removed);
    for (std::uint64_t i = 0; i < n; ++i)
      if (keys[i] != removed) REQUIRE(without[i] == all[i]);
  }
}

TEST_CASE("ContributionBound refuses missing and empty keys naming the row", "[bound]") {
  ContributionBound bound(bound_options(1));
  const std::string key = "a";
  CHECK(bound.admit(&key, 0, 0));
  CHECK_THROWS_NAMING(bound.admit(static_cast<const std::string*>(nullptr), 1, 0), InvalidRow,
                      Contains("row 1") && Contains("no unit key"));
  CHECK_THROWS_NAMING(bound.admit(std::string_view(""), 2, 0), InvalidRow, Contains("row 2") && Contains("empty"));
  CHECK(bound.counts().seen == 1);  // refused rows are not counted as seen
}

TEST_CASE("the per-unit state is held to its budget, naming the row that would exceed it", "[bound]") {
  const std::uint64_t per_unit = ContributionBound::kBytesPerUnit;
  ContributionBound bound(bound_options(1, 0, 3 * per_unit));
  CHECK(bound.max_units() == 3);
  CHECK(bound.admit(std::string_view("a"), 0, 0));
  CHECK(bound.admit(std::string_view("b"), 1, 0));
  CHECK(bound.admit(std::string_view("c"), 2, 0));
  CHECK_FALSE(bound.admit(std::string_view("a"), 3, 0));  // a known unit takes no more state
  CHECK_THROWS_NAMING(bound.admit(std::string_view("d"), 4, 0), ResourceLimit,
                      Contains("row 4") && Contains("distinct unit number 4"));
  CHECK(bound.counts().units == 3);
  // A key over 15 bytes takes its length + 24 more.
  ContributionBound long_keys(bound_options(1, 0, 2 * per_unit + 40));
  CHECK(long_keys.admit(std::string_view("a-key-of-16-byte"), 0, 0));
  CHECK(long_keys.state_bytes() == per_unit + 16 + 24);
  CHECK_THROWS_AS(long_keys.admit(std::string_view("b-key-of-16-byte"), 1, 0), ResourceLimit);
  // A budget over the memory limit, or under one unit, is refused at construction.
  CHECK_THROWS_AS(ContributionBound(bound_options(1, 0, per_unit - 1)), ResourceLimit);
  CHECK_THROWS_AS(ContributionBound(bound_options(1, 0, UINT64_MAX / 2)), ResourceLimit);
  CHECK_THROWS_AS(ContributionBound(bound_options(0)), InvalidParameter);
}

// Unit level with rows sharing blocks (b = 0): every strategy is calibrated for k times one row's
// sensitivity (participation.hpp), so its draws are k times as large at the same target, and the
// accountant is charged that target once; a separation b >= 1 never costs more.
TEST_CASE("a unit-level continual sum is calibrated for k rows and charged the unit-level target",
          "[bound][continual]") {
  using namespace dpstream::stream;
  for (NoiseStrategy strategy : {NoiseStrategy::plain_tree, NoiseStrategy::honaker_tree, NoiseStrategy::sqrt_toeplitz,
                                 NoiseStrategy::blt, NoiseStrategy::separable}) {
    ContinualSumOptions row;
    row.horizon = 64;
    row.strategy = strategy;
    row.privacy.noise.seed = 1;
    ContinualSumOptions unit = row;
    unit.participation = {4, 0};
    dpstream::privacy::PrivacyAccountant accountant(dpstream::privacy::EpsDelta(1.0, 1e-6));
    ContinualVectorSum row_sum(3, row, test_budget::unaccounted()), unit_sum(3, unit, accountant);
    INFO(to_string(strategy));
    CHECK(unit_sum.noise().draw_sigma() == Approx(4.0 * row_sum.noise().draw_sigma()).epsilon(1e-9));
    CHECK(unit_sum.mu() == Approx(row_sum.mu()).epsilon(1e-9));  // μ of the unit = μ of one row before
    REQUIRE(accountant.ledger().size() == 1);
    CHECK_THAT(accountant.ledger()[0].label, Contains("one unit: at most 4 rows, several may share a release step"));
    CHECK(accountant.spent().epsilon == Approx(1.0).epsilon(1e-6));
    unit.participation = {4, 2};
    const ContinualVectorSum separated(3, unit, test_budget::unaccounted());
    CHECK(separated.noise().draw_sigma() <= unit_sum.noise().draw_sigma() * (1 + 1e-12));
  }
  ContinualSumOptions bad;
  bad.participation = {0, 3};
  CHECK_THROWS_NAMING(ContinualVectorSum(3, bad, test_budget::unaccounted()), InvalidParameter, Contains("max_rows"));
}

// Analyze Gauss at the unit level: σ for sensitivity k·L² (k times the row level's at the same
// target), while each row is still held to L, not to the √k·L the mechanism is built with.
TEST_CASE("unit-level Analyze Gauss is calibrated for k·L² and checks rows against L", "[bound]") {
  dpstream::pca::GaussianPcaOptions row;
  row.k = 1;
  row.mechanism.privacy.noise.seed = 1;
  dpstream::pca::GaussianPcaOptions unit = row;
  unit.max_rows_per_unit = 4;
  const dpstream::pca::GaussianPca row_pca(3, row);
  dpstream::pca::GaussianPca unit_pca(3, unit);
  CHECK(unit_pca.sigma() == Approx(4.0 * row_pca.sigma()).epsilon(1e-12));
  Eigen::MatrixXd rows = Eigen::MatrixXd::Zero(2, 3);
  rows(1, 0) = 1.5;  // over L = 1, under √4·L = 2
  CHECK_THROWS_NAMING(unit_pca.release(rows, test_budget::unaccounted()), InvalidRow, Contains("row 1"));
  dpstream::privacy::PrivacyAccountant accountant(dpstream::privacy::EpsDelta(1.0, 1e-6));
  rows(1, 0) = 1.0;
  unit_pca.release(rows, accountant);
  REQUIRE(accountant.ledger().size() == 1);
  CHECK(accountant.ledger()[0].label.find("all rows of one unit, at most 4") != std::string::npos);
}

// The noisy power method at the unit level: every round calibrated for k·Δ (σ k times the row
// level's, the same μ), charged once with the unit in the label.
TEST_CASE("unit-level noisy power method is calibrated for k rows", "[bound]") {
  dpstream::pca::NoisyPowerMethodOptions row;
  row.k = 1;
  row.iterations = 3;
  row.privacy.noise.seed = 1;
  dpstream::pca::NoisyPowerMethodOptions unit = row;
  unit.max_rows_per_unit = 5;
  const dpstream::pca::NoisyPowerMethod row_power(3, row);
  dpstream::pca::NoisyPowerMethod unit_power(3, unit);
  CHECK(unit_power.sigma() == Approx(5.0 * row_power.sigma()).epsilon(1e-12));
  CHECK(unit_power.mu() == Approx(row_power.mu()).epsilon(1e-12));
  dpstream::privacy::PrivacyAccountant accountant(dpstream::privacy::EpsDelta(1.0, 1e-6));
  unit_power.run(Eigen::MatrixXd::Identity(3, 3) * 0.5, accountant);
  REQUIRE(accountant.ledger().size() == 1);
  CHECK_THAT(accountant.ledger()[0].label, Contains("all rows of one unit, at most 5"));
}

}  // namespace test_contribution_bound
