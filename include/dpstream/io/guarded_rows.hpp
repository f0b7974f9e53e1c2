// Rows from a RowSource through a RowGuard (which also normalises them), one at a time, counting what
// is clipped, rejected or skipped: the reading every front end shares (dpstream-replay, dpstream-pca,
// Python's replay()). Nothing is dropped silently: a row the guard refuses either stops the read
// (naming the file, the row and the line) or, with skip_malformed, is counted.
//
// With a contribution bound (unit level: rows carry a key, stream/contribution_bound.hpp) the rows
// pass it BEFORE the guard: source → bound → guard → stream. A kept row's block is its position among
// the rows used so far divided by block_rows (the stream's blocks, public). A row without a key or
// with an empty one stops the read naming the row (never skipped: it would hide a broken key column);
// the rows the bound drops are counted (bound()->counts(), NOT private).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <Eigen/Core>

#include "dpstream/io/row_source.hpp"
#include "dpstream/stream/contribution_bound.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::io {

struct GuardedRowsOptions {
  stream::RowGuardOptions guard;  // the norm bound and how rows are brought under it (RowNormalization)
  bool skip_malformed = false;    // count and skip guard rejections instead of throwing
  std::uint64_t limit = 0;        // use the first N admitted rows (0: all)
  std::optional<stream::ContributionBoundOptions> bound;  // unit level (above); none: row level
  std::uint64_t block_rows = 1;   // with a bound: rows a release block holds
};

class GuardedRows {
 public:
  GuardedRows(RowSource& source, const GuardedRowsOptions& options);

  // The next admitted row (normalised), valid until the next call; nullptr once the input (or the
  // limit) is exhausted. A reader error propagates as CorruptInput naming file and row; a refused
  // row without skip_malformed as InvalidRow (its row_index the file's row) naming file, row and
  // line; the bound's refusals keep their class too (InvalidRow for a missing key, ResourceLimit
  // past the units' state budget), named the same way.
  const Eigen::VectorXd* next();

  std::uint64_t used() const { return used_; }
  std::uint64_t zero() const { return guard_.counts().zero; }
  const stream::RowGuardCounts& guard_counts() const { return guard_.counts(); }
  const std::string& first_reject() const { return first_reject_; }
  // The contribution bound (nullptr at row level); its counts are not private.
  const stream::ContributionBound* bound() const noexcept { return bound_.get(); }

 private:
  bool admit(Eigen::VectorXd& row);
  bool within_bound();         // the record's unit has room for it (always, at row level)
  std::string where() const;   // "FILE: row N (line L)"

  RowSource& source_;
  stream::RowGuard guard_;
  bool skip_;
  std::uint64_t limit_;
  std::unique_ptr<stream::ContributionBound> bound_;
  std::uint64_t block_rows_;
  RowRecord record_;
  std::uint64_t used_ = 0;
  std::string first_reject_;
};

// The number of rows GuardedRows with `options` would use from a fresh `source` (a first pass over a
// file that does not declare its length). Stops the same way the read would.
std::uint64_t count_usable_rows(RowSource& source, const GuardedRowsOptions& options);

}  // namespace dpstream::io
