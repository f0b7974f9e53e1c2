// StreamingPrivateOja: private minibatch Oja in one pass over a stream, O(d·k) state, its top-k
// estimate published after every minibatch. The method of DP-PCA (Liu, Kong, Jain & Oh, "DP-PCA:
// Statistically Optimal and Differentially Private PCA", NeurIPS 2022): minibatch Oja where each
// row is used once, a private mean of the clipped per-row updates per minibatch, and a private
// estimate of their scale to clip at.
//
//   row x ──update()──▶ ‖x‖ ≤ L? ──▶ g = x·(xᵀW) ──▶ S += clip_C(g), h[bin(‖g‖)] += 1
//                                 every B_t rows ──▶ S̃ = S + N(0, σ_g² I), h̃ = h + N(0, σ_h² I)
//                                  W ← qr(S̃) (or qr(W + η_t·S̃/B)) ──▶ subscribers;  C ← γ-quantile of h̃
//
// Algorithm (W is d × k, orthonormal; t = 1, 2, … the minibatch; B its rows):
//  * W_0: the Q of a d × k standard Gaussian matrix (data-independent; DP-PCA starts at a uniformly
//    random unit vector).
//  * Per row: g = x (xᵀW_{t−1}) — the row's Oja update, d × k of rank one, ‖g‖_F = ‖x‖·‖Wᵀx‖ ≤ L²
//    — clipped to ‖g‖_F ≤ C_t, and added to the minibatch sum S at once: the clip scale of a minibatch
//    is fixed before its first row, so no row is kept (O(d·k) memory whatever B is; rows of a sparse
//    stream cost O(nnz·k)).
//  * Per minibatch: S̃ = S + Z, Z ~ N(0, σ_g² I_{d×k}) (σ_g = Δ_g·σ₁/√(1 − f), below), snapped;
//    then the step (options.step_rule):
//      power (default): W_t = qr(S̃_t) — Oja's step with η = ∞, the noisy power step;
//      oja: W_t = qr(W_{t−1} + η_t·S̃/B), η_t = α/(C_t·(t₀ + t)) — DP-PCA's step, the 1/t schedule
//      of Jain, Jin, Kakade, Netrapalli & Sidford (COLT 2016) with the public bound C_t on a row's
//      update (the minibatch's clip; L² for centred updates, whose c + clip_r(g − c) only L² bounds)
//      in place of the unknown gap, so the step is the share α/(t₀ + t) of a full-size update
//      whatever the clip (with C_t ≪ L², α/L² would shrink Oja's steps by C_t/L² and stall the
//      pass); α (learning_rate) and t₀ (rate_offset) are tuning constants.
//    qr is the retraction (k = 1: normalisation). Top k: block Oja (the k columns updated together
//    and re-orthonormalised), not deflation (which Düngler & Sanyal, "An iterative algorithm for
//    differentially private k-PCA with adaptive noise", NeurIPS 2025, appear to use): deflation
//    would need k passes (a stream is read once) or k budget shares of one pass. The per-row update
//    is clipped in Frobenius norm, so the sensitivity below is independent of k.
//  * Minibatch sizes (streaming_oja_plan.hpp, which derives them): geometric by default, B_t =
//    B₁·2^{t−1} from B₁ = ⌈σ₁·√(d·k)⌉, or ending exactly at a declared horizon; the last minibatch
//    then holds half the rows, so the last step's noise floor is twice Analyze Gauss's at any n,
//    where fixed minibatches of n/T rows leave T times it. With a horizon and power steps, once the
//    releases say the iterate has settled (take_rest_next), the next minibatch is every row left
//    to the horizon (final_step()): its floor is Analyze Gauss's × n/(n − n_t). Sizes depend on
//    public numbers, positions and earlier releases only.
//  * Clip scale (scale_share f > 0; by default f = derived_scale_share(d, γ), streaming_oja_plan.hpp
//    says why; f = 0 turns it off): C_1 = initial_clip (default L²). Each minibatch also
//    counts its rows' update norms in kScaleBins geometric bins — bin i holds L²·2^{−i−1} < ‖g‖ ≤
//    L²·2^{−i} (the last bin everything smaller; rows with g = 0 are not counted) — and releases the
//    histogram with Gaussian noise; C_{t+1} = L²·2^{−i} for the largest i such that the noisy count
//    of rows above each edge down to it stays within (1 − γ)·B (quantile_edge): the γ-quantile of
//    ‖g‖ over the B slots rounded up to a power of 2, counted from the top so that the count compared
//    carries the noise of the few bins above the edge, not of the ~47 mostly empty ones below. This is DP-PCA's private range estimate (a private histogram over geometric bins) made a
//    Gaussian release, so the whole pass stays one Gaussian mechanism (below), and taken from the
//    previous minibatch rather than half of the current one, so no row is buffered. With f = 0
//    nothing is estimated and C = initial_clip throughout; the default C = L² then never clips. The
//    scale matters at large d: a random W_0 has |xᵀW| ≈ ‖x‖/√d, so the updates start √d below L².
//    DP-PCA's mean estimator further adapts its noise to the minibatch's spread; by default the
//    noise is the plain Gaussian one at the clip scale (that is where this falls short of the
//    paper's rate when ‖g‖ varies widely within a minibatch).
//  * Centred updates (centred_updates, default off; needs scale_share > 0): DP-PCA's adaptive mean
//    estimate in one pass (streaming_oja_centre.hpp derives it). Minibatch t's centre c_t (d × p) is
//    post-processing of the previous step's release (c_1 = 0, and c = 0 while the releases show no
//    signal above their noise: the gate); a slot holding x ≠ 0 contributes
//    c_t + clip_r(g − c_t), a zero slot c_t; the histogram bins ‖g − c_t‖ (zero slots in no bin) and
//    its quantile is the next radius r = C_{t+1}. Noise scales with r: σ_g = Δ·σ₁/√(1 − f), Δ = r
//    (zero-out) or 2r (replace). Off by default: it gains only where the rows' spread off the top
//    directions is small, and at the median clip it loses where the pass runs long (only the residual
//    is clipped, and it holds what moves the iterate; docs/streaming-oja.md, "Centred updates").
//
// Privacy contract
//  * Neighbouring relation (options.relation): streams of the same length that differ in one row —
//    zero_out_row (default): one slot holds a row in one stream and a zero row in the other, as in
//    ContinualSum (continual_sum.hpp); replace_row: the slot's row differs; add_remove_row is refused
//    (InvalidParameter). Positions are public: minibatch t is the slots b_{t−1} … b_t − 1 of the
//    stream, its boundary b_t fixed before its first row from public numbers and earlier releases;
//    a removal that shifted every later row into other minibatches would touch all of them and is
//    NOT covered. Every row ‖x‖₂ ≤ L, checked on entry (InvalidRow
//    naming the row, before anything is added or drawn; use RowGuard to clip or scale first).
//  * Sensitivity, per minibatch, of (S, h) — the clipped sum and the histogram:
//      S: ‖clip_C(g)‖_F ≤ C, so Δ_g = C add/remove, 2C replace (‖g − g'‖ ≤ ‖g‖ + ‖g'‖).
//         Centred: S = B·c + Σ clip_r(g_i − c) with B and c public, so Δ_g = r zero-out (x against
//         the zero slot's c: ‖clip_r(g − c)‖ ≤ r), 2r replace; C below stands for r.
//      h: a row is in one bin or none (an empty slot is in none): Δ_h = 1 add/remove; replace moves
//         one count from a bin to another: Δ_h = √2. The same for the bins of ‖g − c‖.
//    C = min(C_t, L²) (and c_t) are fixed before the minibatch (post-processing of earlier releases).
//  * Noise: σ₁ = the Gaussian σ for sensitivity 1 and the target (tight: analytic_gaussian_sigma;
//    paper: paper_gaussian_sigma). Then σ_g = Δ_g·σ₁/√(1 − f) and σ_h = Δ_h·σ₁/√f, so the minibatch's
//    pair of releases is one Gaussian mechanism with (Δ_g/σ_g)² + (Δ_h/σ_h)² = 1/σ₁²: μ = 1/σ₁,
//    exactly the target. Each release is snapped to the grid snap_granularity(its σ) (snap.hpp).
//  * Why the whole pass is one (ε, δ): a row lies in exactly one minibatch. The pass is an adaptive
//    sequence of mechanisms M_t(minibatch t; W_{t−1}, C_t, b_t), every argument after the first a
//    function of earlier releases and public numbers. For neighbours differing in slot i, let t* be
//    the step whose minibatch holds slot i — a function of the releases before it, since b_t is
//    fixed before minibatch t's first row. Releases before t* do not read slot i: same distribution
//    in both streams. Given them, M_{t*} is one Gaussian mechanism of sensitivity ≤ Δ at noise σ
//    (below: μ = 1/σ₁). Releases after t* are, given the earlier ones, the same kernels of rows other
//    than slot i in both streams. So the privacy loss of the whole transcript is that of M_{t*} given
//    its history, whichever step t* turns out to be: μ-GDP with μ = 1/σ₁ for any number of rows —
//    no horizon (parallel composition under adaptivity; the general form, adaptively chosen μ_t with
//    Σμ_t² ≤ μ² on every path, is Smith & Thakurta, "Fully adaptive composition for Gaussian
//    differential privacy", 2022). W_t, C_t, b_t and the published estimates are post-processing of
//    (S̃_s, h̃_s)_{s≤t}.
//  * Accounting: one charge at construction, before any row is seen: charge_gaussian(label, 1, σ₁,
//    target) (BudgetExhausted then, and nothing is built).
//  * Noise source: secure (libsodium) unless options.seed is set (seeded: reproducible, NOT secure).
//    The secure source is ratcheted after every minibatch, as ContinualSum's.
//
// Checkpoints (save / load, lib/proto/streaming_oja.proto, sealed: base/message_seal.hpp) hold W, C, the
// step count, the rest's decision (final step, its rows, the last step's clip), the centre (centred
// updates; a checkpoint without the option restores only with it off, a mismatch refused naming
// centred_updates), the partial
// minibatch's exact sum and histogram (raw data: as sensitive as the rows)
// and the noise source's state, so a restored estimator continues bit-identically and a step
// published after the last checkpoint is made again with the same noise, never a fresh draw (which
// would let an observer average two draws of one release). Other options: CorruptInput. Fed other
// rows after a restore than before the crash, a re-made step's two published versions would differ
// by exactly those rows' clipped updates (the noise cancels). options.journal (base/release_journal.hpp,
// as ContinualSum's) rules that out: each step's releases (S̃_t, h̃_t) are recorded durably before any
// subscriber sees them, and a restored estimator refuses a step the journal holds with other values
// (InvalidParameter, nothing published, the estimator unusable after). Keep the checkpoint and its
// journal together; without a journal, feeding the same rows after a restore is the caller's duty.
// load takes no accountant: the pass was charged once, when first built.
//
// Cost per row: O(d·k) dense, O(nnz·k) sparse (centred: O(d·k) either way, g − c is dense); per
// minibatch O(d·k) noise and O(d·k²) for the QR.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/release_journal.hpp"
#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/pca/streaming_oja_plan.hpp"
#include "dpstream/privacy/privacy_spec.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::proto {
class StreamingOjaCheckpoint;
}

