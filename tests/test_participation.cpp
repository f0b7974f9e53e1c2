// Sensitivity under (k, b)-participation (stream/participation.hpp): every strategy's closed form or
// bound against brute force over all allowed participation patterns of small horizons, on the C the
// code really uses; k = 1 giving today's values exactly; calibration for a unit; the unit-level charge.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/factorization_noise.hpp"
#include "dpstream/stream/participation.hpp"
#include "dpstream/stream/separable_noise.hpp"
#include "dpstream/stream/tree_noise.hpp"
#include "unaccounted.hpp"

namespace test_participation {

using namespace dpstream;
using namespace dpstream::stream;
using Catch::Matchers::Contains;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// max over patterns π (≤ k steps, two of them ≥ b apart) of ‖Σ_{i∈π} C e_i‖², by enumeration.
double brute_force_squared(const MatrixXd& c, std::uint64_t k, std::uint64_t b) {
  double best = 0;
  std::function<void(Index, std::uint64_t, const VectorXd&)> extend = [&](Index first, std::uint64_t left,
                                                                          const VectorXd& sum) {
    best = std::max(best, sum.squaredNorm());
    if (left == 0) return;
    for (Index i = first; i < c.cols(); ++i) extend(i + static_cast<Index>(b), left - 1, sum + c.col(i));
  };
  extend(0, k, VectorXd::Zero(c.rows()));
  return best;
}

MatrixXd toeplitz(const VectorXd& coefficients) {
  const Index n = coefficients.size();
  MatrixXd m = MatrixXd::Zero(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j <= i; ++j) m(i, j) = coefficients(i - j);
  return m;
}

// The node-incidence C of a tree as its noise really draws it: one row per node the observer sees.
MatrixXd drawn_tree_strategy(TreeKind kind, std::uint64_t horizon) {
  TreeNoise tree(kind, horizon, 1.0, 1.0, 1);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> nodes;
  tree.set_observer([&](std::uint32_t, std::uint32_t, std::uint64_t first, std::uint64_t last) {
    nodes.emplace_back(first, last);
  });
  privacy::SeededNoiseSource source(1);
  VectorXd release = VectorXd::Zero(1);
  for (std::uint64_t t = 0; t < horizon; ++t) tree.advance(source, release);
  MatrixXd c = MatrixXd::Zero(static_cast<Index>(nodes.size()), static_cast<Index>(horizon));
  for (std::size_t r = 0; r < nodes.size(); ++r)
    for (std::uint64_t s = nodes[r].first; s <= nodes[r].second; ++s) c(static_cast<Index>(r), static_cast<Index>(s - 1)) = 1;
  return c;
}

// C_tj = α_t β_j (j ≤ t).
MatrixXd separable_strategy(const SeparableStrategy& s) {
  const Index n = s.alpha().size();
  MatrixXd c = MatrixXd::Zero(n, n);
  for (Index t = 0; t < n; ++t)
    for (Index j = 0; j <= t; ++j) c(t, j) = s.alpha()(t) * s.beta()(j);
  return c;
}

const std::vector<std::uint64_t> kSteps{1, 2, 3, 4};
const std::vector<std::uint64_t> kSeparations{1, 2, 3, 5, 8};

}  // namespace

TEST_CASE("Toeplitz strategies: the closed form is the brute-force maximum over all patterns", "[participation]") {
  const std::vector<std::pair<const char*, VectorXd>> strategies{
      {"sqrt Toeplitz", sqrt_toeplitz_coefficients(13)},
      {"BLT (jax_privacy 2 buffers)",
       BufferedToeplitz(VectorXd{{0.993433070819512, 0.6342644427247973}}, VectorXd{{0.07538320617916519, 0.5144060910151949}})
           .coefficients(13)},
      {"BLT (rational approximation, 4 buffers)", rational_approximation_blt(4).coefficients(13)}};
  for (const auto& [name, coefficients] : strategies)
    for (std::uint64_t k : kSteps)
      for (std::uint64_t b : kSeparations) {
        INFO(name << ", k = " << k << ", b = " << b);
        const double truth = brute_force_squared(toeplitz(coefficients), k, b);
        CHECK(toeplitz_participation_squared(coefficients, {k, b}) == Approx(truth).epsilon(1e-13));
      }
}

