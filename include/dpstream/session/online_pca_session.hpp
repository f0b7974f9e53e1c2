// An online-PCA session: the protocol of private online PCA on one stream of blocks — the private
// follow-the-perturbed-leader learner on a continual covariance release (and the row-fed learners
// beside it: row_learners.hpp), follow-the-leader and the regret meter — with its workers on four
// threads (five under nonnegative), or all run by the caller (OnlinePcaOptions::threaded = false:
// the same steps in the same order, the same bits). dpstream-replay and bench_scale drive it block by
// block; Python's OnlinePCA feeds it rows in chunks of any size (ingest(): the same steps, per piece).
//
//   reader ─▶ blocks of B rows ─┬─▶ ContinualCovariance ─release─▶ FplOnlinePca (private)
//                              └─▶ RegretMeter + FplOnlinePca (follow-the-leader)
//                                  + RowLearners (oja, power, gauss: row_learners.hpp)
//
//   reader (the caller, the producer): copies each block of B rows into ring slot b % R — a
//     column-major B × d matrix — (next_slot) and publishes it (publish).
//   stream: feeds block b to the ContinualCovariance (exact Gram update, noise, release).
//     Release Ĉ_t is in release slot t % n: the stream's own buffer t % n (it keeps n releases,
//     ContinualSumOptions::kept_releases), or, where the learner follows something made from the
//     release (separable's estimate) or changes it in place (nonnegative), a copy its subscriber
//     makes; the subscriber publishes it. Then the stream thread packs the stream's exact Σ a aᵀ
//     after block b into sum slot b % m for the evaluation (m and the copies' n: session_slots.hpp;
//     the stream's buffers are one more, as many d × d matrices as the copies and the latest release
//     they are made from).
//   learner (the private learner): for block b ≥ 1, follows release b (Ĉ after blocks 0..b−1: the
//     warm eigen-refresh, the most expensive step); then scores block b with that basis into
//     gains[b % R] and publishes them (ready = b + 1).
//   projection (nonnegative only): projects the reader's full releases ahead (full_projections.hpp),
//     as does the learner while it waits for one: two at once where they crowd, early in the stream.
//   evaluation: for block b, once ready > b and the stream is done with it: FTL's gains,
//     meter.add_gains for FTL and, from gains[b % R], for the private learner, meter.observe(block,
//     sum slot b % m) (the sum the stream thread already made, not the same Gram update a second
//     time); at each full block FTL follows the meter's leader (the top k of its exact covariance,
//     which the curve uses too). The row-fed learners (row_learners.hpp) are scored on block b and
//     then fed it here, before observe(b).
// Why this is the protocol of FplOnlinePca attached to the stream, only spread over threads: the
// private learner scores block b with the subspace of release b, i.e. of the rows before block b
// and nothing else (the same sequence of refreshes that attach() would run inside the stream, since
// each full block of B rows is exactly one release); FTL is scored before its update; the meter gets
// both gains before observe(b) (the evaluation reads gains[b] only after the learner published them:
// release/acquire on `ready`). Splitting the stream from the learner lets the Gram update and noise
// of block b + 1 overlap the refresh of release b; the results are identical to a single thread
// (tests/test_online_pca_session.cpp checks it). Slots are reused only when free: the reader rewrites
// ring slot b % R once the stream, the learner and the evaluation are done with block b − R; the
// stream rewrites release slot t % n once the learner is done with release t − n (in the stream's
// buffers: before the block that makes release t, as the stream writes it there), and sum slot
// b % m once the evaluation is done with block b − m (R, n, m: SessionSlots). An exception on any
// thread stops the others; close() rethrows it. Under nonprivate only the evaluation runs (and adds
// up the meter's sum itself). The threads carry these names (pthread names, for top and debuggers).
//
// Scheduling: the evaluation thread runs kEvaluationNice (online_pca_session.cpp) nice steps below
// the stream and the learner. On two cores the three threads shared them fairly, so the learner,
// the longest chain, got 2/3 of a core while the evaluation, which can lag it by its sum slots, took
// the rest; then the stream ran ahead, blocked, and a core sat idle while the evaluation waited on
// the learner. Yielding, the evaluation takes the cycles the others leave, and both cores stay
// busier (docs/performance.md, Scheduling). Deeper sum slots beside it added nothing. No output changes: the threads' order is set by their counters, never by timing.
//
// Privacy: only the private learners' subspaces are differentially private (OnlinePcaOptions: (ε, δ)
// for streams differing in one row zeroed with its slot kept). The meter, follow-the-leader and every
// figure computed from them use raw rows: they are evaluation output, not releases.
//
// Saving (save(), after drain()): drain() lets every worker finish every published block b' < b
// (they then wait for block b and touch nothing), and save() records that point as a list of parts
// (session_parts.hpp), each one object's own save: "continual_sum" — the stream after releases 1..b
// (its sealed save(): exact sums, held node noise, the noise source's state, the accountant's ledger),
// "private_learner" — after following releases 1..b−1 (release b is the stream's latest; the learner
// follows it at block b), under separable "stationary", and under nonnegative "nonnegative" — its
// reader after reading them (its schedule and the PSD correction it reuses, so that a resumed run
// reads every later release as the uninterrupted one), "ftl" and "meter" — after block b − 1 (the
// projection thread keeps nothing a resume needs: a projection depends on its release alone, and a
// resumed one projects again). A session built from such parts starts every counter at b, so its
// workers continue exactly where the saved ones stopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <Eigen/Core>

