// Reading rows for the tools: every row from a RowSource through RowGuard (which also does the unit
// normalisation), counting what is clipped, rejected or skipped, into a RowBuffer (dpstream-replay,
// dpstream-pca).
// Nothing is dropped silently: a row that does not get through either stops the run (naming the
// file, the row and the line) or, with skip_malformed, is counted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <Eigen/Core>

#include "common/cli.hpp"
#include "common/row_buffer.hpp"
#include "dpstream/io/row_source.hpp"
#include "dpstream/stream/contribution_bound.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::tools {

struct ReadOptions {
  NormalizeFlags normalize;
  bool skip_malformed = false;  // count and skip reader errors and guard rejections instead of throwing
  std::uint64_t limit = 0;      // use the first N valid rows (0: all)
  bool nonnegative = false;     // the guard refuses a row with a negative entry (RowGuardOptions)
  // Unit level: rows pass a ContributionBound BEFORE the guard (source → bound → guard → stream); a
  // kept row goes into block used() / block_rows of the stream the rows feed.
  std::optional<stream::ContributionBoundOptions> bound = std::nullopt;
  std::uint64_t block_rows = 1;
};

class GuardedReader {
 public:
  GuardedReader(io::RowSource& source, const ReadOptions& options);

  // Appends up to `max_rows` admitted rows to `buf` (growing it); returns false once the input (or
  // the limit) is exhausted. A reader error propagates as CorruptInput naming file and row.
  bool fill(RowBuffer& buf, std::uint64_t max_rows, const std::function<void(std::uint64_t)>& on_progress = {});

  std::uint64_t used() const { return used_; }
  std::uint64_t zero() const { return guard_.counts().zero; }
  const stream::RowGuardCounts& guard_counts() const { return guard_.counts(); }
  const std::string& first_reject() const { return first_reject_; }
  // The contribution bound (nullptr at row level); its counts are not private.
  const stream::ContributionBound* bound() const noexcept { return bound_.get(); }

 private:
  bool admit(Eigen::VectorXd& row);
  bool within_bound();  // the record's unit has room for it (always, at row level)
  std::string where() const;  // "FILE: row N (line L)"

  io::RowSource& source_;
  stream::RowGuard guard_;
  bool skip_;
  std::uint64_t limit_;
  std::unique_ptr<stream::ContributionBound> bound_;
  std::uint64_t block_rows_;
  io::RowRecord record_;
  std::uint64_t used_ = 0;
  std::string first_reject_;
};

// The number of rows a GuardedReader with `options` would use from a fresh `source` (a first pass
// over a file that does not declare its length). Stops the same way the run would.
std::uint64_t count_usable_rows(io::RowSource& source, const ReadOptions& options);

}  // namespace dpstream::tools
