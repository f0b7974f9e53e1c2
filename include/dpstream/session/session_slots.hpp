// How far an online-PCA session's threads may run ahead of each other: the buffers reused
// round-robin between them (online_pca_session.hpp), and how much deeper they are where memory allows.
#pragma once

#include <cstdint>

#include <Eigen/Core>

#include "dpstream/session/online_pca_options.hpp"

namespace dpstream::session {

// Buffers reused round-robin between the threads: how far each may run ahead of the next.
struct SessionSlots {
  std::uint64_t ring = 8;      // blocks in flight from the reader to the workers (B × d each)
  std::uint64_t sums = 3;      // exact sums stream → evaluation (packed, d(d+1)/2): how far the stream runs ahead
  std::uint64_t releases = 2;  // releases stream → learner (d × d): how many releases the stream runs ahead
  std::uint64_t projections = 0;  // nonnegative: full releases projected ahead (d × d each; FullProjections)
};
// Extra memory deeper buffers may take beyond the defaults (session_slots): with the private
// learner, and under nonnegative.
inline constexpr double kPrivateBufferBytes = 32.0 * 1024 * 1024;
inline constexpr double kNonnegativeBufferBytes = 128.0 * 1024 * 1024;
// The slots a session of d-dimensional rows uses (a slot of each kind, a release, a packed sum and a
// block, is 8·(1.5·d² + d·B) bytes):
//  * with the private learner, up to 4 releases and 4 sums, as many beyond the defaults as fit in
//    kPrivateBufferBytes (4 each up to d = 1,140, 3 up to 1,630, then the defaults). Why: a warm
//    refresh takes 2 to 8 block products, so the learner's cost swings from one release to the
//    next, and with 2 release slots the stream waited for the slow ones while the evaluation,
//    waiting on the learner, had nothing to do. 4 beat 2 in bench_scale at d = 784, and more
//    gained nothing (the runs: docs/performance.md).
//  * under nonnegative, up to 8 releases (and sums, and blocks + 4) ahead, as many as fit in
//    kNonnegativeBufferBytes beyond the defaults, never fewer than 3, and 2 projections ahead (the
//    projection thread may be one full release ahead of the one the learner reads). Why: a full
//    release's PSD projection holds the learner for many blocks of the stream's work; with 2
//    release slots the stream stopped one release ahead, with more it streams on, the projection
//    thread projects the next full release meanwhile, and the learner and the evaluation catch up
//    after. Why 8, not 16: once projections ran ahead, 8 was as fast, with less CPU (fewer
//    first-touch page faults) and less peak memory (the runs: docs/tools.md). At d = 784 that is 8
//    slots, at d = 2048 4, at d = 4096 the minimum.
// Neither changes a bit of the output: each thread does the same work in the same order.
SessionSlots session_slots(Eigen::Index d, const OnlinePcaOptions& o);
// The d × d matrices these slots hold beyond the defaults' (a packed sum counts ½): what deeper
// buffers add to a front end's memory estimate.
double extra_slot_matrices(const SessionSlots& slots);

}  // namespace dpstream::session