namespace dpstream::pca {

struct StreamingPrivateOjaOptions {
  Eigen::Index k = 1;               // 1 ≤ k ≤ dimension
  // The minibatch plan (streaming_oja_plan.hpp derives the defaults): the first minibatch holds
  // batch_rows rows (0: derived, ⌈σ₁·√(d·k)⌉), each next one batch_growth times more (1: all
  // batch_rows), ending exactly at `horizon` rows when one is declared (0: unknown).
  std::uint64_t batch_rows = 0;
  // Extra iterate columns: W holds p = min(d, k + oversampling); the published k are the top-k Ritz
  // directions of each step. A random start's overlap with the top-k eigenvectors, σ_min(V_kᵀW₀),
  // is ≈ (√p − √(k−1))/√d (Rudelson & Vershynin): ≈ 1/(2√k·√d) at p = k, often far less — the
  // seeds that never converge in one pass — and ≥ ~1/√d at p = k + 4. Free in privacy (‖g‖_F =
  // ‖x‖·‖Wᵀx‖ ≤ L² whatever p) and O(d·p) memory, O(nnz·p) per row.
  Eigen::Index oversampling = 4;
  double batch_growth = 2.0;        // r ≥ 1
  std::uint64_t horizon = 0;        // the declared number of rows; 0: unknown
  StepRule step_rule = StepRule::power;  // power: W_t = qr(S̃_t); oja: the 1/t step below
  // Target (for the whole pass), calibration, relation (a stream's: zero_out_row, the default, or
  // replace_row), L (every row ‖x‖₂ ≤ L, checked) and the noise's seed (set: seeded, reproducible,
  // NOT secure; unset: the secure source).
  privacy::PrivacySpec privacy{.relation = privacy::Neighbours::zero_out_row};
  double learning_rate = 8.0;       // α > 0: η_t = α/(C_t·(t₀ + t)) (step_rule oja only)
  double rate_offset = 1.0;         // t₀ ≥ 0 (step_rule oja only)
  double initial_clip = 0.0;        // C_1 in (0, L²]; 0 means L²
  // f ∈ [0, 1): the share of μ² spent on the scale histogram; 0: the fixed clip C = initial_clip.
  // Unset: derived_scale_share(d, clip_quantile) (streaming_oja_plan.hpp). Checkpoints hold the
  // resolved f, so one written with f = 0 (the default before the derived share) is restored with
  // options that set scale_share = 0 explicitly.
  std::optional<double> scale_share;
  // γ ∈ (0, 1): the quantile of ‖g‖ that C is set to; the median by default (streaming_oja_plan.hpp
  // says why). Checkpoints hold γ: one written with 0.9 (the default before) restores with options
  // that set clip_quantile = 0.9 (an unset scale_share is then derived from it, as when written).
  double clip_quantile = 0.5;
  // Clip each update around a centre from earlier releases, the radius the private quantile of
  // ‖g − c‖ (header; streaming_oja_centre.hpp). Same μ, same charge; needs scale_share > 0. Off: the
  // releases are bit for bit those without the option.
  bool centred_updates = false;
  std::string journal;  // the release journal's path, "" for none (header; as ContinualSumOptions::journal)
};

class StreamingPrivateOja {
 public:
  static constexpr Eigen::Index kScaleBins = 48;  // geometric bins of ‖g‖: L² down to L²·2^-47
  // What subscribers receive after each minibatch; the references are valid during the callback.
  struct Release {
    std::uint64_t step;          // 1, 2, …
    std::uint64_t rows;          // rows taken so far (the stream position)
    const Eigen::MatrixXd& basis;         // d × k orthonormal: the estimate (W_t's top-k Ritz directions)
    const Eigen::MatrixXd& noisy_sum;     // S̃_t, d × p (the mechanism's release; what an auditor sees)
    const Eigen::MatrixXd& previous;      // W_{t−1}, d × p, the iterate the rows' updates were taken at
    double clip;                 // C of this minibatch
    const Eigen::VectorXd& noisy_histogram;  // h̃_t (empty when scale_share = 0: nothing released)
    double step_size;            // η_t (+inf for a power step)
    const Eigen::MatrixXd& centre;  // c_t, d × p, the rows' updates were clipped around (empty: not centred)
  };
  using Subscriber = std::function<void(const Release&)>;