#include "dpstream/eval/regret.hpp"
#include "dpstream/pca/doubly_nonnegative.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/stream/block_aggregate.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/session/full_projections.hpp"
#include "dpstream/session/online_pca_options.hpp"
#include "dpstream/session/row_learners.hpp"
#include "dpstream/session/session_parts.hpp"
#include "dpstream/session/session_slots.hpp"
#include "dpstream/stream/stationary_estimate.hpp"

namespace dpstream::session {

class OnlinePcaSession {
 public:
  // `from`: continue from these saved parts (save()). The library validates the options
  // (InvalidParameter, before any noise is drawn); CorruptInput if the parts do not fit.
  OnlinePcaSession(Eigen::Index d, const OnlinePcaOptions& o, const SessionParts* from = nullptr);
  // The same, charging `budget` (the caller's accountant, which may hold other charges, or an
  // unaccounted budget) instead of an accountant of the session's own with o.stream.target.
  OnlinePcaSession(Eigen::Index d, const OnlinePcaOptions& o, privacy::Budget budget);
  OnlinePcaSession(const OnlinePcaSession&) = delete;
  OnlinePcaSession& operator=(const OnlinePcaSession&) = delete;
  ~OnlinePcaSession();

  // Reader: the ring slot for the next block, sized for `rows` rows, once every worker is done with
  // its last use; nullptr if a worker failed (then close() reports why).
  Eigen::MatrixXd* next_slot(std::uint64_t rows);
  // Reader: the slot from next_slot() holds the next block (unthreaded: every step runs on it now).
  void publish();
  // Reader: no more blocks. Waits for the workers to finish them and rethrows a worker's error.
  void close();
  // After close(): a final partial block becomes the last release (followed here, as attach()
  // would); the meter's final OPT.
  void finish();
  // A whole stream of rows on the caller's thread or the workers: blocks of `block` rows published,
  // then close() and finish().
  void run(const Eigen::Ref<const Eigen::MatrixXd>& rows);

  // Rows in chunks of any size, on the caller's thread (threaded = false, instead of
  // next_slot/publish): cut where a release ends, each piece is scored by the learners, streamed
  // (a release followed as it is made), then observed by the meter with the stream's exact sum (as
  // the block path's sum slots give it, without their copy) — the steps above, per piece. finish()
  // closes a partial last block. The stream checks each piece before anything else sees it: a row
  // it refuses, or rows past its horizon, leave the session as it was (the pieces before stay in).
  void ingest(const Eigen::Ref<const Eigen::MatrixXd>& rows);
  // A pre-summed part of the current block (stream/block_aggregate.hpp; distributed ingestion), in
  // row order: to the stream, its release followed. Needs evaluation = none (the meter needs rows).
  void add_aggregate(const stream::BlockAggregate& part);
  // Rows of the current, unfinished block (ingest, add_aggregate).
  std::uint64_t rows_pending() const;

