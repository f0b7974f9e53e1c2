// What an online-PCA session (online_pca_session.hpp) is built from: the learners it runs side by
// side on one stream of blocks, the continual-release options of the stream the private
// follow-the-perturbed-leader learner follows, and the stream's length if known.
//
// Privacy: the whole run is held to stream.target, (ε, δ) for streams that differ in one row zeroed
// with its slot kept (stream.relation; the row norm bound stream.row_norm_bound is the sensitivity
// every learner's noise is calibrated to). Each of the n private learners gets learner_share(target,
// n) of it (row_learners.hpp says how the shares compose). Under `nonprivate` no learner is private:
// only follow-the-leader runs, and nothing is released.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/privacy/params.hpp"
#include "dpstream/session/followed_release.hpp"
#include "dpstream/stream/continual_sum.hpp"

namespace dpstream::session {

// The learners a session knows, in the order their noise seeds are numbered (learner_seed): fpl (on
// the continual covariance) first, then the row-fed ones (row_learners.hpp).
const std::vector<std::string>& known_learners();
// Every known learner with what it is, "fpl (…), oja (…), …": the front ends' help.
std::string describe_learners();
// Whether one of `learners` is calibrated for the stream's length (RowLearnerKind::needs_length).
bool row_learners_need_length(const std::vector<std::string>& learners);
// The d × d matrices `learners` hold beside the session's own (RowLearnerKind::memory_matrices).
double row_learner_matrices(const std::vector<std::string>& learners);

struct OnlinePcaOptions {
  Eigen::Index k = 10;                     // the dimension of every learned subspace
  std::uint64_t block = 128;               // rows per release B (a multiple of it: follow-the-leader's refresh)
  std::vector<std::string> learners{"fpl"};  // private learners, in list order (known_learners())
  bool nonprivate = false;                 // follow-the-leader only: no private learner, nothing spent
  bool nonnegative = false;                // rows have no negative entry: fpl follows each release read doubly nonnegative
  std::uint64_t minibatch = 1000;          // rows per step of oja and per refresh of power
  // The continual sum's options with the run's whole target; the session sets the horizon (the
  // releases of known_rows, 0 if unknown), block_rows, the target of fpl's share and the releases it keeps.
  stream::ContinualSumOptions stream;
  std::optional<std::uint64_t> known_rows;  // the stream's length if known (horizon, the curve's spacing)
  // Tests and audits: called with every release of the private stream as it is made, on the stream's
  // thread, before the learner reads it. Empty: none.
  std::function<void(const stream::ContinualCovariance::Release&)> release_observer;
  // Workers on threads of their own (stream, learner, evaluation, projection), or every step run by
  // the caller in publish() or ingest(): the same steps in the same order, so the same bits.
  bool threaded = true;
  // The evaluation beside the private learners (raw rows: evaluation output, never a release): the
  // regret meter and follow-the-leader, the meter alone, or neither (a caller that wants only the
  // private subspaces, or feeds pre-summed blocks: add_aggregate). The row-fed learners and
  // `nonprivate` need the meter; save() needs both.
  enum class Evaluation { meter_and_ftl, meter_only, none };
  Evaluation evaluation = Evaluation::meter_and_ftl;
  // The regret curve: a point every this many rows (0: no curve, the final figures only); unset:
  // about 200 points over known_rows, a point a block if the length is unknown.
  std::optional<std::uint64_t> curve_every;
  // nonnegative: the reader's refresh ratio α (pca::DoublyNonnegativeReader; 0: every release read
  // exactly, by a full projection).
  double nonnegative_refresh_ratio = kNonnegativeRefreshRatio;

  bool has_learner(const char* name) const;
  // fpl runs (a private stream is built): listed and not nonprivate.
  bool private_stream() const { return !nonprivate && has_learner("fpl"); }
  // fpl's continual release is calibrated for the stream's length (stream::needs_fixed_horizon).
  bool fixed_horizon() const;
  // A listed row-fed learner is calibrated for the stream's length too (the noisy power method).
  bool learners_need_length() const { return !nonprivate && row_learners_need_length(learners); }
};

// InvalidParameter naming the learner: unknown, listed twice, or an empty list.
void check_learners(const std::vector<std::string>& learners);

// The share of `total` each of `learners` private learners is calibrated to (row_learners.hpp).
privacy::EpsDelta learner_share(const privacy::EpsDelta& total, std::size_t learners);

// Distinct noise seeds for the learners of one seeded run (fpl's stream keeps the run's seed, so a
// default run draws what it drew before): independent draws, as the composition assumes.
std::optional<std::uint64_t> learner_seed(const std::optional<std::uint64_t>& seed, std::size_t index);

}  // namespace dpstream::session
