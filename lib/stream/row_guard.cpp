#include "dpstream/stream/row_guard.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/text.hpp"
#include "dpstream/linalg/aligned_reduction.hpp"

namespace dpstream::stream {

const char* to_string(OverNormPolicy policy) noexcept { return policy == OverNormPolicy::clip ? "clip" : "reject"; }

OverNormPolicy parse_over_norm_policy(const std::string& text) {
  for (const OverNormPolicy policy : {OverNormPolicy::clip, OverNormPolicy::reject})
    if (text == to_string(policy)) return policy;
  throw InvalidParameter("over-norm policy '" + base::printable(text) + "': expected clip or reject");
}

const char* to_string(RowScaling scaling) noexcept { return scaling == RowScaling::none ? "none" : "unit"; }

RowScaling parse_row_scaling(const std::string& text) {
  for (const RowScaling scaling : {RowScaling::none, RowScaling::unit})
    if (text == to_string(scaling)) return scaling;
  throw InvalidParameter("row scaling '" + base::printable(text) + "': expected none or unit");
}

RowGuard::RowGuard(const RowGuardOptions& options) : options_(options) {
  if (options.dimension <= 0)
    throw InvalidParameter("row guard: dimension must be > 0, got " + std::to_string(options.dimension));
  if (!std::isfinite(options.norm_bound) || options.norm_bound <= 0) {
    std::ostringstream msg;
    msg << "row guard: norm_bound must be finite and > 0, got " << options.norm_bound;
    throw InvalidParameter(msg.str());
  }
  if (options.scaling == RowScaling::unit) {
    // Refused rather than overridden: a caller asking for bound L ≠ 1 would otherwise get rows, and
    // a sensitivity, other than it computed with.
    if (options.norm_bound != 1.0) {
      std::ostringstream msg;
      msg.precision(17);
      msg << "row guard: unit scaling needs norm_bound = 1, got " << options.norm_bound;
      throw InvalidParameter(msg.str());
    }
    if (options.over_norm != OverNormPolicy::clip)
      throw InvalidParameter("row guard: unit scaling needs over_norm = clip (the division can leave a row an ulp "
                             "over norm 1; reject would refuse it for rounding)");
  }
}

namespace {
// Every entry finite and, for a nonnegative domain, none negative: one pass over the row. A
// non-finite entry anywhere is reported before a negative one (the finiteness check comes first).
void require_admissible_entries(const Eigen::Ref<const Eigen::VectorXd>& values, std::uint64_t row_index,
                                const Eigen::VectorXi* indices, bool nonnegative) {
  auto column = [&](Eigen::Index i) { return indices ? Eigen::Index{(*indices)[i]} : i; };
  Eigen::Index first_negative = -1;
  for (Eigen::Index i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      std::ostringstream msg;
      msg << "entry at column " << column(i) << " is " << values[i] << " (must be finite)";
      throw InvalidRow(row_index, msg.str());
    }
    if (nonnegative && first_negative < 0 && values[i] < 0) first_negative = i;
  }
  if (first_negative >= 0) {
    std::ostringstream msg;
    msg.precision(17);
    msg << "entry at column " << column(first_negative) << " is " << values[first_negative]
        << " (the guard's domain has no negative entry)";
    throw InvalidRow(row_index, msg.str());
  }
}
}  // namespace

double row_norm(const Eigen::Ref<const Eigen::VectorXd>& row) noexcept {
  double scale = 0;
  for (Eigen::Index i = 0; i < row.size(); ++i) {
    const double a = std::fabs(row(i));
    if (std::isnan(a)) return a;
    scale = std::max(scale, a);
  }
  if (scale == 0 || std::isinf(scale)) return scale;
  // No -ffast-math: GCC keeps this reduction scalar and in order (no reassociation).
  double sum = 0;
  for (Eigen::Index i = 0; i < row.size(); ++i) {
    const double r = row(i) / scale;
    sum += r * r;
  }
  return scale * std::sqrt(sum);
}

void require_bounded_row(const Eigen::Ref<const Eigen::VectorXd>& row, std::uint64_t index, Eigen::Index dimension,
                         double bound) {
  if (row.size() != dimension)
    throw InvalidRow(index, "dimension " + std::to_string(row.size()) + ", expected " + std::to_string(dimension));
  const double norm = row_norm(row);
  if (!(norm <= bound)) {
    std::ostringstream msg;
    msg.precision(17);
    msg << "l2 norm " << norm << " is over the bound " << bound
        << " the sensitivity assumes (pass rows through RowGuard to clip or reject)";
    throw InvalidRow(index, msg.str());
  }
}

