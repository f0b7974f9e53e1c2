// The replay pipeline: the private learner, follow-the-leader and the regret meter driven by one
// stream of blocks, on four threads (five under --nonnegative).
//
//   reader ─▶ blocks of B rows ─┬─▶ ContinualCovariance ─release─▶ FplOnlinePca (private)
//                              └─▶ RegretMeter + FplOnlinePca (follow-the-leader)
//                                  + RowLearners (--learner oja, power, gauss: learners.hpp)
//
//   M (caller: producer): copies each block of B rows into ring slot b % R — a column-major B × d
//     matrix — (next_slot) and publishes it (publish).
//   S (stream): feeds block b to the ContinualCovariance (exact Gram update, noise, release).
//     Release Ĉ_t is in release slot t % n: the stream's own buffer t % n (it keeps n releases,
//     ContinualSumOptions::kept_releases), or, where L follows something made from the release
//     (separable's estimate) or changes it in place (--nonnegative), a copy its subscriber makes;
//     the subscriber publishes it. Then S packs the stream's exact Σ a aᵀ after block b into sum
//     slot b % m for E (m and the copies' n: pipeline_slots; the stream's buffers are one more, as
//     many d × d matrices as the copies and the latest release they are made from).
//   L (private learner): for block b ≥ 1, follows release b (Ĉ after blocks 0..b−1: the warm
//     eigen-refresh, the most expensive step); then scores block b with that basis into
//     gains[b % R] and publishes them (ready = b + 1).
//   P (--nonnegative only): projects the reader's full releases ahead (full_projections.hpp), as
//     does L while it waits for one: two at once where they crowd, early in the stream.
//   E (evaluation): for block b, once ready > b and S is done with it: FTL's gains, meter.add_gains
//     for FTL and, from gains[b % R], for the private learner, meter.observe(block, sum slot b % m)
//     (the sum S already made, not the same Gram update a second time); at each full block FTL follows
//     the meter's leader (the top k of its exact covariance, which the curve uses too). The
//     row-fed learners (learners.hpp) are scored on block b and then fed it here, before observe(b).
// Why this is the protocol of FplOnlinePca attached to the stream, only spread over threads: the
// private learner scores block b with the subspace of release b, i.e. of the rows before block b
// and nothing else (the same sequence of refreshes that attach() would run inside S, since each
// full block of B rows is exactly one release); FTL is scored before its update; the meter gets
// both gains before observe(b) (E reads gains[b] only after L published them: release/acquire on
// `ready`). Splitting S from L lets the Gram update and noise of block b + 1 overlap the refresh of
// release b; the results are identical to a single thread (tests/test_replay_pipeline.cpp checks
// it). Slots are reused only when free: M rewrites ring slot b % R once S, L and E are done with
// block b − R; S rewrites release slot t % n once L is done with release t − n (in the stream's
// buffers: before the block that makes release t, as the stream writes it there), and sum slot
// b % m once E is done with block b − m (R, n, m: PipelineSlots). An exception on any thread stops
// the others; close() rethrows it. With --nonprivate only E runs (and adds up the meter's sum
// itself).
//
// Scheduling: E runs kEvaluationNice (pipeline.cpp) nice steps below S and L. On two cores the
// three threads shared them fairly, so L, the longest chain, got 2/3 of a core while E, which can lag
// L by its sum slots, took the rest; then S ran ahead, blocked, and a core sat idle while E waited on
// L. Yielding, E takes the cycles S and L leave: both cores were busy 90.8–91.9% of the replay's wall
// time against 85.6–88.6% (bench_scale --d 2048 --k 32, 2026-11-27, 4 runs each alternated; busy =
// S + L + E CPU over twice the wall). Deeper sum slots beside it added nothing. No output changes:
// the threads' order is set by their counters, never by timing.
//
// Privacy: only the private learner's subspaces are differentially private (the stream's (ε, δ)).
// The meter, follow-the-leader and every figure computed from them use raw rows: they are
// evaluation output, not releases.
//
// Checkpoints: drain() lets every worker finish every published block b' < b (they then wait for
// block b and touch nothing), and save() records that point: the stream after releases 1..b (its
// own serialize(): exact sums, held node noise, the noise source's state, the accountant's ledger),
// the private learner after following releases 1..b−1 (release b is the stream's latest; L follows
// it at block b) and, under --nonnegative, its reader after reading them (its schedule and the PSD
// correction it reuses, so that a resumed run reads every later release as the uninterrupted one),
// FTL and the meter after block b − 1 (P keeps nothing a resume needs: a projection depends on its
// release alone, and a resumed P projects again). A pipeline built from such a checkpoint starts
// every counter at b, so its workers continue exactly where the saved ones stopped.
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
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/stationary_estimate.hpp"
#include "replay/full_projections.hpp"
#include "replay/learners.hpp"
#include "replay/pipeline_slots.hpp"
#include "replay/settings.hpp"
#include "replay_checkpoint.pb.h"