  // Reader: waits until every worker is done with every published block; false if a worker failed.
  bool drain();
  // Reader, after drain(): the state as a list of parts (the header comment, "Saving").
  SessionParts save() const;

  std::uint64_t blocks_published() const { return produced_; }
  std::uint64_t rows_done() const { return rows_done_.load(std::memory_order_relaxed); }
  const OnlinePcaOptions& options() const { return options_; }
  // The meter (evaluation != none).
  eval::RegretMeter& meter() { return *meter_; }
  const eval::RegretMeter& meter() const { return *meter_; }
  bool has_meter() const { return meter_ != nullptr; }
  bool has_follow_the_leader() const { return ftl_ != nullptr; }
  // The accountant charged (the session's own, or the one of the budget given); nullptr if none.
  const privacy::PrivacyAccountant* accountant() const { return budget_ ? budget_->accountant() : nullptr; }
  const stream::ContinualCovariance* sum() const { return sum_.get(); }
  const pca::FplOnlinePca* private_learner() const { return private_.get(); }
  const pca::FplOnlinePca& follow_the_leader() const { return *ftl_; }
  // oja, power, gauss: the learners fed the guarded rows (row_learners.hpp); nullptr if none.
  const RowLearners* row_learners() const { return rows_.get(); }
  // The meter index of the first online private learner listed (ftl under nonprivate or gauss alone):
  // the one a report's top-level figures are of.
  std::size_t main_index() const { return main_index_; }
  // Each listed learner's figures, in list order (after finish()).
  std::vector<LearnerFigures> learner_figures() const;
  // separable: what the private learner follows (on packed releases, linalg::pack_lower); nullptr otherwise.
  const stream::StationaryEstimate<Eigen::VectorXd>* stationary() const { return stationary_ ? &*stationary_ : nullptr; }
  // nonnegative (with a private learner): its reader (full solves and cheap steps); nullptr otherwise.
  const pca::DoublyNonnegativeReader* nonnegative() const { return nonnegative_ ? &*nonnegative_ : nullptr; }
  std::size_t private_index() const { return private_index_; }
  std::size_t ftl_index() const { return ftl_index_; }
  const SessionSlots& slots() const { return slots_; }
  // CPU seconds of the worker threads (so that other processes on the machine do not count); 0
  // unthreaded.
  double cpu_stream() const { return cpu_stream_; }
  double cpu_learner() const { return cpu_learner_; }
  double cpu_evaluation() const { return cpu_evaluation_; }
  double cpu_projection() const { return cpu_projection_; }  // nonnegative; 0 otherwise

 private:
  static constexpr std::uint64_t kClosed = std::uint64_t{1} << 63;  // "no more" flag of a counter
  using Step = bool (OnlinePcaSession::*)(std::uint64_t);

  void build(Eigen::Index d, const SessionParts* from);
  void build_evaluation(Eigen::Index d);
  void ingest_piece(const Eigen::Ref<const Eigen::MatrixXd>& piece);
  void start_ingesting(const char* fn);
  void build_private(Eigen::Index d, std::uint64_t steps, const SessionParts* from);
  void start_workers();
  bool wait_until(std::atomic<std::uint64_t>& counter, std::uint64_t target);
  Eigen::VectorXd& exact_sum_slot(std::uint64_t b) { return exact_sums_[b % slots_.sums]; }
  static void signal(std::atomic<std::uint64_t>& counter, std::uint64_t value);
  void fail();
  void join();
  void run_inline(std::uint64_t b);
  void restore(const SessionParts& from);
  void restore_readers(const SessionParts& from, std::uint64_t b);
  void worker(const char* name, Step step, std::exception_ptr& error, double& cpu);
  bool stream_step(std::uint64_t b);
  void on_release(const stream::ContinualCovariance::Release& r);
  void copy_followed(const Eigen::MatrixXd& release, Eigen::MatrixXd& slot) const;
  double followed_noise_norm(const stream::ContinualCovariance::Release& r) const;
  bool follow(Eigen::MatrixXd& followed, double noise_norm, std::uint64_t step);
  bool learner_step(std::uint64_t b);
  bool projection_step(std::uint64_t);
  bool evaluation_step(std::uint64_t b);
  // score_and_observe's halves: the learners' gains and the row-fed learners' step before the meter
  // observes the rows; FTL's follow and the rows done after.
  void score(const Eigen::Ref<const Eigen::MatrixXd>& rows, const Eigen::VectorXd* private_gains);
  void observed();
  template <class Observe>
  bool score_and_observe(const Eigen::Ref<const Eigen::MatrixXd>& rows, const Eigen::VectorXd* private_gains,
                         Observe&& observe);

