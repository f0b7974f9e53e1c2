// Participation: how many rows one privacy unit (a user, a device, an account) may put into a stream,
// and what that does to a continual release's sensitivity.
//
// A unit is what its rows' key names; contribution_bound.hpp keeps at most k of a unit's rows (and,
// with a minimum separation b ≥ 1, at most one a block, in blocks at least b apart), dropping the rest.
//
// Unit-level neighbouring relation of a continual sum (ContinualSumOptions::participation): streams of
// the same length that differ in the rows of one unit — at most k of them reach the sum — each replaced
// by a zero row, its slot kept (the row-level zero_out_row relation, applied to all of one unit's rows
// at once; replace_row: each of them replaced by another row). Keys and positions are public; values
// are what is protected.
//
// Sensitivity. Write the releases' mean as C·X, X the block sums, C the strategy's lower-triangular
// matrix. A unit's kept rows x_1..x_m (m ≤ k) in blocks β_1..β_m (repeats allowed when b = 0) move it
// by Σ_j C e_{β_j} x_jᵀ, whose Frobenius norm is at most Σ_j ‖C e_{β_j}‖·‖x_j‖ ≤ k · max_i ‖C e_i‖ · Δ
// (triangle inequality), Δ one row's sensitivity: k times a single row's, for EVERY strategy C and
// every participation pattern, with or without separation. participation_sensitivity_factor returns
// that factor, k: a proven upper bound, not the exact maximum over (k, b) patterns, which is smaller
// for most strategies (rows b blocks apart share fewer tree nodes or Toeplitz diagonals) and belongs
// behind the same function. The Gaussian mechanisms of every strategy are then calibrated for
// sensitivity factor·Δ, so the whole stream is μ-GDP (and (ε, δ)-DP for the target) at the unit level,
// and the accountant is charged that unit-level target.
#pragma once

#include <cstdint>
#include <string>

namespace dpstream::stream {

enum class NoiseStrategy;  // continual_sum.hpp

struct Participation {
  // k: rows of one unit the stream may hold; 0 = no units: the row-level relation (one row).
  std::uint32_t max_rows_per_unit = 0;
  // b: 0 = none; b ≥ 1: a unit's rows are in distinct release blocks at least b apart.
  std::uint64_t min_separation = 0;

  bool unit_level() const noexcept { return max_rows_per_unit > 0; }
};

// InvalidParameter naming the field: min_separation without max_rows_per_unit, or a separation that
// cannot fit two blocks in a horizon of `horizon` releases (0: unbounded) when k ≥ 2.
void validate(const Participation& participation, std::uint64_t horizon);

// The ratio of a unit's l2 sensitivity to one row's for `strategy` over `horizon` releases: 1 at row
// level, else the proven bound k above (valid for every strategy, horizon and separation).
double participation_sensitivity_factor(NoiseStrategy strategy, std::uint64_t horizon,
                                        const Participation& participation);

// The neighbouring relation in words, for summaries and JSON ("one row" or "all rows of one user, at
// most k rows kept per user, ..."). `unit` names the unit ("user").
std::string neighbouring_text(const Participation& participation, const std::string& unit = "user");

}  // namespace dpstream::stream