  // InvalidParameter naming the bad option; BudgetExhausted if `accountant` cannot cover the pass.
  StreamingPrivateOja(Eigen::Index dimension, const StreamingPrivateOjaOptions& options,
                      const privacy::Budget& budget);
  ~StreamingPrivateOja();
  StreamingPrivateOja(StreamingPrivateOja&&) noexcept;
  StreamingPrivateOja& operator=(StreamingPrivateOja&&) noexcept;

  void subscribe(Subscriber subscriber);
  // One row (InvalidRow for a wrong length, a non-finite entry or ‖x‖ > L, before it is taken).
  void update(const Eigen::Ref<const Eigen::VectorXd>& row);
  // Rows, one per matrix row: all are checked before any is taken.
  void update_block(const Eigen::Ref<const Eigen::MatrixXd>& rows);
  // A sparse row: (indices, values), indices < dimension and strictly increasing.
  void update_sparse(const Eigen::Ref<const Eigen::VectorXi>& indices,
                     const Eigen::Ref<const Eigen::VectorXd>& values);
  // Closes a partial minibatch as a step (its B is the rows it holds); no-op when none is pending.
  // A power step on a partial minibatch of fewer than half its planned rows would trade the last
  // step's estimate for a noisier one: then flush() takes no step and the rows stay pending (counted
  // by rows_pending(); a longer stream completes their minibatch).
  void flush();