  Eigen::Index d_;
  OnlinePcaOptions options_;
  std::uint64_t block_;
  std::unique_ptr<eval::RegretMeter> meter_;
  std::unique_ptr<pca::FplOnlinePca> ftl_;
  std::optional<privacy::PrivacyAccountant> accountant_;  // the session's own; before sum_, which points at it
  std::optional<privacy::Budget> budget_;                  // what every private learner charges
  std::unique_ptr<stream::ContinualCovariance> sum_;
  std::unique_ptr<pca::FplOnlinePca> private_;
  std::unique_ptr<RowLearners> rows_;  // oja, power, gauss (the evaluation thread feeds them)
  std::vector<std::string> learners_;  // the learner list (empty under nonprivate)
  privacy::EpsDelta share_{1.0, 1e-6};  // each private learner's share of the target
  std::size_t main_index_ = 0;
  // separable: the estimate on the releases' lower triangles (exactly symmetric releases, so nothing
  // is lost): d(d+1)/2 values a sum instead of d², and the saved part copies them as they are.
  std::optional<stream::StationaryEstimate<Eigen::VectorXd>> stationary_;
  Eigen::VectorXd packed_release_;  // stream thread: the latest release, packed for the estimate
  // nonnegative: what the learner follows is read by it first (doubly nonnegative, post-processing),
  // its full releases projected ahead by the projection and learner threads
  std::optional<pca::DoublyNonnegativeReader> nonnegative_;
  std::unique_ptr<FullProjections> projections_;
  std::size_t private_index_ = 0, ftl_index_ = 0;
  SessionSlots slots_;
  std::vector<Eigen::MatrixXd> ring_;  // block b in slot b % slots_.ring
  std::vector<Eigen::VectorXd> gains_;  // learner → evaluation: the private gains on block b, slot b % slots_.ring
  // stream → learner: release t in slot t % release_buffers_: in place, the stream's own buffer (its
  // address here); else a copy of what the learner follows (copy_followed).
  bool in_place_ = false;
  std::uint64_t release_buffers_ = 0;
  std::vector<const Eigen::MatrixXd*> release_view_;
  std::vector<Eigen::MatrixXd> release_copy_;
  std::vector<double> release_noise_;  // ‖E‖₂ of what each release slot holds (followed_noise_norm)
  std::vector<Eigen::VectorXd> exact_sums_;  // stream → evaluation: the exact sum after block b (exact_sum_slot)
  std::uint64_t first_block_ = 0;  // 0, or the block a resumed session starts from
  std::uint64_t produced_ = 0;     // the reader's count of published blocks
  bool ingesting_ = false;         // fed by ingest()/add_aggregate(): each release followed as it is made
  std::uint64_t ingested_ = 0;     // rows ingest()/add_aggregate() took
  // Counters (with the kClosed flag): blocks published, releases copied, releases followed, private
  // gains ready, blocks done by the stream, the learner and the evaluation; rows the meter has seen
  // (progress only).
  std::atomic<std::uint64_t> produced_signal_{0}, released_{0}, release_free_{0}, ready_{0};
  std::atomic<std::uint64_t> stream_done_{0}, learner_done_{0}, evaluation_done_{0}, rows_done_{0};
  std::atomic<bool> failed_{false}, running_{true};
  std::exception_ptr stream_error_, projection_error_, learner_error_, evaluation_error_;
  double cpu_stream_ = 0, cpu_projection_ = 0, cpu_learner_ = 0, cpu_evaluation_ = 0;
  // last: started once everything above is built
  std::thread stream_thread_, learner_thread_, evaluation_thread_, projection_thread_;
};

}  // namespace dpstream::session
