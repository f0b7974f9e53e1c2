// Reading rows for the tools into a RowBuffer (dpstream-replay, dpstream-pca): the library's guarded
// reading (dpstream/io/guarded_rows.hpp: every row through RowGuard, which also does the unit
// normalisation, counting what is clipped, rejected or skipped), from the tools' flags.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <Eigen/Core>

#include "common/cli.hpp"
#include "common/row_buffer.hpp"
#include "dpstream/io/guarded_rows.hpp"
#include "dpstream/io/row_source.hpp"

namespace dpstream::tools {

struct ReadOptions {
  NormalizeFlags normalize;
  bool skip_malformed = false;  // count and skip reader errors and guard rejections instead of throwing
  std::uint64_t limit = 0;      // use the first N valid rows (0: all)
  bool nonnegative = false;     // the guard refuses a row with a negative entry (RowGuardOptions)
  // Unit level: rows pass a ContributionBound before the guard (io/guarded_rows.hpp); a kept row goes
  // into block used() / block_rows of the stream the rows feed.
  std::optional<stream::ContributionBoundOptions> bound = std::nullopt;
  std::uint64_t block_rows = 1;
};

// The library's options for the rows of `source`.
io::GuardedRowsOptions guarded_rows_options(const io::RowSource& source, const ReadOptions& options);

class GuardedReader {
 public:
  GuardedReader(io::RowSource& source, const ReadOptions& options);

  // Appends up to `max_rows` admitted rows to `buf` (growing it); returns false once the input (or
  // the limit) is exhausted. A reader error propagates as CorruptInput naming file and row.
  bool fill(RowBuffer& buf, std::uint64_t max_rows, const std::function<void(std::uint64_t)>& on_progress = {});

  std::uint64_t used() const { return rows_.used(); }
  std::uint64_t zero() const { return rows_.zero(); }
  const stream::RowGuardCounts& guard_counts() const { return rows_.guard_counts(); }
  const std::string& first_reject() const { return rows_.first_reject(); }
  // The contribution bound (nullptr at row level); its counts are not private.
  const stream::ContributionBound* bound() const noexcept { return rows_.bound(); }

 private:
  io::GuardedRows rows_;
};

// The number of rows a GuardedReader with `options` would use from a fresh `source`.
inline std::uint64_t count_usable_rows(io::RowSource& source, const ReadOptions& options) {
  return io::count_usable_rows(source, guarded_rows_options(source, options));
}

}  // namespace dpstream::tools