  const Eigen::MatrixXd& basis() const noexcept { return basis_; }
  PrivateSubspace current() const;  // method "streaming-oja", no values
  std::uint64_t rows() const noexcept { return rows_; }
  std::uint64_t steps() const noexcept { return steps_; }
  std::uint64_t rows_pending() const noexcept { return pending_rows_; }
  double clip() const noexcept { return clip_; }
  double unit_sigma() const noexcept { return unit_sigma_; }  // σ₁
  double mu() const noexcept { return 1.0 / unit_sigma_; }    // the whole pass's GDP μ
  double gradient_sigma() const noexcept;                      // σ_g at the current C
  double histogram_sigma() const noexcept;                     // σ_h (+inf when f = 0)
  double scale_share() const noexcept { return *options_.scale_share; }  // f as resolved
  static Eigen::Index scale_bin(double update_norm, double l2) noexcept;  // bin of ‖g‖ > 0
  // The next clip from a step's noisy histogram h̃ of B rows (header: the γ-quantile's edge).
  static double quantile_edge(const Eigen::VectorXd& noisy_histogram, double quantile, double batch,
                              double l2) noexcept;
  // η_t of a minibatch at clip C (+inf: power steps; the header's oja rule).
  double step_size(std::uint64_t step, double clip) const noexcept;
  std::uint64_t first_batch() const noexcept { return first_batch_; }  // B₁ as resolved
  // Rows of minibatch `step`: the plan's, or, once the pass has settled (take_rest_next), the rest.
  std::uint64_t planned_rows(std::uint64_t step) const noexcept;
  // The step whose minibatch takes every row left to the horizon (0: none decided).
  std::uint64_t final_step() const noexcept { return final_step_; }
  Eigen::Index dimension() const noexcept { return dimension_; }
  const StreamingPrivateOjaOptions& options() const noexcept { return options_; }  // scale_share resolved
  bool is_secure() const noexcept { return source_->is_secure(); }

