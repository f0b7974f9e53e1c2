#include "dpstream/stream/block_aggregate.hpp"

#include <cmath>
#include <string>

#include "block_aggregate.pb.h"
#include "dpstream/errors.hpp"
#include "dpstream/io/message_seal.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace dpstream::stream {

namespace {

// The guarded rows [begin, end) of `rows` (global offset first_row) summed into one part.
template <class Accumulator>
BlockAggregate sum_part(const Eigen::Ref<const Eigen::MatrixXd>& rows, Eigen::Index begin, Eigen::Index end,
                        std::uint64_t first_row, std::uint64_t block_rows, const RowGuardOptions& options) {
  RowGuard guard(options);
  Eigen::MatrixXd guarded(end - begin, rows.cols());
  Eigen::VectorXd row(rows.cols());  // the caller's own VectorXd: unit scaling's bits do not move
  for (Eigen::Index i = begin; i < end; ++i) {
    row = rows.row(i).transpose();
    const std::uint64_t global = first_row + static_cast<std::uint64_t>(i);
    try {
      guard.admit(row);
    } catch (const InvalidRow& e) {
      // The guard numbers rows from 0 within this part: name the row by its place in the stream.
      const std::string what = e.what();
      const auto colon = what.find(": ");
      throw InvalidRow(global, colon == std::string::npos ? what : what.substr(colon + 2));
    }
    guarded.row(i - begin) = row.transpose();
  }
  Accumulator sum(rows.cols());
  sum.update_block(guarded);
  BlockAggregate part;
  part.kind = Accumulator::kKind;
  part.dimension = rows.cols();
  part.block_rows = block_rows;
  part.first_row = first_row + static_cast<std::uint64_t>(begin);
  part.rows = static_cast<std::uint64_t>(end - begin);
  part.guard = options;
  part.counts = guard.counts();
  part.packed_sum.resize(sum.packed_size());
  sum.pack(part.packed_sum);
  return part;
}

bool same_guard(const RowGuardOptions& a, const RowGuardOptions& b) noexcept {
  return a.dimension == b.dimension && a.norm_bound == b.norm_bound && a.over_norm == b.over_norm &&
         a.nonnegative == b.nonnegative && a.scaling == b.scaling;
}

}  // namespace

std::vector<BlockAggregate> aggregate_rows(const std::string& kind, const Eigen::Ref<const Eigen::MatrixXd>& rows,
                                           std::uint64_t first_row, std::uint64_t block_rows,
                                           const RowGuardOptions& guard) {
  if (kind != VectorAccumulator::kKind && kind != CovarianceAccumulator::kKind)
    throw InvalidParameter("aggregate_rows: kind '" + kind + "' (expected vector or covariance)");
  if (block_rows < 1) throw InvalidParameter("aggregate_rows: block_rows must be >= 1, got 0");
  if (rows.cols() != guard.dimension)
    throw InvalidRow(first_row, "block of dimension " + std::to_string(rows.cols()) + ", expected " +
                                    std::to_string(guard.dimension));
  RowGuard check(guard);  // InvalidParameter for bad guard options, before any row
  std::vector<BlockAggregate> parts;
  Eigen::Index begin = 0;
  while (begin < rows.rows()) {
    const std::uint64_t global = first_row + static_cast<std::uint64_t>(begin);
    const auto room = static_cast<Eigen::Index>(block_rows - global % block_rows);  // to the next boundary
    const Eigen::Index end = std::min(rows.rows(), begin + room);
    parts.push_back(kind == CovarianceAccumulator::kKind
                        ? sum_part<CovarianceAccumulator>(rows, begin, end, first_row, block_rows, guard)
                        : sum_part<VectorAccumulator>(rows, begin, end, first_row, block_rows, guard));
    begin = end;
  }
  return parts;
}

bool mergeable(const BlockAggregate& a, const BlockAggregate& b) noexcept {
  return a.kind == b.kind && a.dimension == b.dimension && a.block_rows == b.block_rows && a.block_rows > 0 &&
         b.first_row == a.end_row() && a.rows > 0 && b.rows > 0 && a.block() == (b.end_row() - 1) / b.block_rows &&
         same_guard(a.guard, b.guard) && a.packed_sum.size() == b.packed_sum.size();
}

BlockAggregate merge_aggregates(const BlockAggregate& a, const BlockAggregate& b) {
  if (!mergeable(a, b))
    throw InvalidParameter("merge_aggregates: rows [" + std::to_string(a.first_row) + ", " +
                           std::to_string(a.end_row()) + ") and [" + std::to_string(b.first_row) + ", " +
                           std::to_string(b.end_row()) +
                           ") are not adjacent parts of one block with the same kind, dimension, block and guard");
  BlockAggregate out = a;
  out.rows += b.rows;
  out.packed_sum += b.packed_sum;
  out.counts += b.counts;
  return out;
}

