// nonnegative: the PSD projections of the reader's full releases (pca::DoublyNonnegativeReader),
// computed by whichever of two threads is free — the projection thread, or the learner's while it would
// otherwise wait — so that two run at once where the full releases crowd (releases 1, 2, 3, 5, 7, 10,
// 14, 19, … at α = 1/3, each a d × d eigendecomposition: one core could not keep up with the stream there,
// and the other sat idle). A projection depends on its release alone
// (DoublyNonnegativeReader::full_projection), so which thread computes it changes nothing: the
// reader gets the same bits (apply_projected).
//
// Protocol: the full releases are claimed in order, each by one thread once the stream thread has published it and
// one of `buffers` buffers is free, and projected into that buffer. The learner takes them in order
// (take: waits for one, projecting the next claimable one itself meanwhile), reads its release with
// it and gives the buffer back (give_back). stop() ends every wait (a failed worker, the end).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include <Eigen/Core>

#include "dpstream/linalg/psd_projection.hpp"

namespace dpstream::session {

class FullProjections {
 public:
  // `release(t)`: release t as the stream thread left it (valid from published(t) until the learner gave t back).
  using ReleaseOf = std::function<const Eigen::MatrixXd&(std::uint64_t)>;
  // The schedule continues a reader that has read `releases_read` releases, the last full one
  // `last_full` (0: none), at refresh ratio `ratio` (DoublyNonnegativeReader::full_release).
  FullProjections(std::uint64_t releases_read, std::uint64_t last_full, double ratio, std::size_t buffers,
                  ReleaseOf release);

  // Stream thread: releases up to t are in their slots.
  void published(std::uint64_t t);
  // Projection thread: claims the next full release when it can and projects it; false once stopped.
  bool help();
  // Learner, at full release t (the earliest not given back): its projection, once done; nullptr
  // once stopped.
  const Eigen::MatrixXd* take(std::uint64_t t);
  // Learner: done with full release t's projection.
  void give_back(std::uint64_t t);
  void stop();

 private:
  std::uint64_t full_release_at(std::size_t index);  // the index-th full release ahead (0-based)
  bool claimable();  // under the lock (may extend the schedule)
  // Claims the next one and projects it unlocked, with `projector` (the calling thread's).
  void project_claimed(std::unique_lock<std::mutex>& lock, linalg::PsdProjector& projector);

  const double ratio_;
  const std::size_t buffers_;
  const ReleaseOf release_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::uint64_t> schedule_;  // full releases ahead, in order; index k uses buffer k % buffers_
  std::vector<bool> done_;               // per schedule index
  std::vector<Eigen::MatrixXd> buffer_;
  linalg::PsdProjector helper_projector_, learner_projector_;  // help()'s and take()'s: their buffers reused
  std::uint64_t last_scheduled_;         // the latest full release in schedule_ (or the reader's)
  std::uint64_t next_candidate_;         // the first release the reader has not read
  std::size_t claimed_ = 0, given_back_ = 0;  // schedule indices claimed, and given back, so far
  std::uint64_t published_ = 0;
  bool stopped_ = false;
};

}  // namespace dpstream::session