  // Checkpoints (header comment; the pattern: base/message_seal.hpp). load takes the dimension and
  // options the estimator was built with (a mismatch or corrupt bytes: CorruptInput naming the
  // field); it charges nothing (the pass was charged when first built).
  static constexpr base::SealedKind kSealed{"streaming Oja checkpoint", 1};
  void save(proto::StreamingOjaCheckpoint& out) const;
  static StreamingPrivateOja load(const proto::StreamingOjaCheckpoint& in, Eigen::Index dimension,
                                  const StreamingPrivateOjaOptions& options);
  std::string save() const;
  static StreamingPrivateOja load(const std::string& bytes, Eigen::Index dimension,
                                  const StreamingPrivateOjaOptions& options);

 private:
  struct NoCharge {};
  StreamingPrivateOja(Eigen::Index dimension, const StreamingPrivateOjaOptions& options, NoCharge);
  void check_dense(const Eigen::Ref<const Eigen::VectorXd>& row, std::uint64_t index) const;
  // Centred updates (streaming_oja_centre.cpp): the row's clip_r(g − c) and bin, then after_row().
  void add_centred(const Eigen::Ref<const Eigen::VectorXd>& row);
  void add_centred_sparse(const Eigen::Ref<const Eigen::VectorXi>& indices,
                          const Eigen::Ref<const Eigen::VectorXd>& values);
  double clip_factor(double update_norm) const noexcept;
  void after_row();
  void step();
  void record_step();
  std::string clip_label() const;
  void use_sparse_layout();
  Eigen::MatrixXd pending_sum() const;  // S, column-major (a copy)
  Eigen::MatrixXd published_basis(double batch, Eigen::VectorXd& ritz) const;
  void plan_rest(const Eigen::MatrixXd& published_before, const Eigen::VectorXd& ritz, double batch, double clip);
  double sigma_at(double clip) const noexcept;