TEST_CASE("BLT: the O(k^2 buffers^2) closed form equals the coefficient sum, n up to 1000", "[participation][blt]") {
  for (const BufferedToeplitz& blt : {BufferedToeplitz::identity(), rational_approximation_blt(3),
                                      BufferedToeplitz(VectorXd{{0.9877027559462715}}, VectorXd{{0.10595704738115597}})})
    for (std::uint64_t n : {1u, 7u, 50u, 1000u})
      for (std::uint64_t k : {1u, 2u, 5u, 40u})
        for (std::uint64_t b : {1u, 5u, 17u}) {
          INFO(blt.buffers() << " buffers, n = " << n << ", k = " << k << ", b = " << b);
          // Both sum the same positive terms in another order: agreement to rounding (1e-12 relative).
          CHECK(blt.sensitivity_squared(n, {k, b}) ==
                Approx(toeplitz_participation_squared(blt.coefficients(n), {k, b})).epsilon(1e-12));
        }
  // k = 1 is the single-participation closed form, bit for bit.
  const BufferedToeplitz blt = rational_approximation_blt(3);
  CHECK(blt.sensitivity_squared(1000, {1, 7}) == blt.sensitivity_squared(1000));
  // The identity's k' = min(k, ⌈n/b⌉) unit columns.
  CHECK(BufferedToeplitz::identity().sensitivity_squared(10, {4, 3}) == Approx(4.0));
  CHECK(BufferedToeplitz::identity().sensitivity_squared(10, {9, 3}) == Approx(4.0));
}

TEST_CASE("trees: the level bound is >= the brute force over the nodes really drawn, and = for k = 1",
          "[participation][tree]") {
  for (TreeKind kind : {TreeKind::plain, TreeKind::honaker})
    for (std::uint64_t horizon : {5u, 8u, 13u, 16u}) {
      const MatrixXd c = drawn_tree_strategy(kind, horizon);
      const double single = c.colwise().squaredNorm().maxCoeff();
      CHECK(single == tree_levels(horizon));
      TreeNoise noise(kind, horizon, 2.0, 1.0, 1);
      for (std::uint64_t k : kSteps)
        for (std::uint64_t b : kSeparations) {
          INFO(to_string(kind) << ", T = " << horizon << ", k = " << k << ", b = " << b);
          const double truth = brute_force_squared(c, k, b);
          const double bound = tree_participation(horizon, {k, b}).squared;
          CHECK(bound >= truth);
          const ParticipationBound p = noise.participation_bound({k, b});
          CHECK(p.factor == Approx(std::sqrt(std::max(bound, single) / single)));
          CHECK(p.exact == (feasible_steps(horizon, {k, b}) == 1));
          if (feasible_steps(horizon, {k, b}) == 1) CHECK(bound == truth);
        }
    }
}

TEST_CASE("separable: the pairwise bound is >= the brute force and = 1 for k = 1", "[participation][separable]") {
  for (const SeparableStrategy& strategy :
       {SeparableStrategy::optimize(12), SeparableStrategy(VectorXd::LinSpaced(12, 1.0, 0.1))}) {
    const MatrixXd c = separable_strategy(strategy);
    SeparableNoise noise(strategy, 1.0, 1.0, 1);
    for (std::uint64_t k : kSteps)
      for (std::uint64_t b : kSeparations) {
        INFO("k = " << k << ", b = " << b);
        const double truth = brute_force_squared(c, k, b);
        const double bound = separable_participation_squared(strategy, {k, b});
        CHECK(bound >= truth * (1 - 1e-12));
        CHECK(bound <= static_cast<double>(k * k) * strategy.sensitivity_squared() * (1 + 1e-12));  // never above group privacy
        if (k == 1) CHECK(noise.participation_bound({k, b}).factor == 1.0);
      }
  }
}