namespace dpstream::tools::replay {

// --nonnegative: rounds of (PSD, nonnegative) projection at a full release (doubly_nonnegative.hpp).
// One: on Fashion-MNIST (separable, GOE, seed 1) 1, 2 and 4 rounds gave regret/OPT 5.022%, 5.025%, 5.025%.
constexpr int kNonnegativeRounds = 1;
// --nonnegative: the reader's refresh ratio α (pca::DoublyNonnegativeReader): a full PSD solve once
// the releases since the last one exceed α × the releases at it; the others reuse its correction.
// On Fashion-MNIST (separable, GOE, seeds 1-3; every release exact: 5.022%, 5.094%, 4.987%, 72 s wall)
// α = 1/8, 1/4, 1/3, 1/2 gave regret/OPT 5.056/5.122/5.014%, 5.084/5.152/5.041%, 5.108/5.175/5.061%,
// 5.150/5.211/5.105% with 38, 23, 18 and 13 full solves of 469. 1/3: within 0.1 point of the exact
// reading on every seed (+0.075 to +0.086) and 1.29-1.49× the plain run's wall time (6 pairs back to
// back); 1/4 took 1.41-1.70× (12 pairs, 6 over the 1.5× budget; docs/tools.md).
constexpr double kNonnegativeRefreshRatio = 1.0 / 3.0;

// ‖E‖₂ of the noise in what the private learner follows for release r (pca::noise_spectral_norm: the
// mechanism's parameters only, for the noise floor of its refresh): the release's; under separable
// the stationary estimate's, whose diagonal entries have variance stationary_variance
// (StationaryEstimate::prefix_variance; off the diagonal, the release's ratio of the two). Under
// --nonnegative 0, no floor: the reading is a projection onto a convex set holding C, which bounds
// its error by the noise's in Frobenius norm but not in spectral norm, the one the floor needs.
// Pipeline and the Python binding share it.
double followed_noise_norm(Eigen::Index d, const stream::ContinualCovariance::Release& r,
                           std::optional<double> stationary_variance, bool nonnegative);

class Pipeline {
 public:
  // `known_rows`: the stream's length if known (the horizon of a fixed-horizon mechanism, the
  // curve's spacing). `from`: continue from this checkpoint (its settings already checked against
  // `s`). The library validates the privacy options (InvalidParameter); CorruptInput if the
  // checkpoint's states do not fit.
  Pipeline(Eigen::Index d, const ReplaySettings& s, std::optional<std::uint64_t> known_rows,
           const pb::ReplayCheckpoint* from);
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline();

  // M: the ring slot for the next block, sized for `rows` rows, once every worker is done with its
  // last use; nullptr if a worker failed (then close() reports why).
  Eigen::MatrixXd* next_slot(std::uint64_t rows);
  // M: the slot from next_slot() holds the next block.
  void publish();
  // M: no more blocks. Waits for the workers to finish them and rethrows a worker's error.
  void close();
  // After close(): a final partial block becomes the last release (followed here, as attach()
  // would); the meter's final OPT.
  void finish();

  // M: waits until S, L and E are done with every published block; false if a worker failed.
  bool drain();
  // M, after drain(): the learners', the meter's and the stream's state.
  void save(pb::ReplayCheckpoint& out) const;

  std::uint64_t blocks_published() const { return produced_; }
  std::uint64_t rows_done() const { return rows_done_.load(std::memory_order_relaxed); }
  eval::RegretMeter& meter() { return *meter_; }
  const eval::RegretMeter& meter() const { return *meter_; }
  const privacy::PrivacyAccountant* accountant() const { return accountant_ ? &*accountant_ : nullptr; }
  const stream::ContinualCovariance* sum() const { return sum_.get(); }
  const pca::FplOnlinePca* private_learner() const { return private_.get(); }
  // --learner oja, power, gauss: the learners fed the guarded rows (learners.hpp); nullptr if none.
  const RowLearners* row_learners() const { return rows_.get(); }
  // The meter index of the first online private learner listed (ftl under --nonprivate or gauss alone):
  // the one the JSON line's top-level figures are of.
  std::size_t main_index() const { return main_index_; }
  // Each listed learner's figures, in list order (after finish()).
  std::vector<LearnerFigures> learner_figures() const;
  // --mechanism separable: what the private learner follows (on packed releases, linalg::pack_lower);
  // nullptr otherwise.
  const stream::StationaryEstimate<Eigen::VectorXd>* stationary() const { return stationary_ ? &*stationary_ : nullptr; }
  // --nonnegative (with a private learner): its reader (full solves and cheap steps); nullptr otherwise.
  const pca::DoublyNonnegativeReader* nonnegative() const { return nonnegative_ ? &*nonnegative_ : nullptr; }
  std::size_t private_index() const { return private_index_; }
  std::size_t ftl_index() const { return ftl_index_; }
  // CPU seconds of the worker threads (so that other processes on the machine do not count).
  double cpu_stream() const { return cpu_stream_; }
  double cpu_learner() const { return cpu_learner_; }
  double cpu_eval() const { return cpu_eval_; }
  double cpu_projections() const { return cpu_projections_; }  // P (--nonnegative); 0 otherwise