  Eigen::Index dimension_;
  StreamingPrivateOjaOptions options_;
  double unit_sigma_;
  std::uint64_t first_batch_;  // batch_rows, or the derived B₁ when it is 0
  OjaBatchPlan plan_;
  std::unique_ptr<privacy::NoiseSource> source_;
  Eigen::Index width_;        // p = min(d, k + oversampling): the iterate's columns
  // Layouts: a dense row reads W and adds to S a column at a time (d-long contiguous, vectorised);
  // a sparse row reads and adds p doubles per non-zero, contiguous only row-major. So W is kept
  // column-major, with a row-major copy from the first sparse row on (refreshed each step), and S
  // is column-major until the first sparse row, then moved (an exact copy) to row-major for the
  // rest of the pass. Every entry of S is the same sequence of additions in either layout, and each
  // row's xᵀW is computed from the same copy whatever came before, so the layout never changes a bit.
  using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::MatrixXd iterate_;   // W_t, d × p
  RowMajorMatrix iterate_rows_;  // W_t again, row-major, for sparse rows (empty before the first)
  Eigen::MatrixXd basis_;     // the published d × k (the Ritz directions of W_t's step)
  Eigen::MatrixXd previous_;  // W_{t−1}, d × p (scratch for the release)
  // S: the partial minibatch's clipped sum (exact, sensitive), in sum_ (dense layout) or, from the
  // first sparse row on, in sum_rows_ (the other is empty).
  Eigen::MatrixXd sum_;
  RowMajorMatrix sum_rows_;
  bool sparse_layout_ = false;
  Eigen::VectorXd projection_;  // scratch: a row's xᵀW (p)
  Eigen::MatrixXd noisy_;     // S̃ of the latest step
  Eigen::VectorXd histogram_;  // h: the partial minibatch's update norms (exact, sensitive)
  Eigen::VectorXd noisy_histogram_;  // h̃ of the latest step
  double clip_;               // C_t
  std::uint64_t rows_ = 0;
  std::uint64_t pending_rows_ = 0;
  std::uint64_t steps_ = 0;
  // Set from releases only (plan_rest): the step taking the rest and its rows; the last step's clip.
  std::uint64_t final_step_ = 0;
  std::uint64_t final_rows_ = 0;
  double last_clip_ = 0.0;  // 0: no step yet
  // Centred updates only (else empty): c of the pending minibatch, the centre of the latest step (for
  // its Release), and a row's deviation g − c (scratch).
  Eigen::MatrixXd centre_;
  Eigen::MatrixXd released_centre_;
  Eigen::MatrixXd deviation_;
  std::vector<Subscriber> subscribers_;
  base::StreamJournal journal_;  // none unless options' journal names one
};

}  // namespace dpstream::pca
