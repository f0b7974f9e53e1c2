// BlockAggregate: a pre-aggregated part of one release block, for ingestion spread over workers.
//
//   worker:      rows [o, o+n) ──RowGuard (same L, policy, scaling)──▶ exact sums cut at multiples of B
//                                                                     (by global row offset)
//   reduction:   adjacent parts of one block ──merge_aggregates──▶ one part per block (exact sums add)
//   coordinator: parts in row order ──ContinualSum::add_aggregate──▶ the one stream: noise, releases
//
// A part holds the exact sum of a contiguous run of rows [first_row, first_row + rows) that lies
// inside one block of B rows (it never crosses a release boundary, so the stream can release exactly
// where a single process would), the row count and the guard's counts, and the guard's settings.
// Workers send parts as sealed bytes (save / load: the library's Protobuf message,
// lib/proto/block_aggregate.proto, in the envelope of base/message_seal.hpp, as checkpoints).
//
// Why the privacy is unchanged (the contract ContinualSum::add_aggregate relies on):
//  * Each row passes one RowGuard with the stream's bound L (add_aggregate refuses a part whose
//    guard had another bound), so every summand still has ‖a‖₂ ≤ L and one row still changes one
//    block's sum by at most the sensitivity the stream is calibrated for (L², or √2·L² under replace,
//    for the packed covariance; L or 2L for a vector). Summing a block on a worker instead of at the
//    coordinator changes only the order of the additions.
//  * The noise is added once per release, at the coordinator, by the same ContinualSum and noise
//    strategy: workers draw no noise and release nothing; a part is raw data (as sensitive as the
//    rows) and never leaves the trusted deployment unnoised.
//  * The accounting is the stream's: one charge at construction, however many workers.
//  * What the coordinator can check, it does, before anything changes: the kind, dimension, B and
//    the guard's bound; that the part starts at the stream's next row (a gap or a part counted twice
//    is refused) and ends inside the current block; that the guard's counts agree with the row count
//    (accepted = rows, seen = accepted + rejected); that the sum is finite and is one n rows of norm
//    ≤ L can make: a covariance C has a diagonal ≥ 0, tr C ≤ n·L², |c_ij| ≤ √(c_ii·c_jj) (hence
//    ‖C‖_F ≤ tr C) and is positive semidefinite (a Cholesky factorization of C + s·I, s a rounding
//    allowance of 8·(n + p)·2^-53·tr C, p = d(d+1)/2: O(d³/3) a part); a vector sum has
//    ‖sum‖ ≤ n·L. So no part moves the stream's sum by more than n rows' worth (‖C‖_F ≤ n·L²).
//  * What it cannot check: the rows one by one. A part is a sum; one row of norm √n·L (a vector:
//    n·L) labelled as n rows, or one row over L among small ones, passes every check above. The
//    bound on each row, which the privacy of the rows summed on a worker rests on, is the worker's
//    RowGuard's: workers are part of the trusted computing base, as the process that calls
//    update() is. The CRC-32 seal of the wire format detects accidents, not forgery (anyone can
//    recompute it): it is no authentication. Run workers you trust, on a network you trust (TLS
//    between them otherwise). A forged part cannot weaken the guarantee of rows it does not hold:
//    it is a function of its sender's data and of public releases.
//
// Releases: add_aggregate ingests the part's sum exactly, and releases when the block completes, as
// update_block would; the releases differ from a single process's only by the rounding of the
// summation order (an exact sum's relative error ~1e-16, then snapped to the 2^-30·σ grid).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/base/message_seal.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::proto {
class BlockAggregate;
}

namespace dpstream::stream {

struct BlockAggregate {
  std::string kind;             // "vector" or "covariance" (the accumulator's kKind)
  Eigen::Index dimension = 0;
  std::uint64_t block_rows = 0;  // B of the stream it is cut for
  std::uint64_t first_row = 0;   // global offset of the part's first row
  std::uint64_t rows = 0;        // rows summed
  RowGuardOptions guard;         // the guard the rows passed (its dimension, L, policy, scaling)
  RowGuardCounts counts;         // what that guard counted for these rows
  Eigen::VectorXd packed_sum;    // the accumulator's pack(): raw data

  std::uint64_t block() const noexcept { return first_row / block_rows; }
  std::uint64_t end_row() const noexcept { return first_row + rows; }

  // Persistence (base/message_seal.hpp): the part as its message, and as sealed bytes. load checks
  // what a message can say of itself (CorruptInput naming the field); check_aggregate the rest.
  static constexpr base::SealedKind kSealed{"block aggregate", 1};
  void save(proto::BlockAggregate& out) const;
  static BlockAggregate load(const proto::BlockAggregate& in);
  std::string save() const;
  static BlockAggregate load(const std::string& bytes);
};

// Worker side: rows[i] is global row first_row + i. Each row passes a RowGuard built from `guard`
// (clipped in a copy, never in `rows`); the sums are cut at multiples of block_rows. Accumulator is
// "covariance" or "vector" (`kind`). An InvalidRow names the GLOBAL row index; InvalidParameter for
// bad options. Parts are in row order; a row rejected under `reject` throws (the run stops there:
// skipping it would shift every later block boundary away from a single process's).
std::vector<BlockAggregate> aggregate_rows(const std::string& kind, const Eigen::Ref<const Eigen::MatrixXd>& rows,
                                           std::uint64_t first_row, std::uint64_t block_rows,
                                           const RowGuardOptions& guard);

// Reduction: `a` followed by `b` (b starts where a ends, the same block, the same settings) as one
// part. InvalidParameter naming what does not fit.
BlockAggregate merge_aggregates(const BlockAggregate& a, const BlockAggregate& b);
// Whether merge_aggregates(a, b) applies (adjacent parts of one block, the same settings).
bool mergeable(const BlockAggregate& a, const BlockAggregate& b) noexcept;

// What ContinualSum::add_aggregate checks before it takes `part` (the list above): the stream's
// kind, dimension, packed size, B and L, its next row, and the rows it can still take in the current
// block. InvalidParameter naming the rows and what does not fit.
struct AggregateExpectation {
  const char* kind;
  Eigen::Index dimension;
  Eigen::Index packed_size;
  std::uint64_t block_rows;
  double norm_bound;
  std::uint64_t next_row;
  std::uint64_t room;  // rows left in the current block
};
void check_aggregate(const BlockAggregate& part, const AggregateExpectation& stream);

}  // namespace dpstream::stream
