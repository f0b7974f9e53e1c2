// Participation: how often one privacy unit (a person, not a row) may enter a continual release,
// and the sensitivity of each strategy under it.
//
// (k, b)-participation (Choquette-Choo, McMahan, Rush & Thakurta 2023, "(Amplified) Banded Matrix
// Factorization: a unified approach to private training"): a unit has at most k rows in the stream;
// with b ≥ 1 they lie in distinct release steps (blocks), two of them at least b steps apart (b = 1:
// any distinct steps, consecutive ones included); with b = 0 several of her rows may share a step.
// k = 1 is the single participation every strategy was built for; then every value below is
// exactly today's. Keeping a stream within (k, b) is contribution_bound.hpp's job.
//
// Unit-level neighbouring relation: streams of the same length that differ in the rows of one unit,
// each replaced by a zero row with its slot kept (zero_out_row for all of her rows at once; keys and
// positions are public, values protected).
//
// b = 0 (rows may share a step): all k rows can fall in one step, so every strategy's sensitivity is
// exactly k times one row's (attained by k rows in one step, when a step holds k rows; never more, by
// the triangle inequality, as C ≥ 0 entrywise): Gaussian-DP group privacy for k rows. Every function
// below takes b = 0 and gives that k. Only a separation b ≥ 1 lets a strategy do better, as follows.
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
  std::uint64_t max_rows = 1;        // k ≥ 1: rows of one unit the stream may hold
  std::uint64_t min_separation = 1;  // b: 0 = her rows may share a step; b ≥ 1 = one a step, steps ≥ b apart
};

// InvalidParameter naming the field unless k ≥ 1.
void check_participation(const Participation& participation);

// The pattern in words, for ledger labels: "one row (single participation)", or "one unit: at most k
// rows, in release steps at least b apart, at most one a step" (b = 0: "several may share a step").
std::string describe(const Participation& participation);
// The unit-level neighbouring relation in words, for summaries and JSON, `unit` naming the unit
// ("user"): "all rows of one user (at most k rows kept per user)", with b ≥ 1 ", at most one a
// release, releases at least b apart" before the parenthesis closes.
std::string describe_unit(const Participation& participation, const std::string& unit);

// k' = min(k, ⌈n/b⌉) (k for b = 0): the most rows a pattern can actually place in n steps.
std::uint64_t feasible_steps(std::uint64_t horizon, const Participation& participation);

struct ParticipationBound {
  double factor = 1.0;  // max over patterns of ‖Σ C e_i‖ / max_i ‖C e_i‖ (≥ 1; exactly 1 for k = 1)
  bool exact = true;    // true: attained by a pattern; false: a proven upper bound
};

// ‖Σ_{p<k'} C e_{1+pb}‖² for the n × n lower-triangular Toeplitz C of `coefficients` (n = their
// length): the exact squared sensitivity when they are non-negative and non-increasing (b = 0: k²‖c‖²).
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
