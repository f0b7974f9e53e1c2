// The centre of StreamingPrivateOja's centred updates (options.centred_updates): DP-PCA's adaptive
// private mean estimate of a minibatch's updates (Liu, Kong, Jain & Oh, NeurIPS 2022: clip each
// update around a centre, with noise scaled to the clip's radius r rather than to the updates'
// norms), made one pass in O(d·p) memory.
//
// DP-PCA estimates the centre and the range from the minibatch itself, which needs it buffered. Here
// the centre c_t of minibatch t is post-processing of the pass's earlier releases only (free in
// privacy; fixed before the minibatch's first row), and the radius r_t is the private γ-quantile of
// ‖g − c‖ from the previous minibatch's noisy histogram (the scale histogram's mechanism, of ‖g − c‖
// instead of ‖g‖). A slot holding a row x ≠ 0 contributes c + clip_r(g − c), g = x(xᵀW); a zero
// slot (the zero-out relation's absent row) contributes c exactly. So the clipped sum is
// B·c + Σ clip_r(g_i − c), B (the slot count) and c public: under zero-out neighbours it moves by
// ‖clip_r(g − c)‖ ≤ r, under replace by ‖clip_r(g − c) − clip_r(g' − c)‖ ≤ 2r — the sensitivities of
// the uncentred sum with C replaced by r, so the noise σ_g = Δ·σ₁/√(1 − f) and the accounting are
// unchanged (streaming_private_oja.hpp).
//
// The centre. The mean update at iterate W is Σ̂W. Once span(W_t) ≈ span(W_{t−1}) (the iterate has
// settled), Σ̂W_t ≈ Σ̂W_{t−1}(W_{t−1}ᵀW_t) and W_t's own span carries it: c = W_t·M with
// M = sym(W_tᵀ·S̃_t·W_{t−1}ᵀW_t)/B_t, the p × p estimate of W_tᵀΣ̂W_t from the release S̃_t.
// Before it settles the release is mostly noise, and so is M: with Z ~ N(0, σ_t²) the release's noise,
// W_tᵀS̃_t = R (power steps: W_t = S̃_t·R⁻¹) and M = sym(R·H̄·R⁻¹) with H̄ = W_{t−1}ᵀS̃_t/B_t, whose
// noise W_{t−1}ᵀZ/B_t is i.i.d. N(0, s²), s = σ_t/B_t (W_{t−1} is fixed before Z). While Z dominates,
// R ≈ σ_t√d·I and M's noise is a symmetric Gaussian p × p matrix of spectral norm ≈ ν = √(2p)·s —
// large while B_t is small — so c = W_t·M is a centre of norm ~ν, far from every row's update, and
// ‖g − c‖ (hence the radius, hence the noise) exceeds the uncentred ‖g‖. The rule:
//  * gate: H = sym(H̄) (the step's Ritz matrix) has noise G = sym(W_{t−1}ᵀZ)/B_t exactly, E λ_max(G)
//    ≲ ν (take_rest_next's Ritz noise, streaming_oja_plan.hpp), and λ_max(G) is s-Lipschitz in the
//    noise's entries, so P(λ_max(G) > τ) ≤ e^{−p} for τ = 2ν = ν + √(2p)·s (Gaussian concentration).
//    No Ritz value above τ: the release shows no signal, c = 0 (exactly the uncentred update).
//  * shrink: M's eigenvalues become min(L², max(0, m_i − τ)) — what the noise alone reaches (≲ ν where
//    R is near a multiple of I, the columns without signal) is dropped; a direction with signal loses
//    τ, ≪ its eigenvalue once B_t is large. L² caps W_tᵀΣ̂W_t for rows ‖x‖ ≤ L.
// Where a column carries signal R is far from a multiple of I and M's noise there is not bounded by
// ν (the similarity R·(·)·R⁻¹ amplifies it); the clamp bounds c, and the radius still covers whatever
// deviation remains: clipping never breaks the sensitivity, only biases the step.
#pragma once

#include <Eigen/Core>

namespace dpstream::pca {

// c for the minibatch after a step: `iterate` W_t (d × p), `previous` W_{t−1}, `noisy_sum` S̃_t, the
// step's slot count `batch`, its noise σ_t (`sigma`, the release's per-entry standard deviation) and
// L² (`l2`). Post-processing of a release and public numbers only; exactly zero when no Ritz value
// exceeds the threshold τ.
Eigen::MatrixXd update_centre(const Eigen::MatrixXd& iterate, const Eigen::MatrixXd& previous,
                              const Eigen::MatrixXd& noisy_sum, double batch, double sigma, double l2);
// The same with the step's Ritz values given (`ritz`, as step_ritz_values computes them: the step's
// published basis solves the same matrix, and its values are not solved for again).
Eigen::MatrixXd update_centre(const Eigen::MatrixXd& iterate, const Eigen::MatrixXd& previous,
                              const Eigen::MatrixXd& noisy_sum, const Eigen::VectorXd& ritz, double batch,
                              double sigma, double l2);

// The step's Ritz matrix sym(W_{t−1}ᵀS̃_t) (p × p; the gate's H times B), and its eigenvalues over B,
// descending: the Ritz values that the gate reads and the published basis is chosen by.
Eigen::MatrixXd step_ritz_matrix(const Eigen::MatrixXd& previous, const Eigen::MatrixXd& noisy_sum);
Eigen::VectorXd step_ritz_values(const Eigen::MatrixXd& previous, const Eigen::MatrixXd& noisy_sum, double batch);

// τ = 2·√(2p)·σ/B: the threshold on the Ritz values of a release with noise σ on B slots, p columns.
double centre_threshold(Eigen::Index width, double sigma, double batch) noexcept;

}  // namespace dpstream::pca
