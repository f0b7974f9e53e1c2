// ContinualSum: continual release of a private prefix sum, row at a time (Analyze Gauss §4).
//
//   rows ──update()──▶ exact sum (accumulators.hpp) ──every B rows──▶ release: S_t + N_t ──▶ subscribers
//                                                       ▲
//       noise strategy (tree_noise.hpp, factorization_noise.hpp): N_t from noise drawn once
//
// A "step" is a block of B rows (B = 1: release after every row). The tree is built over steps, so
// blocks give fewer levels and less noise per release. Rows of a partial block wait for the block to
// complete, or for flush(), which closes it as a (shorter) step.
//
// Privacy contract
//  * Neighbouring relation (Options::relation): streams of the same length that differ in one row —
//    zero_out_row (default): the row replaced by zeros, its slot kept; replace_row: the slot's row
//    replaced by another — with every row ‖a‖₂ ≤ L. A removal that shifts every later row into
//    other steps is NOT covered (it changes every later release); add_remove_row is refused
//    (InvalidParameter) for that reason.
//  * Privacy unit (Options::participation, participation.hpp): a row by default; or a unit whose rows
//    lie in at most k steps, ≥ b apart, one a step — the neighbours then differ in her rows, the
//    noise is calibrated to her sensitivity and mu() and the charge are hers.
//  * Sensitivity of one step's sum: VectorAccumulator L (replace 2L); CovarianceAccumulator L²
//    (replace √2·L²) on the packed upper triangle. Every row is checked against L here (dimension and
//    norm, NaN included) and refused with InvalidRow: this is the contract RowGuard establishes
//    (clip or reject), re-checked because privacy rests on it. A block summed by workers
//    (add_aggregate) cannot be re-checked row by row: its rows passed a RowGuard with the same L on
//    the worker; the part's counts and bound, and that its sum is one such rows can make, are
//    checked here (block_aggregate.hpp: the privacy is unchanged — one guard, one bound per row,
//    noise added once per release, here — and the workers must be trusted).
//  * Noise and calibration: the strategy's. Trees (tree_noise.hpp): plain or Honaker, fixed horizon T
//    releases or unbounded (doubling epochs); σ_node from privacy::tree_node_sigma (tight default).
//    Factorizations (factorization_noise.hpp), fixed horizon only: square-root Toeplitz (the exact
//    reference, memory O(p·T)) or a BLT (O(p·buffers)), one Gaussian mechanism with the strategy's
//    sensitivity; the separable strategy (separable_noise.hpp, O(p)) is built for the stationary
//    estimate (stationary_estimate.hpp), its own prefixes being far noisier than a BLT's.
//    Covariance noise shape: paper_symmetric (i.i.d. upper triangle, mirrored) or goe (off-diagonal
//    variance halved; proof in privacy/symmetric_gaussian.hpp, it applies node by node).
//  * Guarantee and accounting: the whole stream of releases is (ε, δ)-DP for the target (μ-GDP with
//    μ = mu()). The budget's accountant (if accounted) is charged once at construction, before any row is seen
//    (BudgetExhausted then, and nothing is built). A fixed horizon refuses rows past T·B with
//    BudgetExhausted (the calibration covers T releases only); an unbounded stream never does.
//  * Released values are snapped to a grid of spacing 2^⌈log₂(σ_t·2⁻³⁰)⌉ (privacy::snap_granularity,
//    kSnapBits = 30), σ_t the release's noise std (the diagonal's for a covariance: goe's off-diagonal
//    entries, std σ_t/√2, share that grid).
//  * Noise source: the secure one (libsodium ChaCha20) unless Options::privacy.noise.seed is set, which selects
//    the seeded xoshiro source: reproducible, NOT secure (tests, reproducible replay).
//
// Checkpoints (save / load; base::save_file writes one as a file) hold the exact partial sums, so
// they are as sensitive as the data: files are written with mode 0600, atomically
// (base/atomic_file.hpp: a fresh temporary file, fsync, rename; each write removes its own temporary
// only). They
// also hold every node noise a later release needs, so a restored stream never re-draws released
// noise (re-drawing would let an observer average it away), the noise source's state, and the
// attached accountant's ledger. The source's state matters for the secure source too: a release the
// crashed process published after its last checkpoint is then made again with the same noise, not a
// second draw (the privacy audit found this; tests/audit). The secure key is ratcheted (BLAKE2b)
// after every release, so a stolen checkpoint cannot regenerate the noise of earlier releases; a
// seeded restore continues bit-identically. Restoring with other options, or from corrupt or
// truncated bytes (CRC-32 seal), throws CorruptInput naming the field.
//
// A restored stream re-makes the releases published after its checkpoint with the same noise: fed
// other rows than before the crash, two published versions of one release would differ by exactly
// the rows' difference. Only a release journal (ContinualSumOptions::journal, base/release_journal.hpp)
// rules that out: it records each release durably before publishing it and refuses a re-release
// with other values. What a user must keep, together until the stream ends: the checkpoint and its
// journal. WITHOUT a journal the library cannot tell: after a restore, feeding exactly the rows fed
// before the crash, in order, is then the caller's duty (dpstream-replay keeps a journal always).
// The accountant given to a restore takes the checkpoint's ledger by PrivacyAccountant::restore,
// which never lowers its spend.
//
// Cost per row: O(d) check + the accumulator's update (covariance: rank-k updates of buffered rows);
// per release: the strategy's O(p) amortized noise (p = d or d(d+1)/2) plus O(p) to assemble the
// release. Memory: O(p·log T) for trees, O(p·buffers) for a BLT, O(p·T) for square-root Toeplitz.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/release_journal.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/privacy_spec.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/accumulators.hpp"
#include "dpstream/stream/block_aggregate.hpp"
#include "dpstream/stream/blt.hpp"
#include "dpstream/stream/continual_noise.hpp"
#include "dpstream/stream/tree_noise.hpp"

