// Privacy audits of ContinualSum for a privacy unit under (k, b)-participation
// (stream/participation.hpp), every strategy, and the planted bug "calibrated with the sensitivity of
// a single participation" that each must catch. Method: epsilon_audit.hpp.
//
// Neighbours: D' has the unit's rows e₁ (norm L = 1) at her worst allowed steps, D zeros there; every
// other step holds the shared row 0.6·e₂. The worst steps are found by brute force over all allowed
// patterns on the strategy's own C (a tree's drawn nodes from its observer; a factorization's
// coefficients), so the audit measures the largest sensitivity the claim must cover: for the
// Toeplitz strategies the exact one (steps 1, 1+b, …), for trees and the separable strategy at most
// the proven bound the claim uses. Feature t: the e₁ coordinate of release t, the whole stream of T
// releases. For the plain tree and the factorizations the releases are an invertible linear map of
// C·x + z, so Fisher's discriminant is the likelihood-ratio statistic and the audit sees the
// pattern's exact μ; the Honaker tree's releases are a lossy function of its node sums.
//
// Power. Target (3, 1e-3): μ ≈ 0.96 for the whole stream, claim ε(0.1) = 1.087. The planted bug runs
// the stream calibrated for one row while claiming the same target for the unit: its true μ is
// 0.96·f, f the worst pattern's factor over one row (required ≥ 1.8 below; the run prints it), so
// the audit faces μ ≥ 1.74, more than the restore bug of audit_continual_sum.cpp (μ 0.96·1.62 =
// 1.56, 4000 trials, 1.73 expected against the claim 1.087). Unit run: 4000 trials a strategy. The
// correct streams ([slow], audit suite): 40000 trials, ε_lb ≤ claim. False alarm ≤ 1e-4 per audit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/stream/blt_optimizer.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/factorization_noise.hpp"
#include "dpstream/stream/separable_noise.hpp"
#include "dpstream/stream/tree_noise.hpp"
#include "epsilon_audit.hpp"
#include "../unaccounted.hpp"

namespace audit_participation {

namespace {

using dpstream::audit::gdp_epsilon;
using dpstream::audit::kAuditDelta;
using dpstream::audit::run_audit;
using dpstream::stream::ContinualSumOptions;
using dpstream::stream::ContinualVectorSum;
using dpstream::stream::NoiseStrategy;
using dpstream::stream::Participation;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr std::uint64_t kHorizon = 8;
constexpr long kTrials = 40000;      // [slow]: correct streams
constexpr long kFastTrials = 4000;   // the planted bug (power: header)
const dpstream::privacy::EpsDelta kTarget{3.0, 1e-3};
const Participation kUnit{4, 2};

ContinualSumOptions options_for(NoiseStrategy strategy, const Participation& participation) {
  ContinualSumOptions options;
  options.horizon = kHorizon;
  options.strategy = strategy;
  options.privacy.target = kTarget;
  options.participation = participation;
  if (strategy == NoiseStrategy::blt) {
    dpstream::stream::BltOptimizeOptions blt;
    blt.horizon = kHorizon;
    blt.participation = kUnit;
    options.blt = dpstream::stream::optimize_blt(blt).blt;  // once, not per trial
  }
  return options;
}

// The strategy's C (noised quantities × steps), as its noise really builds it.
MatrixXd strategy_matrix(const dpstream::stream::ContinualNoise& noise, NoiseStrategy strategy,
                         const ContinualSumOptions& options) {
  const auto n = static_cast<Index>(kHorizon);
  MatrixXd c = MatrixXd::Zero(n, n);
  if (strategy == NoiseStrategy::plain_tree || strategy == NoiseStrategy::honaker_tree) {
    dpstream::stream::TreeNoise tree(strategy == NoiseStrategy::plain_tree ? dpstream::stream::TreeKind::plain
                                                                           : dpstream::stream::TreeKind::honaker,
                                     kHorizon, 1.0, 1.0, 1);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> nodes;
    tree.set_observer([&](std::uint32_t, std::uint32_t, std::uint64_t a, std::uint64_t b) { nodes.emplace_back(a, b); });
    dpstream::privacy::SeededNoiseSource source(1);
    VectorXd release = VectorXd::Zero(1);
    for (std::uint64_t t = 0; t < kHorizon; ++t) tree.advance(source, release);
    c = MatrixXd::Zero(static_cast<Index>(nodes.size()), n);
    for (std::size_t r = 0; r < nodes.size(); ++r)
      for (std::uint64_t s = nodes[r].first; s <= nodes[r].second; ++s) c(static_cast<Index>(r), static_cast<Index>(s - 1)) = 1;
    return c;
  }
  if (strategy == NoiseStrategy::separable) {
    const auto& s = dynamic_cast<const dpstream::stream::SeparableNoise&>(noise).strategy();
    for (Index t = 0; t < n; ++t)
      for (Index j = 0; j <= t; ++j) c(t, j) = s.alpha()(t) * s.beta()(j);
    return c;
  }
  const VectorXd coefficients = strategy == NoiseStrategy::blt
                                    ? options.blt->coefficients(kHorizon)
                                    : dpstream::stream::sqrt_toeplitz_coefficients(kHorizon);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j <= i; ++j) c(i, j) = coefficients(i - j);
  return c;
}

// The allowed pattern (0-based steps) of largest ‖Σ C e_i‖, by enumeration.
std::vector<Index> worst_pattern(const MatrixXd& c, const Participation& p) {
  std::vector<Index> best, current;
  double best_value = -1;
  std::function<void(Index, VectorXd)> extend = [&](Index first, VectorXd sum) {
    if (sum.squaredNorm() > best_value) {
      best_value = sum.squaredNorm();
      best = current;
    }
    if (current.size() == p.max_rows) return;
    for (Index i = first; i < c.cols(); ++i) {
      current.push_back(i);
      extend(i + static_cast<Index>(p.min_separation), sum + c.col(i));
      current.pop_back();
    }
  };
  extend(0, VectorXd::Zero(c.rows()));
  return best;
}

struct UnitAudit {
  ContinualSumOptions options;  // the stream as run (its participation: what it was calibrated for)
  std::vector<Index> steps;     // the unit's steps, 0-based

