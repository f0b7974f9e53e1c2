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
//    binds at d ≤ 16 for γ = 1/2 (f = 4/d).
//  * The quantile γ = 1/2 (clip_quantile), the median of ‖g‖. A step's floor is σ/gap̃, σ ∝ C and
//    gap̃ the gap of the clipped second moment Σᵢ wᵢ·xᵢxᵢᵀ, wᵢ = min(1, C/‖gᵢ‖). Lowering C never
//    costs noise against the updates' norm: a row's clipped norm min(‖g‖, C) falls at most as fast
//    as C, so Σ min(‖gᵢ‖, C)/C only grows, and at the γ-quantile it is at least (1 − γ)·B (every row
//    above contributes C): 1/2 of B at the median, 1/10 at γ = 0.9. What a lower C costs is the
//    weights: the rows above it enter with wᵢ < 1, and they are the rows along the iterate; the
//    weighted moment keeps symmetric data's top directions but its relative gap narrows, and once
//    most rows are weighted the rows off the iterate (‖Wᵀx‖ → 0, weight → 1 against C/‖g‖ → 0)
//    take over. The median is the lowest clip that leaves at least half the rows unweighted —
//    Σ wᵢxᵢxᵢᵀ ⪰ Σ_{‖gᵢ‖ ≤ C} xᵢxᵢᵀ, a majority — with the signal-to-clip ratio ≥ B/2. It is also the
//    cheapest quantile to locate privately: the tail count (1 − γ)·B is largest, so f = 4/d, 25×
//    less than at γ = 0.9.
//  * The rest in one minibatch (take_rest_next, below): with a declared horizon, the planned last
//    minibatch holds n/2 rows only because the plan cannot know when the iterate will have settled.
//    Once the releases say it has (a public test at this step's own noise level), a last minibatch
//    of all n − n_t remaining rows has the floor σ√d/((n − n_t)·gap), up to 2× lower, at the price
//    of starting that step from W_t instead of W_{T−1}. The choice is post-processing of the
//    releases: each row still enters exactly one Gaussian release (streaming_private_oja.hpp says
//    why the pass stays one mechanism when the partition depends on earlier releases).
#pragma once

#include <cstdint>

#include <Eigen/Core>

namespace dpstream::pca {

// How each minibatch's noisy sum moves the iterate.
enum class StepRule {
  power,  // W_t = qr(S̃_t): the noisy power step (default; with geometric minibatches)
  oja,    // W_t = qr(W_{t−1} + η_t·S̃_t/B_t), η_t = α/(C_t·(t₀ + t)) (DP-PCA's minibatch Oja step)
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
  // Rows in minibatches 1 … step (with a horizon, step ≤ planned_steps()).
  std::uint64_t rows_through(std::uint64_t step) const noexcept;
  std::uint64_t horizon() const noexcept { return horizon_; }

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
// which depends on the rows and is not known before the run. The rest in one minibatch
// (take_rest_next) does not move this figure: at a gap g at this reach the last step that can
// decide it, T − 2 (B ≈ n/8), has the floor σ√d/(B·g) ≈ 1.2 > 1, so it cannot find the pass
// settled; only gaps several times the reach settle early enough for a last minibatch of up to
// ~3n/4 rows (floor 4/3 of Analyze Gauss's instead of 2).
struct ResolvableGap {
  double one_pass;
  double analyze_gauss;
};
ResolvableGap resolvable_gap(std::uint64_t rows, Eigen::Index dimension, double unit_sigma, double growth,
                             double tolerance, double scale_share = 0.0) noexcept;

// What one power step t of a planned pass made public, for take_rest_next: every number is the
// plan's, an option's, or post-processing of releases.
struct StepReading {
  Eigen::VectorXd ritz;          // Ritz values of sym(W_{t−1}ᵀS̃_t)/B_t, descending (p of them)
  double sigma = 0.0;            // σ_g of step t (at its clip)
  double previous_sigma = 0.0;   // σ_g of step t − 1
  std::uint64_t rows = 0;        // B_t
  std::uint64_t previous_rows = 0;  // B_{t−1}
  double change = 1.0;           // ‖sin Θ(V_t, V_{t−1})‖₂ between the published top-k of t and t − 1
};

// Whether minibatch t + 1 should hold every row left to the horizon instead of the plan's size
// (false without a horizon, before step 2, with p = k, or when t + 1 is the planned last anyway).
// The derivation (noisy power method per column, gap g = λ_k − λ_{k+1}, c = λ_{p+1}/λ_k the
// contraction of one step with p columns):
//  * Ritz values carry the noise of W_{t−1}ᵀZ/B_t, a p × p Gaussian matrix symmetrised: spectral
//    norm ν ≈ √(2p)·σ_t/B_t. Estimates: ĝ = θ_k − θ_{k+1} − 2ν (nothing settles unless ĝ > 0),
//    c = (θ_p + ν)/(θ_k − ν) (θ_p stands for λ_{p+1} ≤ λ_p; the margins make both conservative).
//  * A step's floor (the spectral norm of its noise over the gap): τ_t = σ_t(√d + √p)/(B_t·ĝ).
//    Settled: τ_{t−1} + τ_t < 1 and the published estimate moved by no more than both floors
//    explain, change ≤ τ_{t−1} + τ_t — so W_t sits at its floor, not still converging.
//  * Taking the rest after step s (rows n_s, B_s its minibatch) leaves, in units of τ_t,
//    E(s) = c·B_t/B_s + B_t/(n − n_s): the settled W_s's error contracted once, plus the floor of
//    one step on n − n_s rows (future clips taken equal to this one's). s = T − 1 is the plan.
//    Take the rest now iff E(t) < E(s) for every later s ≤ T − 1: the jump that minimises the
//    predicted final error, made when it is now. With c ≥ 1/6 it never beats the plan (a jump
//    needs c < y/(2(1 − y)), y = B_t/B_T ≤ 1/4), so a pass that never settles, or settles only
//    slowly, keeps the geometric sizes.
bool take_rest_next(const OjaBatchPlan& plan, std::uint64_t step, Eigen::Index k, Eigen::Index dimension,
                    const StepReading& reading) noexcept;

}  // namespace dpstream::pca