namespace dpstream::proto {
class ContinualSumCheckpoint;
}

namespace dpstream::stream {

// Which noise strategy a continual sum runs (names as in checkpoints and on command lines).
enum class NoiseStrategy { plain_tree, honaker_tree, sqrt_toeplitz, blt, separable };
// "plain", "honaker", "sqrt_toeplitz", "blt", "separable"
const char* to_string(NoiseStrategy strategy) noexcept;
// Also accepts "tree" for plain_tree and "sqrt" for sqrt_toeplitz; InvalidParameter listing the names.
NoiseStrategy parse_noise_strategy(const std::string& name);
// The factorizations are built for a fixed horizon (horizon = 0, unbounded, is for trees only).
constexpr bool needs_fixed_horizon(NoiseStrategy strategy) noexcept {
  return strategy == NoiseStrategy::sqrt_toeplitz || strategy == NoiseStrategy::blt || strategy == NoiseStrategy::separable;
}

struct ContinualSumOptions {
  std::uint64_t horizon = 0;      // releases the stream is calibrated for; 0 = unbounded (trees only)
  std::uint64_t block_rows = 1;   // B: rows per step, ≥ 1
  NoiseStrategy strategy = NoiseStrategy::plain_tree;
  // blt only: the strategy C; unset = optimize_blt for the horizon and blt_error (blt_optimizer.hpp).
  std::optional<BufferedToeplitz> blt;
  BltError blt_error = BltError::max;
  // Target, calibration, relation (a stream's: zero_out_row, the default, or replace_row), L (every
  // row ‖a‖₂ ≤ L) and the noise's seed (set: seeded source, reproducible, NOT secure).
  privacy::PrivacySpec privacy{.relation = privacy::Neighbours::zero_out_row};
  // The privacy unit (participation.hpp). Default {1, 1}: a row. {k, b}: neighbouring streams differ
  // in one unit's rows, which lie in at most k steps (blocks), two of them at least b steps apart,
  // at most one row of hers a step (contribution bounding upstream must ensure all three; this
  // stream checks each row's norm only). The noise is calibrated, and the accountant charged, for
  // the unit: mu() is the unit-level μ.
  Participation participation;
  privacy::SymmetricNoiseShape shape = privacy::SymmetricNoiseShape::paper_symmetric;  // covariance only
  Eigen::Index batch_rows = 0;    // covariance: rows buffered per rank-k update (0: 128); speed only
  // Releases whose value stays valid: release t is written into buffer t mod kept_releases, so it is
  // not overwritten before release t + kept_releases (memory: that many values, allocated and
  // written at construction). For a consumer that reads release t on another thread while the
  // stream goes on (dpstream/session/online_pca_session.hpp), in place of a copy. 1 to 64; speed only.
  std::uint32_t kept_releases = 1;
  // The release journal's path (base/release_journal.hpp), "" for none. With one, every release is
  // recorded durably before it is published, and a restored stream refuses (InvalidParameter,
  // nothing published, the stream unusable after) a release the journal holds with other values:
  // the rows fed after a restore must be those fed before the crash. A new stream refuses an
  // existing file; a checkpoint of a stream with a journal is restored only with it (and vice
  // versa). Its path may change between runs; the file, kept beside the checkpoint, may not.
  std::string journal;
};

template <class Accumulator>
class ContinualSum {
 public:
  using Value = typename Accumulator::Value;

