#include "dpstream/stream/block_aggregate.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <Eigen/Cholesky>

#include "block_aggregate.pb.h"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/format.hpp"
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
      throw e.at_row(global);  // the guard numbers rows from 0 within this part: name its place in the stream
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

// Rounding allowance of a part's sum. Each entry of Σ a·aᵀ is a sum of n products, each off by a
// relative u = 2^-53, so the computed C̃ = C + E with |E_ij| ≤ n·u·Σ_k |a_ki||a_kj| and
// ‖E‖_F ≤ n·u·tr C; the checks' own sums (a trace, a norm over p entries) add ≤ p·u relative. A
// factor 4 over (n + p)·u covers both with room; it is ~1e-9 at n = 10^6 or d = 4096.
double rounding(const BlockAggregate& part) {
  return 4.0 * (static_cast<double>(part.rows) + static_cast<double>(part.packed_sum.size())) * 0x1p-53;
}

// What a sum C = Σ a·aᵀ of n rows with ‖a‖ ≤ L must satisfy, cheapest first: finite (checked by
// the caller); diagonal ≥ 0; tr C ≤ n·L²; |c_ij| ≤ √(c_ii·c_jj) (Cauchy–Schwarz, which implies
// ‖C‖_F ≤ tr C: Σ c_ij² ≤ Σ c_ii·c_jj = (tr C)²); positive semidefinite. Together they bound the
// part's effect on the sum by ‖C‖_F ≤ n·L², n rows' worth, whatever a worker sends. Each allows
// rounding() relative (the trace the 1e-9 it always had, if more).
void check_covariance_part(const BlockAggregate& part, double bound) {
  const Eigen::Index d = part.dimension;
  const double n = static_cast<double>(part.rows), tol = rounding(part), slack = 1 + tol;
  const auto at = [&](Eigen::Index i, Eigen::Index j) { return part.packed_sum(j * (j + 1) / 2 + i); };  // i ≤ j
  double trace = 0;
  for (Eigen::Index j = 0; j < d; ++j) {
    if (at(j, j) < 0)
      throw InvalidParameter(rows_text(part) + ": diagonal entry " + std::to_string(j) + " is negative (" +
                             base::format_value(at(j, j)) + "), which no sum of a·aᵀ can be");
    trace += at(j, j);
  }
  if (trace > n * bound * bound * std::max(slack, 1 + 1e-9))
    throw InvalidParameter(rows_text(part) + ": trace " + base::format_value(trace) + " exceeds rows × L² = " +
                           base::format_value(n * bound * bound) + " (a row over the norm bound)");
  for (Eigen::Index j = 0; j < d; ++j)
    for (Eigen::Index i = 0; i < j; ++i)
      if (std::abs(at(i, j)) > std::sqrt(at(i, i) * at(j, j)) * slack)
        throw InvalidParameter(rows_text(part) + ": entry (" + std::to_string(i) + ", " + std::to_string(j) + ") = " +
                               base::format_value(at(i, j)) + " exceeds sqrt(c_ii c_jj) = " +
                               base::format_value(std::sqrt(at(i, i) * at(j, j))) +
                               ", which no sum of a·aᵀ can (Cauchy-Schwarz)");
  if (trace == 0) return;  // every entry is 0 (Cauchy–Schwarz above)
  // Positive semidefinite within rounding: C̃ + s·I is positive definite for s above the rounding of
  // C̃ (n·u·tr C) and of the factorization (~d·u·‖C‖ ≤ d·u·tr C), so its Cholesky factorization
  // fails only if λ_min(C̃) < −s: s = 2·rounding()·tr C. O(d³/3), ~6× less than an eigensolve.
  const double shift = 2 * tol * trace;
  Eigen::MatrixXd full(d, d);
  for (Eigen::Index j = 0; j < d; ++j) {
    for (Eigen::Index i = 0; i < j; ++i) full(j, i) = at(i, j);  // LLT reads the lower triangle
    full(j, j) = at(j, j) + shift;
  }
  // In place (Eigen::Ref): no second d × d copy, 134 MB at d = 4096.
  if (Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower>(full).info() != Eigen::Success)
    throw InvalidParameter(rows_text(part) + ": not positive semidefinite (an eigenvalue below -" +
                           base::format_value(shift) + "), which no sum of a·aᵀ can be");
}

// What rows of norm ≤ L can sum to: a covariance, check_covariance_part; a vector sum has
// ‖Σa‖ ≤ n·L. Non-finite sums are refused first.
void check_magnitude(const BlockAggregate& part, double bound) {
  if (!part.packed_sum.allFinite()) throw InvalidParameter(rows_text(part) + ": the sum has a non-finite entry");
  if (part.kind == CovarianceAccumulator::kKind) return check_covariance_part(part, bound);
  const double n = static_cast<double>(part.rows);
  if (part.packed_sum.norm() > n * bound * std::max(1 + rounding(part), 1 + 1e-9))
    throw InvalidParameter(rows_text(part) + ": norm " + base::format_value(part.packed_sum.norm()) +
                           " exceeds rows × L = " + base::format_value(n * bound) + " (a row over the norm bound)");
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
    throw InvalidParameter(what + ": guarded with norm bound " + base::format_value(part.guard.norm_bound) +
                           ", the stream is calibrated for " + base::format_value(stream.norm_bound));
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

std::string BlockAggregate::save() const {
  proto::BlockAggregate msg;
  save(msg);
  return base::seal(std::move(msg), kSealed);
}

BlockAggregate BlockAggregate::load(const std::string& bytes) {
  return load(base::unseal<proto::BlockAggregate>(bytes, kSealed));
}

void BlockAggregate::save(proto::BlockAggregate& msg) const {
  const BlockAggregate& part = *this;
  msg.set_format_version(kSealed.format_version);
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
}

BlockAggregate BlockAggregate::load(const proto::BlockAggregate& msg) {
  if (msg.format_version() != kSealed.format_version)
    base::refuse_format_version(kSealed.name, msg.format_version(), kSealed.format_version);
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