TEST_CASE("unbounded trees: a unit's factor is k, the supremum over epochs", "[participation][tree]") {
  EpochTreeNoise noise(TreeKind::plain, 1.0, {1.0, 1e-6}, privacy::Calibration::tight, 1);
  CHECK(noise.participation_bound({1, 1}).factor == 1.0);
  CHECK(noise.participation_bound({1, 1}).exact);
  CHECK(noise.participation_bound({4, 10}).factor == 4.0);
  CHECK_FALSE(noise.participation_bound({4, 10}).exact);
  // Late epochs approach it: the level bound of a 2^40-step tree over its L = 41 levels.
  const double late = std::sqrt(tree_participation(std::uint64_t{1} << 40, {4, 10}).squared / 41.0);
  CHECK(late > 3.7);
  CHECK(late < 4.0);
}

TEST_CASE("k = 1 gives today's sigma and mu exactly; a unit is calibrated to the target", "[participation][calibration]") {
  const privacy::EpsDelta target{1.0, 1e-6};
  const double target_mu = make_tree_noise(TreeNoiseOptions{TreeKind::plain, 64, 1.0, target}, 1)->mu();
  for (NoiseStrategy strategy : {NoiseStrategy::plain_tree, NoiseStrategy::honaker_tree, NoiseStrategy::sqrt_toeplitz,
                                 NoiseStrategy::blt, NoiseStrategy::separable}) {
    INFO(to_string(strategy));
    ContinualSumOptions options;
    options.strategy = strategy;
    options.horizon = 64;
    options.privacy.target = target;
    if (strategy == NoiseStrategy::blt) options.blt = rational_approximation_blt(2);
    const ContinualVectorSum row(3, options, test_budget::unaccounted());
    options.participation = {1, 9};
    const ContinualVectorSum same(3, options, test_budget::unaccounted());
    CHECK(same.noise().draw_sigma() == row.noise().draw_sigma());
    CHECK(same.mu() == row.mu());
    options.participation = {4, 9};
    const ContinualVectorSum unit(3, options, test_budget::unaccounted());
    const ParticipationBound bound = unit.noise().participation_bound(options.participation);
    CHECK(bound.factor > 1.5);
    // σ scales with the unit's sensitivity (the analytic Gaussian is linear in it).
    CHECK(unit.noise().draw_sigma() == Approx(row.noise().draw_sigma() * bound.factor).epsilon(1e-9));
    CHECK(unit.mu() == Approx(target_mu).epsilon(1e-9));
    CHECK(unit.noise().mu() == Approx(target_mu / bound.factor).epsilon(1e-9));
  }
}

TEST_CASE("the accountant is charged the unit-level mu, and the label says per unit", "[participation][accounting]") {
  privacy::PrivacyAccountant accountant({1.0, 1e-6});
  ContinualSumOptions options;
  options.strategy = NoiseStrategy::blt;
  options.horizon = 32;
  options.blt = rational_approximation_blt(2);
  options.participation = {3, 4};
  const ContinualVectorSum unit(2, options, accountant);
  REQUIRE(accountant.ledger().size() == 1);
  CHECK_THAT(accountant.ledger().front().label, Contains("one unit: at most 3 rows, in release steps at least 4 apart"));
  // ρ = μ²/2 of the unit-level μ, well above the one-row value's.
  REQUIRE(accountant.ledger().front().rho.has_value());
  CHECK(*accountant.ledger().front().rho == Approx(unit.mu() * unit.mu() / 2).epsilon(1e-12));
  CHECK(unit.mu() > unit.noise().mu() * 1.5);
}

