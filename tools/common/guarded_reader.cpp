#include "common/guarded_reader.hpp"

namespace dpstream::tools {

io::GuardedRowsOptions guarded_rows_options(const io::RowSource& source, const ReadOptions& o) {
  return {o.normalize.guard_options(source.dimension(), o.nonnegative), o.skip_malformed, o.limit, o.bound,
          o.block_rows};
}

GuardedReader::GuardedReader(io::RowSource& source, const ReadOptions& o)
    : rows_(source, guarded_rows_options(source, o)) {}

bool GuardedReader::fill(RowBuffer& buf, std::uint64_t max_rows,
                         const std::function<void(std::uint64_t)>& on_progress) {
  const Eigen::Index d = buf.dimension();
  for (std::uint64_t added = 0; added < max_rows; ++added) {
    const Eigen::VectorXd* row = rows_.next();
    if (!row) return false;
    buf.reserve(buf.rows + 1);
    Eigen::Map<Eigen::VectorXd>(buf.row(buf.rows), d) = *row;
    ++buf.rows;
    if (on_progress && (rows_.used() & 1023) == 0) on_progress(rows_.used());
  }
  return true;
}

}  // namespace dpstream::tools
