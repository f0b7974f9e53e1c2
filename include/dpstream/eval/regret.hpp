// RegretMeter: the regret of online PCA learners on one stream (Dwork, Talwar, Thakurta &
// Zhang, "Analyze Gauss", STOC 2014, §4).
//
//   gain_i   = Σ_t ‖V̂_{i,t}ᵀ a_t‖²       V̂_{i,t}: learner i's subspace BEFORE it saw a_t
//   OPT      = max_{rank-k P} Σ_t ‖P a_t‖² = Σ of the k largest eigenvalues of C_m = Σ_t a_t a_tᵀ
//   regret_i = OPT − gain_i
//
// Several learners are scored on the same rows (e.g. private FPL and non-private follow-the-leader),
// so one exact C serves them all. The order is the protocol: score(i, rows, V̂_i) for every learner,
// then observe(rows); observe refuses rows a learner has not been scored on (and score refuses rows
// beyond them), so no row is lost or counted twice.
//
// Evaluation only: the meter holds the exact Σ a aᵀ — raw data, as sensitive as the rows. Nothing it
// computes is private; it measures private learners, it is not one.
//
// The curve: each time observe() reaches or crosses a multiple of sample_every rows (and at finish())
// a sample {rows, OPT_t, gain_i(t)} is taken at the end of that block, so
// regret can be plotted along the stream. OPT_t there is the sum of leader()'s values: a warm refresh
// on the exact C_t (subspace.hpp, captured variance certified within kLeaderTolerance = 1e-5
// relative; exact C moves little between blocks, so this is cheap); the final OPT is a full
// eigendecomposition.
//
// The leader: leader() is the top k of C_t itself, which is exactly what a non-private
// follow-the-leader follows after each block. Asking the meter for it (FplOnlinePca::follow_solved)
// instead of solving C_t a second time makes the curve's OPT_t and the baseline one refresh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/pca/subspace.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace dpstream::proto {
class RegretMeter;
}  // namespace dpstream::proto

namespace dpstream::eval {

struct RegretSample {
  std::uint64_t rows = 0;
  double opt = 0;             // OPT of the first `rows` rows
  std::vector<double> gains;  // cumulative gain of each learner over those rows
};

// Certificate of leader() and of the curve's OPT_t: OPT_t − Σ values ≤ 1e-5·Σ values (subspace.hpp's
// variance_tolerance). Why 1e-5: the lowest at which the refresh's block products may run in single
// precision (RefreshOptions::single_precision), half the cost of double; on the curve it is 0.001
// points of regret/OPT at most, a hundredth of the smallest regret it plots (follow-the-leader's,
// ~0.2% of OPT on Fashion-MNIST). With a gap below λ_k the error is quadratic in the residual and far
// smaller (tests/test_regret.cpp measures it).
inline constexpr double kLeaderTolerance = 1e-5;

class RegretMeter {
 public:
  // InvalidParameter for dimension < 1, k out of [1, dimension] or no learner names (names must be
  // distinct and non-empty). sample_every = 0: no curve, only the final figures.
  RegretMeter(Eigen::Index dimension, Eigen::Index k, std::vector<std::string> learners,
              std::uint64_t sample_every = 0);

  // Scores learner `learner` on the next rows (one per matrix row) with its current basis (d × k,
  // orthonormal: the caller's learner guarantees it). InvalidParameter for a bad index or shape;
  // std::logic_error if this would score rows the meter has already observed.
  void score(std::size_t learner, const Eigen::Ref<const Eigen::MatrixXd>& rows,
             const Eigen::Ref<const Eigen::MatrixXd>& basis);
  // The same with per-row gains the learner computed itself (FplOnlinePca::gains).
  void add_gains(std::size_t learner, const Eigen::Ref<const Eigen::VectorXd>& gains);
  // Adds the rows to the hindsight sum. std::logic_error naming the learner unless every learner has
  // been scored on exactly these rows; InvalidParameter for a wrong length or a non-finite entry.
  void observe(const Eigen::Ref<const Eigen::MatrixXd>& rows);
  // The same when the caller already holds the exact sum: `packed_sum` is Σ a aᵀ of every row
  // observed so far and these rows, packed (stream::CovarianceAccumulator::pack) — the replay's
  // stream computes it for its releases, and the meter takes it instead of adding these rows' Gram
  // a second time (a quarter of the evaluation's time a block at d = 2048). Checked, before anything
  // changes: its size, and that its diagonal is the meter's plus these rows' squares (within 1e-10
  // relative, where summing a block's squares in another order moves it by ~1e-14), which catches
  // a sum of other rows or of another block (not a sum wrong off the diagonal only: the check is
  // O(d) per row, the sum itself O(d²)); InvalidParameter naming the first coordinate that does
  // not fit.
  void observe(const Eigen::Ref<const Eigen::MatrixXd>& rows, const Eigen::Ref<const Eigen::VectorXd>& packed_sum);
  // The same with the exact sum held by an accumulator (an unthreaded caller's stream, which summed
  // these rows already: session::OnlinePcaSession::ingest): its upper triangle is copied, not packed
  // and unpacked. Checked as above, and that it holds exactly the meter's rows and these.
  void observe(const Eigen::Ref<const Eigen::MatrixXd>& rows, const stream::CovarianceAccumulator& sum);
  // Takes the last curve sample (if the curve is on and the last rows were not sampled) and fixes
  // OPT by a full eigendecomposition. Further observe() calls reopen the stream.
  void finish();

