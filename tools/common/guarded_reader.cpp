#include "common/guarded_reader.hpp"

#include <stdexcept>

#include "dpstream/errors.hpp"

namespace dpstream::tools {

using Eigen::Index;
using Eigen::VectorXd;

GuardedReader::GuardedReader(io::RowSource& source, const ReadOptions& o)
    : source_(source),
      guard_(o.normalize.guard_options(source.dimension(), o.nonnegative)),
      skip_(o.skip_malformed),
      limit_(o.limit),
      bound_(o.bound ? std::make_unique<stream::ContributionBound>(*o.bound) : nullptr),
      block_rows_(o.block_rows) {}

std::string GuardedReader::where() const {
  std::string w = source_.path() + ": row " + std::to_string(record_.row_index);
  if (record_.line != 0) w += " (line " + std::to_string(record_.line) + ")";
  return w;
}

// The bound decides on the row's unit key and the block it would go into, nothing else; a missing
// or empty key, or a new unit over the state budget, stops the run naming the row (never skipped:
// a row without a unit cannot be bounded, and skipping it would hide a broken key column).
bool GuardedReader::within_bound() {
  if (!bound_) return true;
  try {
    return bound_->admit(record_.has_unit ? &record_.unit : nullptr, record_.row_index, used_ / block_rows_);
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (what.rfind("row ", 0) == 0 && what.find(": ") != std::string::npos) what = what.substr(what.find(": ") + 2);
    throw std::runtime_error(where() + ": " + what);
  }
}

// Admits the reader's row in place (unit: normalised by the guard); false if the guard refused it
// and refusals are counted.
bool GuardedReader::admit(VectorXd& row) {
  // Checked in the reader's own VectorXd, not in the buffer: Eigen's vectorised norm depends on the
  // data's alignment by an ulp, and ContinualSum re-checks ‖a‖ ≤ L on an aligned copy (Eigen's heap
  // alignment, like this vector's). Checked at another alignment, a row at L to the last ulp could
  // pass the guard and then be refused by the stream.
  try {
    // unit: clip at L = 1 (the division can leave ‖a‖ = 1 + 1 ulp); clip: clip at L; none: reject over L.
    guard_.admit(row);
    return true;
  } catch (const InvalidRow& e) {
    std::string what = e.what();  // "row N: …" with N the guard's count; name the file's row instead
    const auto colon = what.find(": ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    std::string where = source_.path() + ": row " + std::to_string(record_.row_index);
    if (record_.line != 0) where += " (line " + std::to_string(record_.line) + ")";
    if (!skip_) throw std::runtime_error(where + ": " + what + " (--skip-malformed counts and skips such rows)");
    if (first_reject_.empty()) first_reject_ = where + ": " + what;
    return false;
  }
}

bool GuardedReader::fill(RowBuffer& buf, std::uint64_t max_rows, const std::function<void(std::uint64_t)>& on_progress) {
  const Index d = source_.dimension();
  std::uint64_t added = 0;
  while (added < max_rows) {
    if (limit_ != 0 && used_ == limit_) return false;
    if (!source_.next(record_)) return false;  // CorruptInput propagates (names file and row)
    if (!within_bound()) continue;  // dropped and counted by the bound
    if (!admit(record_.dense)) continue;
    buf.reserve(buf.rows + 1);
    Eigen::Map<VectorXd>(buf.row(buf.rows), d) = record_.dense;
    ++buf.rows;
    ++added;
    ++used_;
    if (on_progress && (used_ & 1023) == 0) on_progress(used_);
  }
  return true;
}

std::uint64_t count_usable_rows(io::RowSource& source, const ReadOptions& options) {
  GuardedReader reader(source, options);
  RowBuffer one(source.dimension());
  for (;;) {
    one.rows = 0;
    if (!reader.fill(one, 1)) break;
  }
  return reader.used();
}

}  // namespace dpstream::tools