void RowGuard::scale(Eigen::Ref<Eigen::VectorXd> values) {
  if (options_.scaling == RowScaling::none) return;
  // The arithmetic the tools did before the guard did it (their reader normalised each row), kept so
  // that replays give the same rows bit for bit. norm() is ~3x faster than stableNorm(); it can
  // only under- or overflow for entries beyond ~1e±154, and then the scaled stableNorm() decides.
  // norm() reads the row from its first entry wherever it sits; stableNorm() works in blocks from
  // the row's first aligned address, so it is taken as for the row held in a VectorXd.
  double norm = values.norm();
  if (!(norm > 0 && norm < std::numeric_limits<double>::infinity()))
    norm = linalg::reduce_as_aligned(values.data(), values.size(), [](const auto& v) { return v.stableNorm(); });
  if (std::isinf(norm)) {
    // ‖a‖ past the largest double (the entries are finite): a/inf would be a zero row, uncounted.
    values /= values.cwiseAbs().maxCoeff();
    norm = values.norm();
  }
  if (norm > 0) values /= norm;
  else ++counts_.zero;
}

void RowGuard::check_norm(Eigen::Ref<Eigen::VectorXd> values, std::uint64_t row_index) {
  // row_norm (scaled): a row of huge finite entries must not overflow to +inf and be "clipped" to 0.
  const double norm = row_norm(values);
  if (norm <= options_.norm_bound) return;
  if (options_.over_norm == OverNormPolicy::reject) {
    ++counts_.rejected;
    std::ostringstream msg;
    msg.precision(17);
    msg << "l2 norm " << norm << " exceeds the bound " << options_.norm_bound
        << " (policy: reject; use clip to scale such rows down)";
    throw InvalidRow(row_index, msg.str());
  }
  values *= options_.norm_bound / norm;
  // Rounding can leave the norm a few ulps above the bound; the sensitivity proofs need ≤ L exactly.
  while (row_norm(values) > options_.norm_bound) values *= (1.0 - 0x1.0p-52);
  ++counts_.clipped;
}

void RowGuard::admit(Eigen::Ref<Eigen::VectorXd> row) {
  const std::uint64_t row_index = counts_.seen++;
  if (row.size() != options_.dimension) {
    ++counts_.rejected;
    throw InvalidRow(row_index, "dimension " + std::to_string(row.size()) + ", expected " +
                                    std::to_string(options_.dimension));
  }
  try {
    require_admissible_entries(row, row_index, nullptr, options_.nonnegative);
  } catch (const InvalidRow&) {
    ++counts_.rejected;
    throw;
  }
  scale(row);
  check_norm(row, row_index);
  ++counts_.accepted;
}

void RowGuard::admit_sparse(const Eigen::Ref<const Eigen::VectorXi>& indices,
                            Eigen::Ref<Eigen::VectorXd> values) {
  const std::uint64_t row_index = counts_.seen++;
  auto reject = [&](const std::string& what) {
    ++counts_.rejected;
    throw InvalidRow(row_index, what);
  };
  if (indices.size() != values.size())
    reject("sparse row has " + std::to_string(indices.size()) + " indices but " +
           std::to_string(values.size()) + " values");
  for (Eigen::Index i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= options_.dimension)
      reject("sparse index " + std::to_string(indices[i]) + " at position " + std::to_string(i) +
             " is outside [0, " + std::to_string(options_.dimension) + ")");
    if (i > 0 && indices[i] <= indices[i - 1])
      reject("sparse indices must be strictly increasing; position " + std::to_string(i) + " has " +
             std::to_string(indices[i]) + " after " + std::to_string(indices[i - 1]));
  }
  const Eigen::VectorXi index_copy = indices;
  try {
    require_admissible_entries(values, row_index, &index_copy, options_.nonnegative);
  } catch (const InvalidRow&) {
    ++counts_.rejected;
    throw;
  }
  scale(values);
  check_norm(values, row_index);
  ++counts_.accepted;
}

}  // namespace dpstream::stream