TEST_CASE("b = 0: rows may share a step, and every strategy's factor is exactly k", "[participation]") {
  // The brute force with b = 0 enumerates multisets of steps (a step may repeat): its maximum is k
  // rows in the heaviest column, k² times one row's sensitivity², for every strategy.
  const std::vector<std::pair<const char*, MatrixXd>> strategies{
      {"sqrt Toeplitz", toeplitz(sqrt_toeplitz_coefficients(9))},
      {"BLT", toeplitz(rational_approximation_blt(2).coefficients(9))},
      {"plain tree", drawn_tree_strategy(TreeKind::plain, 9)},
      {"separable", separable_strategy(SeparableStrategy::optimize(9))}};
  for (const auto& [name, c] : strategies)
    for (std::uint64_t k : kSteps) {
      INFO(name << ", k = " << k);
      CHECK(brute_force_squared(c, k, 0) ==
            Approx(static_cast<double>(k * k) * c.colwise().squaredNorm().maxCoeff()).epsilon(1e-12));
    }
  for (std::uint64_t k : kSteps) {
    INFO("k = " << k);
    const double kk = static_cast<double>(k);
    CHECK(feasible_steps(9, {k, 0}) == k);
    CHECK(toeplitz_participation_squared(sqrt_toeplitz_coefficients(9), {k, 0}) ==
          Approx(kk * kk * sqrt_toeplitz_coefficients(9).squaredNorm()).epsilon(1e-13));
    CHECK(tree_participation(9, {k, 0}).squared == kk * kk * tree_levels(9));
    CHECK(rational_approximation_blt(2).sensitivity_squared(9, {k, 0}) ==
          Approx(kk * kk * rational_approximation_blt(2).sensitivity_squared(9)).epsilon(1e-13));
    const SeparableStrategy separable = SeparableStrategy::optimize(9);
    CHECK(separable_participation_squared(separable, {k, 0}) ==
          Approx(kk * kk * separable.sensitivity_squared()).epsilon(1e-12));
  }
  // The stream: σ and μ are k times the row level's, for each strategy; with b ≥ 1 never more.
  for (NoiseStrategy strategy : {NoiseStrategy::plain_tree, NoiseStrategy::honaker_tree, NoiseStrategy::sqrt_toeplitz,
                                 NoiseStrategy::blt, NoiseStrategy::separable}) {
    INFO(to_string(strategy));
    ContinualSumOptions options;
    options.strategy = strategy;
    options.horizon = 64;
    const ContinualVectorSum row(3, options, test_budget::unaccounted());
    options.participation = {4, 0};
    const ContinualVectorSum shared(3, options, test_budget::unaccounted());
    CHECK(shared.noise().participation_bound(options.participation).factor == Approx(4.0).epsilon(1e-12));
    CHECK(shared.noise().participation_bound(options.participation).exact);
    CHECK(shared.noise().draw_sigma() == Approx(4 * row.noise().draw_sigma()).epsilon(1e-9));
    options.participation = {4, 1};
    const ContinualVectorSum separated(3, options, test_budget::unaccounted());
    CHECK(separated.noise().draw_sigma() <= shared.noise().draw_sigma() * (1 + 1e-12));
  }
}

TEST_CASE("participation: k must be >= 1; the texts", "[participation]") {
  CHECK_THROWS_NAMING(check_participation({0, 1}), InvalidParameter, Contains("max_rows"));
  ContinualSumOptions options;
  options.horizon = 8;
  options.participation = {0, 1};
  CHECK_THROWS_NAMING(ContinualVectorSum(2, options, test_budget::unaccounted()), InvalidParameter, Contains("max_rows"));
  CHECK_THROWS_NAMING(describe(Participation{0, 1}), InvalidParameter, Contains("max_rows"));
  CHECK(describe({}) == "one row (single participation)");
  CHECK(describe({4, 2}) == "one unit: at most 4 rows, in release steps at least 2 apart, at most one a step");
  CHECK(describe({4, 0}) == "one unit: at most 4 rows, several may share a release step");
  CHECK(describe_unit({1, 0}, "user") == "all rows of one user (at most 1 row kept per user)");
  CHECK(describe_unit({4, 0}, "user") == "all rows of one user (at most 4 rows kept per user)");
  CHECK(describe_unit({4, 3}, "user") ==
        "all rows of one user (at most 4 rows kept per user, at most one a release, releases at least 3 apart)");
  CHECK(feasible_steps(10, {9, 3}) == 4);
  CHECK(feasible_steps(9, {9, 3}) == 3);
}

}  // namespace test_participation