  // What subscribers receive. noisy_prefix is valid during the callback and until the next release
  // (until kept_releases more, ContinualSumOptions::kept_releases).
  struct Release {
    std::uint64_t step;    // 1-based release number
    std::uint64_t rows;    // rows summed in this release
    const Value& noisy_prefix;
    double noise_variance;               // per entry (diagonal entries for a covariance)
    double off_diagonal_noise_variance;  // covariance off-diagonal entries (= noise_variance unless goe)
  };
  using Subscriber = std::function<void(const Release&)>;

  // Validates the options (InvalidParameter naming the bad one), calibrates and charges `budget` (unless
  // unaccounted) for the whole stream. The accountant must outlive this object.
  ContinualSum(Eigen::Index dimension, const ContinualSumOptions& options,
               const privacy::Budget& budget);

  void subscribe(Subscriber subscriber);

  // One row (its index in the stream is rows() for messages). Releases when the block completes.
  void update(const Eigen::Ref<const Eigen::VectorXd>& row);
  // Several rows, one per matrix row. All are checked before any is ingested (a bad row leaves the
  // stream unchanged); the block may span release boundaries.
  void update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows);
  // The same, with `checked` called once every row has passed the checks (InvalidRow: a width, a
  // norm over the bound, NaN; BudgetExhausted: past the horizon) and before any is taken: for a
  // caller that must act on the rows elsewhere first (session::OnlinePcaSession::ingest scores
  // them), so that a refused block reaches neither and each row is checked once. If `checked`
  // throws, nothing was taken.
  void update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows, const std::function<void()>& checked);
  // A part of the current block summed elsewhere (distributed ingestion; block_aggregate.hpp says
  // why the privacy is unchanged). It must start at rows() and end inside the current block, and
  // come from a guard with this stream's bound; everything is checked before anything changes
  // (InvalidParameter naming what does not fit, BudgetExhausted past the horizon). Releases when the
  // block completes, as update_block would.
  void add_aggregate(const BlockAggregate& part);
  // Closes a partial block as a step and releases it; no-op when no row is pending.
  void flush();

  bool has_release() const noexcept { return steps_ > 0; }
  // The latest release (identical on every call; nothing is re-drawn). Throws before the first.
  const Value& noisy_prefix() const;
  Release latest() const;

  std::uint64_t steps() const noexcept { return steps_; }
  std::uint64_t rows() const noexcept { return exact_.rows(); }
  // The exact sum of every row ingested: raw data, as sensitive as the rows, never to be released.
  // For evaluation that needs the same sum (a regret meter's hindsight covariance), so that it is
  // not computed twice; not thread-safe against update().
  const Accumulator& exact_sum() const noexcept { return exact_; }
  std::uint64_t rows_pending() const noexcept { return rows() - rows_released_; }
  Eigen::Index dimension() const noexcept { return dimension_; }
  const ContinualSumOptions& options() const noexcept { return options_; }
  const ContinualNoise& noise() const noexcept { return *noise_; }
  double l2_sensitivity() const noexcept { return l2_sensitivity_; }
  // Per-entry noise variance of release t (closed form; diagonal entries for a covariance).
  double release_variance(std::uint64_t t) const { return noise_->release_variance(t); }
  // Privacy of the whole stream: μ-GDP for the privacy unit of options().participation (a row by
  // default), and the (ε, δ) target it was calibrated to.
  double mu() const { return noise_->unit_mu(options_.participation); }
  const privacy::EpsDelta& guarantee() const noexcept { return options_.privacy.target; }
  bool is_secure() const noexcept { return source_->is_secure(); }
  // Where the stream's charge went, or why it was not accounted (for summaries).
  const privacy::Budget& budget() const noexcept { return budget_; }

  // Checkpoints (see the header comment; the pattern: base/message_seal.hpp). load takes the
  // dimension, options and budget the stream was built with. The budget's accountant (if accounted)
  // takes the checkpoint's ledger through the restore rules (restore_rules.hpp: its spend never goes
  // down; another budget: CorruptInput; over the budget: BudgetExhausted), last, after every other
  // check; a checkpoint saved without an accountant charges it for the stream, as construction does.
  static constexpr base::SealedKind kSealed{"continual sum checkpoint", 1};
  void save(proto::ContinualSumCheckpoint& out) const;
  static ContinualSum load(const proto::ContinualSumCheckpoint& in, Eigen::Index dimension,
                           const ContinualSumOptions& options, const privacy::Budget& budget);
  std::string save() const;
  static ContinualSum load(const std::string& bytes, Eigen::Index dimension, const ContinualSumOptions& options,
                           const privacy::Budget& budget);

 private:
  struct NoCharge {};
  ContinualSum(Eigen::Index dimension, const ContinualSumOptions& options,
               const privacy::Budget& budget, NoCharge);
  void charge_stream();
  void check_row(const Eigen::Ref<const Eigen::VectorXd>& row, std::uint64_t index) const;
  // update_block's checks alone, changing nothing.
  void check_block(const Eigen::Ref<const Eigen::MatrixXd>& rows) const;
  void check_capacity(std::uint64_t more_rows) const;
  void release_step();
  void record_release();
  double off_diagonal_scale() const noexcept;

  Eigen::Index dimension_;
  ContinualSumOptions options_;
  double l2_sensitivity_;
  privacy::Budget budget_;
  std::unique_ptr<privacy::NoiseSource> source_;
  std::unique_ptr<ContinualNoise> noise_;
  Accumulator exact_;
  Eigen::VectorXd release_noise_;  // N_t of the latest release, packed coordinates
  std::vector<Value> released_;  // release t in released_[t mod kept_releases]
  std::uint64_t steps_ = 0;
  std::uint64_t rows_released_ = 0;  // rows summed in the latest release
  std::vector<Subscriber> subscribers_;
  base::StreamJournal journal_;  // none unless options' journal names one
};

extern template class ContinualSum<VectorAccumulator>;
extern template class ContinualSum<CovarianceAccumulator>;

using ContinualVectorSum = ContinualSum<VectorAccumulator>;
using ContinualCovariance = ContinualSum<CovarianceAccumulator>;

}  // namespace dpstream::stream