  std::uint64_t rows() const noexcept { return exact_.rows(); }
  Eigen::Index dimension() const noexcept { return exact_.dimension(); }
  Eigen::Index k() const noexcept { return k_; }
  const std::vector<std::string>& learners() const noexcept { return names_; }
  // Index of a learner by name; InvalidParameter if unknown.
  std::size_t learner(const std::string& name) const;

  // OPT of the rows observed so far (a full eigendecomposition, cached until the next observe()).
  double opt() const;
  double gain(std::size_t learner) const;
  double regret(std::size_t learner) const { return opt() - gain(learner); }
  // regret / OPT (0 when OPT = 0).
  double regret_over_opt(std::size_t learner) const;
  const std::vector<RegretSample>& curve() const noexcept { return curve_; }
  // The algebraic top k of the exact C_t of the rows observed so far (evaluation only: raw data),
  // certified within kLeaderTolerance: the meter's warm-started tracker, refreshed on the first call
  // after an observe() and cached until the next one (the curve's samples call it too). Valid until
  // the next observe(). std::logic_error before any row.
  const pca::TopEigen& leader();
  // The exact Σ a aᵀ of the rows observed so far (evaluation only: raw data). Built once per
  // observe() into a buffer the meter keeps (valid until the next observe()); a non-private
  // follow-the-leader may follow it instead of keeping a second copy of the same sum.
  const Eigen::MatrixXd& hindsight_covariance() const;

  // Checkpoints (dpstream-replay --checkpoint): the meter's whole state, so that a restored meter
  // continues bit-identically — including the OPT tracker of the curve, whose warm starts shape the
  // later samples. It holds the exact Σ a aᵀ: raw data, as sensitive as the rows.
  struct State {
    std::uint64_t rows = 0;           // rows observed
    Eigen::VectorXd exact_sum;        // their Σ a aᵀ, packed (stream::CovarianceAccumulator::pack)
    std::vector<double> gains;        // per learner
    std::vector<std::uint64_t> scored;  // rows each learner has been scored on
    std::vector<RegretSample> curve;
    pca::SubspaceTracker::State opt_tracker;  // leader()'s tracker
    std::uint64_t leader_rows = 0;            // rows its current() is the leader of (0: none)

    // Its checkpoint message (lib/proto/learner_states.proto; the pattern: base/message_seal.hpp):
    // load throws CorruptInput naming `field` for a matrix whose values do not fit its shape;
    // restore() checks the rest.
    void save(proto::RegretMeter& out) const;
    static State load(const proto::RegretMeter& in, const std::string& field);
  };
  State state() const;
  // Onto a meter built with the same dimension, k, learners and sample_every. InvalidParameter
  // naming what does not fit (sizes, a learner scored on fewer rows than observed).
  void restore(const State& state);
  // The meter's save / load pair: state() and restore() through State's.
  void save(proto::RegretMeter& out) const { state().save(out); }
  void load(const proto::RegretMeter& in, const std::string& field) { restore(State::load(in, field)); }

 private:
  void check_learner(std::size_t learner, const char* where) const;
  void check_observe(const Eigen::Ref<const Eigen::MatrixXd>& rows) const;
  void check_sum_diagonal(const Eigen::Ref<const Eigen::MatrixXd>& rows, const Eigen::VectorXd& given) const;
  void after_observe(std::uint64_t before);
  void take_sample();

  Eigen::Index k_;
  std::vector<std::string> names_;
  std::uint64_t sample_every_;
  stream::CovarianceAccumulator exact_;
  std::vector<double> gains_;
  std::vector<std::uint64_t> scored_;
  std::vector<RegretSample> curve_;
  pca::SubspaceTracker opt_tracker_;
  std::uint64_t leader_rows_ = 0;  // rows opt_tracker_.current() is the leader of (0: none yet)
  mutable Eigen::MatrixXd covariance_cache_;
  mutable std::uint64_t covariance_cache_rows_ = UINT64_MAX;
  mutable double opt_cache_ = 0;
  mutable std::uint64_t opt_cache_rows_ = UINT64_MAX;
};

}  // namespace dpstream::eval
