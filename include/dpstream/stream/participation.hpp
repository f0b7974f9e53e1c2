// Participation: how often one privacy unit (a person, not a row) may enter a continual release,
// and the sensitivity of each strategy under it.
//
// (k, b)-participation (Choquette-Choo, McMahan, Rush & Thakurta 2023, "(Amplified) Banded Matrix
// Factorization: a unified approach to private training"): a unit's rows lie in at most k release
// steps (blocks), and two of her steps s < s' satisfy s' − s ≥ b (b = 1: any steps, consecutive
// ones included). k = 1 is the single participation every strategy was built for; then every value
// below is exactly today's.
//
// A strategy is a lower-triangular C (steps → noised quantities) whose releases are post-processing
// of C·x + z. A unit contributing rows of norm ≤ Δ at steps π moves C·x by at most
// Δ·‖Σ_{i∈π} C e_i‖ when C ≥ 0 entrywise (every strategy here): the l2 sensitivity is
// Δ·max_π ‖Σ_{i∈π} C e_i‖ over the allowed patterns π. ParticipationBound::factor is that maximum
// divided by the single-participation one (max_i ‖C e_i‖), so a strategy's unit-level GDP parameter
// is mu() × factor. Per strategy:
//  * Toeplitz C with non-negative, non-increasing coefficients (square-root Toeplitz, BLT — BltNoise
//    refuses any other): EXACT. The worst pattern is k' = min(k, ⌈n/b⌉) steps exactly b apart from
//    step 1 (McKenna 2024, "Scaling up the banded matrix factorization mechanism for differentially
//    private ML", Thm 2; jax_privacy's toeplitz.minsep_sensitivity_squared), so
//    sens² = ‖Σ_{p<k'} C e_{1+pb}‖², O(n·k') from the coefficients, O(k'²·buffers²) for a BLT.
//  * Trees (plain and Honaker; C = node-incidence, entries 0/1): PROVEN UPPER BOUND. A pattern π
//    gives Σ_nodes |π ∩ node|². At level j the nodes are disjoint intervals of 2^j steps, so each
//    holds m_j = min(k', ⌈2^j/b⌉) of her steps at most, and a sum of squares of counts ≤ m_j adding
//    to ≤ k' is at most ⌊k'/m_j⌋·m_j² + (k' mod m_j)² (convexity: fill nodes to capacity). Summing
//    over the L levels bounds sens²; k = 1 gives L, today's value. Levels are bounded one by one,
//    so it need not be attained; tests/test_participation.cpp checks it against brute force over
//    all patterns on the nodes each tree really draws.
//  * Unbounded trees (doubling epochs, independent noise per epoch): factor = k. Epochs compose as
//    independent Gaussian mechanisms, μ² = Σ_e μ_e(k_e)² ≤ Σ_e k_e²·μ² ≤ k²μ² (triangle inequality
//    per epoch), and late epochs approach it (their top levels hold all k steps): an upper bound that
//    is the supremum, not attained — continual release without a horizon is no better than group
//    privacy for a unit.
//  * Separable C_tj = α_t β_j (unit columns): PROVEN UPPER BOUND. ‖Σ_{i∈π} C e_i‖² = Σ_{p,q} X_{i_p i_q}
//    with X_ij = β_i β_j A_max(i,j) ≤ 1 falling with |i − j| for fixed i; the pair p < q of a pattern
//    is ≥ (q−p)·b apart, so sens² ≤ k' + 2 Σ_{m<k'} (k'−m)·ρ(m·b), ρ(d) = max_i X_{i,i+d}.
#pragma once

#include <cstdint>
#include <string>

#include <Eigen/Core>

namespace dpstream::stream {

struct Participation {
  std::uint64_t max_steps = 1;       // k ≥ 1: release steps a unit's rows may lie in
  std::uint64_t min_separation = 1;  // b ≥ 1: two of her steps are at least b apart
};

// InvalidParameter naming the field unless k ≥ 1 and b ≥ 1.
void check_participation(const Participation& participation);

// The privacy unit in words, for summaries and JSON: "one row (single participation)", or "one unit:
// rows in at most k release steps, two of them at least b steps apart, at most one row a step".
std::string describe(const Participation& participation);

// k' = min(k, ⌈n/b⌉): the most steps a pattern can actually hold in n steps.
std::uint64_t feasible_steps(std::uint64_t horizon, const Participation& participation);

struct ParticipationBound {
  double factor = 1.0;  // max over patterns of ‖Σ C e_i‖ / max_i ‖C e_i‖ (≥ 1; exactly 1 for k = 1)
  bool exact = true;    // true: attained by a pattern; false: a proven upper bound
};

// ‖Σ_{p<k'} C e_{1+pb}‖² for the n × n lower-triangular Toeplitz C of `coefficients` (n = their
// length): the exact squared sensitivity when they are non-negative and non-increasing.
double toeplitz_participation_squared(const Eigen::Ref<const Eigen::VectorXd>& coefficients,
                                      const Participation& participation);

// The tree bound above, Σ_j (⌊k'/m_j⌋·m_j² + (k' mod m_j)²), over tree_levels(horizon) levels; and
// the largest single level's term (the per-level sensitivity² for basic composition over levels).
struct TreeParticipation {
  double squared = 0;
  double max_level_squared = 0;
};
TreeParticipation tree_participation(std::uint64_t horizon, const Participation& participation);

class SeparableStrategy;
// The separable bound above (not divided by the single-participation sensitivity²).
double separable_participation_squared(const SeparableStrategy& strategy, const Participation& participation);

}  // namespace dpstream::stream
