// Sensitivity under (k, b)-participation (stream/participation.hpp).
#include "dpstream/stream/participation.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/stream/factorization_noise.hpp"
#include "dpstream/stream/separable_noise.hpp"
#include "dpstream/stream/tree_noise.hpp"

namespace dpstream::stream {

using Eigen::Index;
using Eigen::VectorXd;

void check_participation(const Participation& participation) {
  if (participation.max_rows < 1)
    throw InvalidParameter("participation: max_rows (k, the rows one unit may contribute) must be >= 1");
}

std::string describe(const Participation& participation) {
  check_participation(participation);
  if (participation.max_rows == 1) return "one row (single participation)";
  const std::string rows = "one unit: at most " + std::to_string(participation.max_rows) + " rows";
  if (participation.min_separation == 0) return rows + ", several may share a release step";
  return rows + ", in release steps at least " + std::to_string(participation.min_separation) +
         " apart, at most one a step";
}

std::string describe_unit(const Participation& participation, const std::string& unit) {
  check_participation(participation);
  const std::uint64_t k = participation.max_rows, b = participation.min_separation;
  std::string text = "all rows of one " + unit + " (at most " + std::to_string(k) + (k == 1 ? " row" : " rows") +
                     " kept per " + unit;
  if (k > 1 && b != 0) text += ", at most one a release, releases at least " + std::to_string(b) + " apart";
  return text + ")";
}

std::uint64_t feasible_steps(std::uint64_t horizon, const Participation& participation) {
  check_participation(participation);
  const std::uint64_t b = participation.min_separation;
  if (b == 0) return participation.max_rows;  // all of them may share one step
  // ⌈n/b⌉ without overflow; at least 1 so that a zero horizon does not zero the sensitivity.
  const std::uint64_t most = horizon / b + (horizon % b != 0 ? 1 : 0);
  return std::max<std::uint64_t>(1, std::min(participation.max_rows, most));
}

double toeplitz_participation_squared(const Eigen::Ref<const VectorXd>& coefficients,
                                      const Participation& participation) {
  const auto n = static_cast<std::uint64_t>(coefficients.size());
  if (n == 0) throw InvalidParameter("toeplitz_participation_squared: no coefficients");
  const std::uint64_t k = feasible_steps(n, participation);
  const std::uint64_t b = participation.min_separation;
  // v = Σ_{p<k} C e_{1+pb}: row t (0-based) sums c_{t−pb} over the steps pb ≤ t.
  VectorXd v = coefficients;
  for (std::uint64_t p = 1; p < k; ++p) {
    const auto shift = static_cast<Index>(p * b);
    v.tail(static_cast<Index>(n) - shift) += coefficients.head(static_cast<Index>(n) - shift);
  }
  return v.squaredNorm();
}

TreeParticipation tree_participation(std::uint64_t horizon, const Participation& participation) {
  const std::uint32_t levels = tree_levels(horizon);
  const std::uint64_t k = feasible_steps(horizon, participation);
  const std::uint64_t b = participation.min_separation;
  TreeParticipation out;
  for (std::uint32_t j = 0; j < levels; ++j) {
    const std::uint64_t width = std::uint64_t{1} << j;
    const std::uint64_t per_node = b == 0 ? k : std::min(k, width / b + (width % b != 0 ? 1 : 0));
    const auto full = static_cast<double>(k / per_node), m = static_cast<double>(per_node),
               rest = static_cast<double>(k % per_node);
    const double level = full * m * m + rest * rest;
    out.squared += level;
    out.max_level_squared = std::max(out.max_level_squared, level);
  }
  return out;
}

double separable_participation_squared(const SeparableStrategy& strategy, const Participation& participation) {
  const std::uint64_t n = strategy.horizon();
  const std::uint64_t k = feasible_steps(n, participation);
  const std::uint64_t b = participation.min_separation;
  const VectorXd& alpha = strategy.alpha();
  const VectorXd& beta = strategy.beta();
  VectorXd tail(alpha.size());  // A_j = Σ_{s≥j} α_s²
  double acc = 0;
  for (Index j = alpha.size() - 1; j >= 0; --j) tail(j) = (acc += alpha(j) * alpha(j));
  // The diagonal terms: ‖C e_i‖² ≤ the strategy's largest column norm² each.
  double bound = static_cast<double>(k) * strategy.sensitivity_squared();
  for (std::uint64_t m = 1; m < k; ++m) {
    const auto d = static_cast<Index>(m * b);
    double rho = 0;  // ρ(d) = max_i X_{i,i+d} = max_i β_i β_{i+d} A_{i+d}
    for (Index i = 0; i + d < alpha.size(); ++i) rho = std::max(rho, beta(i) * beta(i + d) * tail(i + d));
    bound += 2.0 * static_cast<double>(k - m) * rho;
  }
  return bound;
}

// ---- the strategies' bounds (the reasons are in participation.hpp) ----------------------------------

double ContinualNoise::unit_mu(const Participation& participation) const {
  const ParticipationBound bound = participation_bound(participation);
  return bound.factor == 1.0 ? mu() : mu() * bound.factor;
}

ParticipationBound TreeNoise::participation_bound(const Participation& participation) const {
  if (feasible_steps(horizon_, participation) == 1) return {};
  const double squared = tree_participation(horizon_, participation).squared;
  return {std::sqrt(squared / static_cast<double>(levels_)), participation.min_separation == 0};
}

ParticipationBound EpochTreeNoise::participation_bound(const Participation& participation) const {
  check_participation(participation);
  if (participation.max_rows == 1) return {};
  // b = 0: attained by k rows in one step; b ≥ 1: the supremum over epochs, not attained.
  return {static_cast<double>(participation.max_rows), participation.min_separation == 0};
}

ParticipationBound SqrtToeplitzNoise::participation_bound(const Participation& participation) const {
  if (feasible_steps(horizon_, participation) == 1) return {};
  return {std::sqrt(toeplitz_participation_squared(f_, participation) / sensitivity_squared()), true};
}

ParticipationBound BltNoise::participation_bound(const Participation& participation) const {
  if (feasible_steps(horizon_, participation) == 1) return {};
  return {std::sqrt(blt_.sensitivity_squared(horizon_, participation) / blt_.sensitivity_squared(horizon_)), true};
}

ParticipationBound SeparableNoise::participation_bound(const Participation& participation) const {
  if (feasible_steps(strategy_.horizon(), participation) == 1) return {};
  return {std::sqrt(separable_participation_squared(strategy_, participation) / strategy_.sensitivity_squared()),
          participation.min_separation == 0};
}

}  // namespace dpstream::stream
