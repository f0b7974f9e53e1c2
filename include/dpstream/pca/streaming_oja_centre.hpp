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
// The centre: the mean update at iterate W is Σ̂W. Once span(W_t) ≈ span(W_{t−1}) (the iterate has
// settled), Σ̂W_t ≈ Σ̂W_{t−1}(W_{t−1}ᵀW_t) and W_t's own span carries it: c = W_t·M̂ with
// M̂ = sym(W_tᵀ·S̃_t·W_{t−1}ᵀW_t)/B_t — the p × p estimate of W_tᵀΣ̂W_t from the release S̃_t (its
// noise enters only through p × p numbers). Its eigenvalues are clamped to [0, L²], the range of
// W_tᵀΣ̂W_t for rows ‖x‖ ≤ L. Before the pass settles c is a poor centre and the quantile radius
// grows to cover the deviations; clipping never breaks the bound, only biases the step.
#pragma once

#include <Eigen/Core>

namespace dpstream::pca {

// c for the minibatch after a step: `iterate` W_t (d × p), `previous` W_{t−1}, `noisy_sum` S̃_t, the
// step's slot count `batch` and L² (`l2`). Post-processing of a release and public numbers only.
Eigen::MatrixXd update_centre(const Eigen::MatrixXd& iterate, const Eigen::MatrixXd& previous,
                              const Eigen::MatrixXd& noisy_sum, double batch, double l2);

}  // namespace dpstream::pca