namespace {

std::string rows_text(const BlockAggregate& part) {
  return "aggregate of rows [" + std::to_string(part.first_row) + ", " + std::to_string(part.end_row()) + ")";
}

// What rows of norm ≤ L can sum to: a covariance's diagonal is ≥ 0 with trace Σ‖a‖² ≤ n·L²; a
// vector sum has ‖Σa‖ ≤ n·L. Relative 1e-9 for the rounding of n additions (~n·2^-53).
void check_magnitude(const BlockAggregate& part, double bound) {
  const double slack = 1 + 1e-9;
  const double n = static_cast<double>(part.rows);
  if (!part.packed_sum.allFinite()) throw InvalidParameter(rows_text(part) + ": the sum has a non-finite entry");
  if (part.kind == CovarianceAccumulator::kKind) {
    double trace = 0;
    for (Eigen::Index j = 0; j < part.dimension; ++j) {
      const double diagonal = part.packed_sum(j * (j + 1) / 2 + j);
      if (diagonal < 0)
        throw InvalidParameter(rows_text(part) + ": diagonal entry " + std::to_string(j) + " is negative (" +
                               privacy::format_value(diagonal) + "), which no sum of a·aᵀ can be");
      trace += diagonal;
    }
    if (trace > n * bound * bound * slack)
      throw InvalidParameter(rows_text(part) + ": trace " + privacy::format_value(trace) + " exceeds rows × L² = " +
                             privacy::format_value(n * bound * bound) + " (a row over the norm bound)");
  } else if (part.packed_sum.norm() > n * bound * slack) {
    throw InvalidParameter(rows_text(part) + ": norm " + privacy::format_value(part.packed_sum.norm()) +
                           " exceeds rows × L = " + privacy::format_value(n * bound) + " (a row over the norm bound)");
  }
}

}  // namespace

void check_aggregate(const BlockAggregate& part, const AggregateExpectation& stream) {
  const std::string what = rows_text(part);
  if (part.kind != stream.kind)
    throw InvalidParameter(what + ": a " + part.kind + " sum, this stream sums " + stream.kind);
  if (part.dimension != stream.dimension || part.packed_sum.size() != stream.packed_size ||
      part.guard.dimension != stream.dimension)
    throw InvalidParameter(what + ": dimension " + std::to_string(part.dimension) + " with " +
                           std::to_string(part.packed_sum.size()) + " packed values, the stream has dimension " +
                           std::to_string(stream.dimension) + " (" + std::to_string(stream.packed_size) + ")");
  if (part.block_rows != stream.block_rows)
    throw InvalidParameter(what + ": cut for blocks of " + std::to_string(part.block_rows) + " rows, the stream's are " +
                           std::to_string(stream.block_rows));
  if (part.guard.norm_bound != stream.norm_bound)
    throw InvalidParameter(what + ": guarded with norm bound " + privacy::format_value(part.guard.norm_bound) +
                           ", the stream is calibrated for " + privacy::format_value(stream.norm_bound));
  if (part.rows == 0) throw InvalidParameter(what + ": no rows");
  if (part.first_row != stream.next_row)
    throw InvalidParameter(what + ": the stream's next row is " + std::to_string(stream.next_row) +
                           (part.first_row < stream.next_row ? " (rows counted twice)" : " (rows missing before it)"));
  if (part.rows > stream.room)
    throw InvalidParameter(what + ": crosses the release boundary at row " + std::to_string(stream.next_row + stream.room) +
                           " (parts are cut at multiples of the block)");
  const RowGuardCounts& c = part.counts;
  if (c.accepted != part.rows || c.seen != c.accepted + c.rejected || c.clipped > c.accepted || c.zero > c.accepted)
    throw InvalidParameter(what + ": the guard's counts (seen " + std::to_string(c.seen) + ", accepted " +
                           std::to_string(c.accepted) + ", clipped " + std::to_string(c.clipped) + ", rejected " +
                           std::to_string(c.rejected) + ", zero " + std::to_string(c.zero) + ") disagree with its " +
                           std::to_string(part.rows) + " rows");
  check_magnitude(part, stream.norm_bound);
}

std::string serialize(const BlockAggregate& part) {
  proto::BlockAggregate msg;
  msg.set_format_version(1);
  msg.set_value_kind(part.kind);
  msg.set_dimension(part.dimension);
  msg.set_block_rows(part.block_rows);
  msg.set_first_row(part.first_row);
  msg.set_rows(part.rows);
  msg.set_norm_bound(part.guard.norm_bound);
  msg.set_over_norm(to_string(part.guard.over_norm));
  msg.set_scaling(to_string(part.guard.scaling));
  msg.set_nonnegative(part.guard.nonnegative);
  proto::GuardCounts& c = *msg.mutable_guard();
  c.set_seen(part.counts.seen);
  c.set_accepted(part.counts.accepted);
  c.set_clipped(part.counts.clipped);
  c.set_rejected(part.counts.rejected);
  c.set_zero(part.counts.zero);
  msg.mutable_packed_sum()->Add(part.packed_sum.data(), part.packed_sum.data() + part.packed_sum.size());
  return io::seal_message(msg.SerializeAsString());
}

BlockAggregate parse_block_aggregate(const std::string& bytes) {
  io::check_message_seal(bytes, "block aggregate");
  proto::BlockAggregate msg;
  if (!msg.ParseFromString(bytes))
    throw CorruptInput("block aggregate: " + std::to_string(bytes.size()) + " bytes do not parse");
  if (msg.format_version() != 1)
    throw CorruptInput("block aggregate: format_version " + std::to_string(msg.format_version()) + ", this build reads 1");
  BlockAggregate part;
  part.kind = msg.value_kind();
  part.dimension = msg.dimension();
  part.block_rows = msg.block_rows();
  part.first_row = msg.first_row();
  part.rows = msg.rows();
  part.guard.dimension = msg.dimension();
  part.guard.norm_bound = msg.norm_bound();
  try {
    part.guard.over_norm = parse_over_norm_policy(msg.over_norm());
    part.guard.scaling = parse_row_scaling(msg.scaling());
  } catch (const InvalidParameter& e) {
    throw CorruptInput(std::string("block aggregate: ") + e.what());
  }
  part.guard.nonnegative = msg.nonnegative();
  part.counts = {msg.guard().seen(), msg.guard().accepted(), msg.guard().clipped(), msg.guard().rejected(),
                 msg.guard().zero()};
  part.packed_sum = Eigen::Map<const Eigen::VectorXd>(msg.packed_sum().data(), msg.packed_sum_size());
  return part;
}

}  // namespace dpstream::stream
