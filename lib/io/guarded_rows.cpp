#include "dpstream/io/guarded_rows.hpp"

#include <stdexcept>

#include "dpstream/base/errors.hpp"

namespace dpstream::io {

GuardedRows::GuardedRows(RowSource& source, const GuardedRowsOptions& o)
    : source_(source),
      guard_(o.guard),
      skip_(o.skip_malformed),
      limit_(o.limit),
      bound_(o.bound ? std::make_unique<stream::ContributionBound>(*o.bound) : nullptr),
      block_rows_(o.block_rows) {
  if (bound_ && block_rows_ == 0) throw InvalidParameter("guarded rows: block_rows must be >= 1 with a bound");
}

std::string GuardedRows::where() const {
  std::string w = source_.path() + ": row " + std::to_string(record_.row_index);
  if (record_.line != 0) w += " (line " + std::to_string(record_.line) + ")";
  return w;
}

// The bound decides on the row's key and the block it would go into, nothing else.
bool GuardedRows::within_bound() {
  if (!bound_) return true;
  try {
    return bound_->admit(record_.has_unit ? &record_.unit : nullptr, record_.row_index, used_ / block_rows_);
  } catch (const std::exception& e) {  // ResourceLimit (the units' state budget) or InvalidRow: kept as such
    rethrow_with_message(where() + ": " + reason_without_row(e));  // the file's row, not the bound's
  }
}

// Admits the reader's row in place (unit: normalised by the guard); false if the guard refused it
// and refusals are counted.
bool GuardedRows::admit(Eigen::VectorXd& row) {
  // Checked in the reader's own VectorXd, not in a copy: Eigen's vectorised norm depends on the
  // data's alignment by an ulp, and ContinualSum re-checks ‖a‖ ≤ L on an aligned copy (Eigen's heap
  // alignment, like this vector's). Checked at another alignment, a row at L to the last ulp could
  // pass the guard and then be refused by the stream.
  try {
    // unit: clip at L = 1 (the division can leave ‖a‖ = 1 + 1 ulp); clip: clip at L; none: reject over L.
    guard_.admit(row);
    return true;
  } catch (const InvalidRow& e) {
    if (!skip_)
      throw InvalidRow::with_message(record_.row_index,
                                     where() + ": " + e.reason() + " (--skip-malformed counts and skips such rows)",
                                     e.reason());
    if (first_reject_.empty()) first_reject_ = where() + ": " + e.reason();
    return false;
  }
}

const Eigen::VectorXd* GuardedRows::next() {
  if (limit_ != 0 && used_ == limit_) return nullptr;
  for (;;) {
    if (!source_.next(record_)) return nullptr;  // CorruptInput propagates (names file and row)
    if (!within_bound()) continue;  // dropped and counted by the bound
    if (!admit(record_.dense)) continue;
    ++used_;
    return &record_.dense;
  }
}

std::uint64_t count_usable_rows(RowSource& source, const GuardedRowsOptions& options) {
  GuardedRows rows(source, options);
  while (rows.next()) {
  }
  return rows.used();
}

}  // namespace dpstream::io