  VectorXd features(bool neighbour, std::uint64_t seed) const {
    ContinualSumOptions o = options;
    o.privacy.noise.seed = seed;
    ContinualVectorSum sum(2, o, test_budget::unaccounted());
    VectorXd out(static_cast<Index>(kHorizon));
    sum.subscribe([&](const ContinualVectorSum::Release& r) { out(static_cast<Index>(r.step - 1)) = r.noisy_prefix(0); });
    for (Index t = 0; t < static_cast<Index>(kHorizon); ++t) {
      Eigen::Vector2d row(0.0, 0.6);
      if (std::find(steps.begin(), steps.end(), t) != steps.end()) row = neighbour ? Eigen::Vector2d(1.0, 0.0) : Eigen::Vector2d(0.0, 0.0);
      sum.update(row);
    }
    return out;
  }
};

// The unit's worst steps for `strategy` and their factor over one row's sensitivity.
UnitAudit unit_audit(NoiseStrategy strategy, const Participation& calibrated_for, double& factor) {
  UnitAudit audit{options_for(strategy, calibrated_for), {}};
  const ContinualVectorSum probe(2, audit.options, test_budget::unaccounted());
  const MatrixXd c = strategy_matrix(probe.noise(), strategy, audit.options);
  audit.steps = worst_pattern(c, kUnit);
  VectorXd sum = VectorXd::Zero(c.rows());
  for (Index i : audit.steps) sum += c.col(i);
  factor = sum.norm() / c.colwise().norm().maxCoeff();
  return audit;
}

const std::vector<NoiseStrategy> kStrategies{NoiseStrategy::plain_tree, NoiseStrategy::honaker_tree,
                                             NoiseStrategy::sqrt_toeplitz, NoiseStrategy::blt,
                                             NoiseStrategy::separable};

}  // namespace

TEST_CASE("audit: a unit in k = 4 steps >= 2 apart stays within the unit-level claim, every strategy",
          "[audit][participation][slow]") {
  for (NoiseStrategy strategy : kStrategies) {
    double factor = 0;
    const UnitAudit audit = unit_audit(strategy, kUnit, factor);
    const ContinualVectorSum stream(2, audit.options, test_budget::unaccounted());
    const double claimed = gdp_epsilon(stream.mu(), kAuditDelta);
    // The claim covers the worst pattern: the bound used is at least its factor.
    CHECK(stream.noise().participation_bound(kUnit).factor >= factor * (1 - 1e-12));
    const auto result = run_audit(std::string("continual sum, unit k=4 b=2, ") + dpstream::stream::to_string(strategy),
                                  500 + static_cast<int>(strategy), kTrials, kAuditDelta, claimed,
                                  [&](bool n, std::uint64_t s) { return audit.features(n, s); });
    CHECK(result.epsilon_lb <= claimed);
  }
}

TEST_CASE("audit: planted bug — calibrated for one participation, a unit in 4 steps breaks the claim",
          "[audit][participation]") {
  for (NoiseStrategy strategy : kStrategies) {
    INFO(dpstream::stream::to_string(strategy));
    double factor = 0;
    // The bug: the stream is calibrated (and claims) as if one row were the unit.
    const UnitAudit audit = unit_audit(strategy, Participation{}, factor);
    REQUIRE(factor >= 1.8);  // the power the header derives
    std::printf("unit in steps >= 2 apart, %s: worst pattern's factor over one row %.3f\n",
                dpstream::stream::to_string(strategy), factor);
    const double claimed = gdp_epsilon(ContinualVectorSum(2, audit.options, test_budget::unaccounted()).mu(), kAuditDelta);
    const auto result = run_audit(std::string("planted single-participation calibration, ") +
                                      dpstream::stream::to_string(strategy),
                                  520 + static_cast<int>(strategy), kFastTrials, kAuditDelta, claimed,
                                  [&](bool n, std::uint64_t s) { return audit.features(n, s); });
    CHECK(result.epsilon_lb > claimed);
  }
}

}  // namespace audit_participation