 private:
  static constexpr std::uint64_t kClosed = std::uint64_t{1} << 63;  // "no more" flag of a counter

  void build_private(Eigen::Index d, const ReplaySettings& s, std::uint64_t steps, const pb::ReplayCheckpoint* from);
  bool wait_until(std::atomic<std::uint64_t>& counter, std::uint64_t target);
  Eigen::VectorXd& exact_sum_slot(std::uint64_t b) { return exact_sums_[b % slots_.sums]; }
  static void signal(std::atomic<std::uint64_t>& counter, std::uint64_t value);
  void fail();
  void join();
  void restore(const pb::ReplayCheckpoint& from);
  void worker(bool (Pipeline::*step)(std::uint64_t), std::exception_ptr& error, double& cpu);
  bool stream_step(std::uint64_t b);
  void on_release(const stream::ContinualCovariance::Release& r);
  void copy_followed(const Eigen::MatrixXd& release, Eigen::MatrixXd& slot) const;
  double followed_noise_norm(const stream::ContinualCovariance::Release& r) const;
  bool follow(Eigen::MatrixXd& followed, double noise_norm, std::uint64_t step);
  bool learner_step(std::uint64_t b);
  bool projection_step(std::uint64_t);
  bool eval_step(std::uint64_t b);

  Eigen::Index d_;
  std::uint64_t block_;
  std::unique_ptr<eval::RegretMeter> meter_;
  std::unique_ptr<pca::FplOnlinePca> ftl_;
  std::optional<privacy::PrivacyAccountant> accountant_;  // before sum_, which points at it
  std::unique_ptr<stream::ContinualCovariance> sum_;
  std::unique_ptr<pca::FplOnlinePca> private_;
  std::unique_ptr<RowLearners> rows_;  // oja, power, gauss (E feeds them)
  std::vector<std::string> learners_;  // the --learner list (empty under --nonprivate)
  privacy::EpsDelta share_{1.0, 1e-6};  // each private learner's share of the target
  std::size_t main_index_ = 0;
  // --mechanism separable: the estimate on the releases' lower triangles (exactly symmetric releases,
  // so nothing is lost): d(d+1)/2 values a sum instead of d², and the checkpoint copies them as they are.
  std::optional<stream::StationaryEstimate<Eigen::VectorXd>> stationary_;
  Eigen::VectorXd packed_release_;  // S: the latest release, packed for the estimate
  // --nonnegative: what the learner follows is read by it first (doubly nonnegative, post-processing),
  // its full releases projected ahead by P and L
  std::optional<pca::DoublyNonnegativeReader> nonnegative_;
  std::unique_ptr<FullProjections> projections_;
  std::size_t private_index_ = 0, ftl_index_ = 0;
  PipelineSlots slots_;
  std::vector<Eigen::MatrixXd> ring_;  // block b in slot b % slots_.ring
  std::vector<Eigen::VectorXd> gains_;  // L → E: the private learner's gains on block b, in slot b % slots_.ring
  // S → L: release t in slot t % release_buffers_: in place, the stream's own buffer (its address
  // here); else a copy of what the learner follows (copy_followed).
  bool in_place_ = false;
  std::uint64_t release_buffers_ = 0;
  std::vector<const Eigen::MatrixXd*> release_view_;
  std::vector<Eigen::MatrixXd> release_copy_;
  std::vector<double> release_noise_;  // ‖E‖₂ of what each release slot holds (followed_noise_norm)
  std::vector<Eigen::VectorXd> exact_sums_;  // S → E: the stream's exact sum after block b (exact_sum_slot)
  std::uint64_t first_block_ = 0;  // 0, or the block a resumed run starts from
  std::uint64_t produced_ = 0;     // M's count of published blocks
  // Counters (with the kClosed flag): blocks published, releases copied, releases followed, private
  // gains ready, blocks done by S, L and E; rows the meter has seen (progress only).
  std::atomic<std::uint64_t> produced_signal_{0}, released_{0}, release_free_{0}, ready_{0};
  std::atomic<std::uint64_t> s_done_{0}, l_done_{0}, e_done_{0}, rows_done_{0};
  std::atomic<bool> failed_{false}, running_{true};
  std::exception_ptr s_error_, p_error_, l_error_, e_error_;
  double cpu_stream_ = 0, cpu_projections_ = 0, cpu_learner_ = 0, cpu_eval_ = 0;
  std::thread s_thread_, l_thread_, e_thread_, p_thread_;  // last: started once everything above is built
};

}  // namespace dpstream::tools::replay
