// RowGuard: the single place where input rows are checked before they reach any private summary.
//
// Checks, in order: dimension, finiteness of every entry, no negative entry (only if the options
// say the domain has none), optional scaling to unit norm, then the l2-norm bound. The norm bound is
// what every sensitivity in the library rests on, so a row over it is either clipped
// (a ← a·L/‖a‖₂, Analyze Gauss footnote 3; clipping is a per-row map and does not affect privacy)
// and counted, or rejected with InvalidRow naming the row index. Nothing is dropped silently:
// a row that fails a check either throws or is counted.
//
// Unit scaling (RowScaling::unit, a ← a/‖a‖₂) is the other way to establish ‖a‖ ≤ 1, the bound
// L = 1 every mechanism's sensitivity then rests on; it is done here, not by callers, so that no
// row can reach a summary unscaled or scaled by other arithmetic. Like clipping it is a per-row map
// (privacy is unaffected), but it changes every row: the summaries then describe directions only.
#pragma once

#include <cstdint>
#include <string>

#include <Eigen/Core>

namespace dpstream::stream {

enum class OverNormPolicy { clip, reject };
const char* to_string(OverNormPolicy policy) noexcept;  // "clip" | "reject"
// The inverse; any other text: InvalidParameter naming it and the accepted names.
OverNormPolicy parse_over_norm_policy(const std::string& text);

// What the guard does to a row before the norm check.
//  none: nothing.
//  unit: a ← a/‖a‖₂, after the finiteness (and nonnegativity) checks, so that a row with NaN or ±Inf
//        is refused naming its column, as read. ‖a‖ is Eigen's norm(), or its stableNorm() when
//        norm() under- or overflows (entries beyond ~1e±154); for ‖a‖ beyond the largest double the
//        row is first divided by its largest |aᵢ|. A zero row stays zero (it has no direction) and
//        is counted in RowGuardCounts::zero. The division can leave ‖a‖ an ulp or so above 1: the
//        norm check then clips it (counted in `clipped`), so unit needs norm_bound = 1 and
//        over_norm = clip (RowGuard refuses other options: reject would refuse rows for rounding).
//        norm() does not depend on where the row sits; stableNorm() is taken as for the row held in
//        a VectorXd (linalg/aligned_reduction.hpp), so the same values scale to the same bits
//        wherever the caller's row is.
enum class RowScaling { none, unit };
const char* to_string(RowScaling scaling) noexcept;  // "none" | "unit"
// The inverse; any other text: InvalidParameter naming it and the accepted names.
RowScaling parse_row_scaling(const std::string& text);

// The l2 norm every norm-bound check uses (RowGuard, ContinualSum). Scalar loops in a fixed order,
// so the same values give the same number wherever they sit in memory: Eigen's vectorised
// stableNorm does not (its result moved by an ulp with the data's alignment under AVX-512, so a row
// RowGuard passed at ‖a‖ = 1 could be refused by ContinualSum at 1 + 1 ulp). Scaled by max|aᵢ|, so
// huge finite entries do not overflow; NaN in gives NaN, ±Inf gives +Inf.
double row_norm(const Eigen::Ref<const Eigen::VectorXd>& row) noexcept;

// The check every mechanism makes on the rows it is given, because its sensitivity rests on it:
// dimension, then ‖row‖₂ ≤ bound by row_norm (NaN and ±Inf fail). Throws InvalidRow naming the row
// `index` and what was wrong. A row RowGuard passed (or clipped) with the same bound always passes.
void require_bounded_row(const Eigen::Ref<const Eigen::VectorXd>& row, std::uint64_t index, Eigen::Index dimension,
                         double bound);

struct RowGuardOptions {
  Eigen::Index dimension = 0;      // required, > 0
  double norm_bound = 1.0;         // L, finite and > 0
  OverNormPolicy over_norm = OverNormPolicy::clip;
  // The rows' domain has no negative entry (pixels, counts, ratings): a row with one is rejected,
  // naming the column, after the finiteness check. What doubly_nonnegative.hpp's projection of a
  // release relies on; a negative entry is refused, never clipped to 0.
  bool nonnegative = false;
  RowScaling scaling = RowScaling::none;  // unit: norm_bound 1 and clip (above)
};

struct RowGuardCounts {
  std::uint64_t seen = 0;      // rows presented
  std::uint64_t accepted = 0;  // rows passed on (clipped ones included)
  std::uint64_t clipped = 0;   // rows scaled down to the bound
  std::uint64_t rejected = 0;  // rows refused (an InvalidRow was thrown for each)
  std::uint64_t zero = 0;      // RowScaling::unit: zero rows, passed on as zero (counted in accepted)

  // The counts of two guards' rows together (parts of one stream guarded on several workers).
  RowGuardCounts& operator+=(const RowGuardCounts& other) noexcept {
    seen += other.seen, accepted += other.accepted, clipped += other.clipped;
    rejected += other.rejected, zero += other.zero;
    return *this;
  }
};

class RowGuard {
 public:
  explicit RowGuard(const RowGuardOptions& options);

  // Checks `row` (the row_index-th of the stream, for messages), scales it and clips it in place if
  // the options say so. Throws InvalidRow for wrong dimension, NaN/Inf (naming the column), or a
  // norm over the bound under `reject`.
  void admit(Eigen::Ref<Eigen::VectorXd> row);
  // Same for a sparse row given as (indices, values): indices must be < dimension and strictly
  // increasing. Unit scaling scales the values as a dense row (the absent entries are zeros).
  void admit_sparse(const Eigen::Ref<const Eigen::VectorXi>& indices, Eigen::Ref<Eigen::VectorXd> values);

  const RowGuardCounts& counts() const noexcept { return counts_; }
  const RowGuardOptions& options() const noexcept { return options_; }
  std::uint64_t next_row_index() const noexcept { return counts_.seen; }

 private:
  void scale(Eigen::Ref<Eigen::VectorXd> values);
  void check_norm(Eigen::Ref<Eigen::VectorXd> values, std::uint64_t row_index);
  RowGuardOptions options_;
  RowGuardCounts counts_;
};

}  // namespace dpstream::stream
