// The minibatch plan of StreamingPrivateOja and the derivation of its defaults from public numbers
// only (d, k, ε, δ, L and, when declared, the horizon n) — never from the rows, so the plan costs
// no budget and holds on data nobody has measured.
//
// Why geometric minibatches and power steps (the derivation; docs/streaming-oja.md has the figures):
//  * One step at iterate W with a minibatch of B rows releases S̃ = B·Σ̂W + Z, Z ~ N(0, σ²I), σ =
//    σ₁·C (C ≤ L² the clip, σ₁ the unit Gaussian σ of the target). Per column the noise has norm
//    σ√d and, along any fixed direction, σ. So a step of B rows improves the angle to the top
//    eigenvector only if B·gap ≳ σ·√d·tanθ… — in short, the error a step leaves is
//      tan θ_t ≲ (λ₂/λ₁)·tan θ_{t−1} + σ√d / (B_t·(λ₁ − λ₂))     (noisy power method, per column).
//    The last step's minibatch sets the floor: σ√d/(B_T·gap).
//  * Fixed minibatches B = n/T: the floor is T·σ√d/(n·gap), T times Analyze Gauss's σ₁L²√d/(n·gap)
//    (its noise E has ‖E v‖ ≈ σ₁L²√d), and T must also be large enough to converge. With Oja's 1/t
//    step the later minibatches are averaged, which recovers only √T of the T.
//  * Geometric minibatches, B_t = B₁·r^{t−1}: the last holds (r−1)/r of the rows, so the floor is
//    r/(r−1)·σ√d/(n·gap) — a constant (2 at r = 2) times Analyze Gauss's, whatever n — and every
//    minibatch size from B₁ to n/2 occurs, so whatever the (unknown) eigenvalues, the steps whose B
//    exceeds σ√d/λ₁ exist and converge (each such step's gain doubles the previous one's). The rows
//    of the too-small early steps are lost: at most twice the threshold size, ≤ 2σ√d/λ₁ rows.
//    r = 2 balances the floor (r/(r−1), better with larger r) against the rows lost below the
//    threshold (≤ r times it) and, with no declared horizon, the partial last minibatch (up to
//    1 − 1/r of the rows seen may be pending when the stream stops).
//  * With geometric minibatches the averaging is done by the minibatch size, so each step is a
//    power step, W_t = qr(S̃_t) (Oja's step with η = ∞; the 1/t Oja step would re-weight the early,
//    noisier steps in). The Oja rule stays available (StepRule::oja) for fixed minibatches.
//  * B₁ (batch_rows 0: derived): ⌈σ₁·√(d·k)⌉ — the minibatch at which the noise's norm σ₁C√(dk)
//    equals the largest signal any data can give (‖B·Σ̂W‖_F ≤ B·C·√k at C = L²); a smaller first
//    minibatch cannot carry information for any input, a larger one would waste the rows of data
//    with a strong top direction.
//  * Declared horizon n: the boundaries are b_t = round(n·(r^t − 1)/(r^T − 1)), t = 1..T, with T the
//    largest count whose first minibatch still holds B₁ rows: the pass ends exactly at n with the
//    last minibatch n·(r−1)/r, no partial step. Past the horizon the minibatches keep the last size.
//  * Clip: the private clip scale by default (scale_share unset: derived_scale_share below). For rows
//    of norm L the update norm is ‖x‖·‖Wᵀx‖ ≈ L·|xᵀv|, whose quantiles are near L² only once W has
//    converged AND the data have a strong top direction: early in the pass W is random and ‖Wᵀx‖ ≈
//    ‖x‖·√(p/d), and on spread-out data |xᵀv| ≪ ‖x‖ for most rows. There the γ-quantile clip lowers
//    the noise by L²/C; its price is the share f of μ² its histogram takes: the gradient noise
//    rises by 1/√(1 − f) whatever C turns out to be.
//  * The share f (derived_scale_share): the smallest at which the histogram's noise on one bin,
//    σ_h = σ₁/√f, is no larger than the count the quantile rule must see above the clip, (1 − γ)·B,
//    at the first minibatch of a k = 1 pass, B = σ₁·√d (the smallest first minibatch at this d, so
//    the clip is located to about a bin from the first step whatever k): f = 1/((1 − γ)²·d). σ₁ —
//    hence ε, δ — cancels; each later minibatch doubles B, so its count error halves. Capped at
//    f_max = 1/4 (the gradient noise rises at most 1/√(3/4) ≈ 1.15×, whatever the clip saves), which
//    binds at d ≤ 400 for γ = 0.9.
#pragma once
#pragma once

#include <cstdint>

#include <Eigen/Core>

namespace dpstream::pca {

// How each minibatch's noisy sum moves the iterate.
enum class StepRule {
  power,  // W_t = qr(S̃_t): the noisy power step (default; with geometric minibatches)
  oja,    // W_t = qr(W_{t−1} + η_t·S̃_t/B_t), η_t = α/(L²·(t₀ + t)) (DP-PCA's minibatch Oja step)
};

// The minibatch sizes of a pass: a pure function of public numbers.
class OjaBatchPlan {
 public:
  // first ≥ 1 rows; growth ≥ 1 (1: every minibatch `first` rows); horizon 0: unknown.
  OjaBatchPlan(std::uint64_t first, double growth, std::uint64_t horizon);
  // Rows of minibatch `step` (1, 2, …).
  std::uint64_t rows_of(std::uint64_t step) const noexcept;
  // Minibatches that end at the horizon (0 without one).
  std::uint64_t planned_steps() const noexcept { return steps_; }

 private:
  std::uint64_t boundary(std::uint64_t step) const noexcept;  // rows before minibatch step + 1

  std::uint64_t first_;
  double growth_;
  std::uint64_t horizon_;
  std::uint64_t steps_ = 0;
};

// The derived first minibatch ⌈σ₁·√(d·k)⌉ (header), σ₁ the unit Gaussian σ of the pass.
std::uint64_t derived_first_batch(Eigen::Index dimension, Eigen::Index k, double unit_sigma) noexcept;

// The private clip scale's share of μ² when StreamingPrivateOjaOptions::scale_share is unset (header):
// min(1/4, 1/((1 − γ)²·d)), γ the clip quantile.
double derived_scale_share(Eigen::Index dimension, double clip_quantile) noexcept;

// Before a run: the smallest eigengap λ_k − λ_{k+1} (as a fraction of L²) at which each method's
// per-column angle error stays at tan θ ≤ `tolerance`, from the floors above: one pass with
// geometric minibatches r/(r−1)·σ₁√d/(n·gap), Analyze Gauss σ₁√d/(n·gap). Gaps below the first
// are not resolved by one pass at this n, d, ε; the second says what Analyze Gauss would need. With a
// private clip scale (scale_share f > 0) the one-pass figure is the worst case, the clip staying at
// L²: its noise is σ₁L²/√(1 − f), so the floor rises by 1/√(1 − f); a clip C < L² lowers it by C/L²,
// which depends on the rows and is not known before the run.
struct ResolvableGap {
  double one_pass;
  double analyze_gauss;
};
ResolvableGap resolvable_gap(std::uint64_t rows, Eigen::Index dimension, double unit_sigma, double growth,
                             double tolerance, double scale_share = 0.0) noexcept;

}  // namespace dpstream::pca
