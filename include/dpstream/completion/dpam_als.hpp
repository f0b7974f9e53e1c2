// DpamAls: user-level private ALS on the residuals of a private baseline, with adaptive per-item
// weights — the DPALS / DPAM family: Chien, Jain, Krichene, Rendle, Song, Thakurta & Zhang, "Private
// alternating least squares: practical private matrix completion with tighter rates" (ICML 2021), and
// Krichene, Jain, Song, Sundararajan, Thakurta & Zhang, "Multi-task differential privacy under
// distribution skew" (ICML 2023).
//
//   ratings ─▶ baseline release (μ̂, b̂_j, noisy counts ĉ_j; private_baseline.hpp)
//           ─▶ T times: every user folds in locally (b_i, u_i against the public side; item_model.hpp)
//                       ─▶ one release of every item's weighted Gram and right-hand side ─▶ v_j solves
//           ─▶ model gate: one release of Σ_i (user i's held-out gain of her factor, clipped) — the
//                       factors are served only if it is clearly positive, else the baseline alone
//           ─▶ ItemModel (public): μ̂, b̂_j, v_j; users fold themselves in to be served
//
// V-step release t: for every item j, G_j = Σ_{i rated j} w_ij upper(u_i u_iᵀ) and
// h_j = Σ_{i rated j} w_ij r_ij u_i, with r_ij = clip(x_ij − μ̂ − b̂_j − b_i, ±B_r) her residual and
// w_ij = a_j / ‖a_{Ω_i}‖₂, a_j = (ĉ_j + 1)^(−p): DPAM's adaptive weights (p = item_weight_exponent;
// rarely rated items weigh more in each user's budget; p = 0 is DPALS's uniform 1/√m_i). Layout:
// statistics_stride(r) entries per item as v_step_statistics (private_als.hpp). N(0, σ_a²) on every
// coordinate, snapped. Post-processing: v_j = Q diag(1/(max(Λ, 0) + λ_j)) Qᵀ ĥ_j from the
// eigendecomposition Ĝ_j = QΛQᵀ, with the noise-aware ridge λ_j = λ_v + κ·2σ_a√r (2σ_a√r ≈ ‖E_j‖₂, the
// noise's spectral norm: a direction the noise dominates is shrunk, not inverted); items whose noisy
// count ĉ_j is below min_item_count_sds·σ_b keep v_j = 0 and are served by the baseline.
//
// Model gate (why): where the noise leaves the item factors nothing to carry (few users, small ε), a
// model served anyway adds noise to every prediction, and each user's own two-fold check
// (FoldInOptions::validate_factor) lets a few percent of users through by chance. The gate asks all
// users at once: g_i = clip(mean held-out gain of her factor over her bias alone, ±gate_bound)
// (held_out_factor_gain), S = Σ g_i + N(0, σ_c²); the factors are served only when S > gate_margin·σ_c,
// else the released model is the baseline alone (rank 0), which then serves exactly the baseline's
// predictions. When the factors add nothing, S's mean is ≤ 0 and they are served with probability at
// most Φ(−gate_margin) (2.3% at 2).
//
// Privacy contract
//  * Unit: one user, all her ratings. Neighbours: add/remove one user (user-level). The catalogue,
//    the scale and every option are public.
//  * Sensitivities (ℓ2), add/remove user i: baseline blocks √2 each (private_baseline.hpp); a V-step
//    release Δ_a = B_u·√(B_u² + B_r²): in each item she rated she moves G_j by w_ij·upper(uuᵀ) and h_j
//    by w_ij·r·u, ‖upper(uuᵀ)‖² ≤ ‖u‖⁴ ≤ B_u⁴ and ‖r u‖² ≤ B_r²B_u², and Σ_j w_ij² = 1. Everybody
//    else's w, b, u and r are functions of their own ratings and of earlier releases, so they do not
//    move (adaptive composition). No cap on a user's ratings is needed for the bound.
//    The gate's sum: Δ_c = gate_bound (her one clipped term; others' terms depend on their own ratings
//    and the public model only).
//  * Mechanism: the 3 + T releases are Gaussian, composed adaptively: μ-GDP with
//    μ² = 2/σ_g² + 2/σ_b² + T·Δ_a²/σ_a² + Δ_c²/σ_c² (Dong, Roth & Su 2019, Thm 3.2). Calibration: μ = 1/σ
//    of the analytic Gaussian at sensitivity 1 for the target (Balle & Wang 2018), so the run is exactly
//    (ε, δ)-DP; μ² is split global_share : baseline_share : gate_share : the rest (ALS).
//  * Accounting: train() charges the accountant ONCE, before reading any data, as one Gaussian release
//    of sensitivity μ at σ = 1 with the target as its single-release guarantee.
//  * Joint DP: users' biases and factors (UserModel) are computed by each user alone from the public
//    ItemModel and her own ratings (fold_in_user); only the ItemModel is released. DpamAlsResult's
//    per-user figures are the trusted curator's view of the simulation, never a release.
//  * Noise: seed set → SeededNoiseSource (reproducible, NOT secure); unset → the secure source.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <string>

#include <Eigen/Core>

#include "dpstream/completion/item_model.hpp"
#include "dpstream/completion/private_baseline.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::completion {

struct DpamAlsOptions {
  Eigen::Index rank = 10;               // r ≥ 1
  int iterations = 3;                   // T ≥ 1 V-step releases
  BaselineOptions baseline;             // the scale and the item-bias shrinkage
  FoldInOptions fold_in;                // λ_b, λ_u and B_u of the users' local solves
  double residual_bound = 2.0;          // B_r > 0
  double item_regularization = 10.0;    // λ_v > 0
  double gram_noise_multiplier = 4.0;   // κ ≥ 0 of the noise-aware ridge
  // p ∈ [0, 1] of the adaptive weights. 0: DPALS's uniform 1/√m_i, which did better on the 10M-shaped
  // set at ε = 1 (test RMSE 0.9030 against 0.9046 at p = 0.25; seed 1) and the same on the small one.
  double item_weight_exponent = 0.0;
  double min_item_count_sds = 2.0;      // ≥ 0: items with ĉ_j below this many σ_b keep v_j = 0
  double init_sd = 0.1;                 // > 0: the initial V ~ N(0, init_sd²), data-independent
  double global_share = 0.05;           // shares of μ², both in (0, 1), sum < 1; the ALS gets the rest
  double baseline_share = 0.20;
  // The model gate (header): its share of μ² (0: no gate, the factors are always served), the bound
  // on a user's term (a mean gain per rating, in squared rating units) and the margin in σ_c.
  double gate_share = 0.02;
  double gate_bound = 0.1;
  double gate_margin = 2.0;
  // Not a privacy::PrivacySpec: the privacy unit here is a user (all her ratings, add/remove: the
  // header), not a row of norm L, and the run draws from two sources derived from one seed; a spec
  // would carry a row bound, a relation and a calibration nothing reads.
  privacy::EpsDelta target{1.0, 1e-6};  // the whole run; δ > 0
  std::optional<std::uint64_t> seed;    // set: reproducible, NOT secure
};

// What a V-step observer sees, all public: the noisy statistics, and the model after this release (the
// baseline's μ̂, b̂, ĉ and the item factors solved from the statistics).
struct DpamRelease {
  int iteration = 0;                  // 1-based
  const Eigen::VectorXd& statistics;  // items × statistics_stride(r), after the noise
  const ItemModel& model;
};

// The model gate's release and decision (header).
struct ModelGate {
  double noisy_sum = 0.0;           // Σ g_i + N(0, σ_c²)
  double sigma = 0.0;               // σ_c
  double threshold = 0.0;           // gate_margin·σ_c
  std::uint64_t users = 0;          // users with a term (≥ 4 ratings)
  std::uint64_t users_clipped = 0;  // terms clipped to ±gate_bound
  bool open = false;                // the factors are served
};

struct DpamAlsResult {
  ItemModel model;                      // public: the baseline's μ̂, b̂ and the last V-step's factors
  // Public, for audits: the baseline's noisy blocks, and the model V-step 1 reads (the baseline
  // release with the data-independent initial V on its active items).
  BaselineStatistics baseline;
  ItemModel initial_model;
  std::uint64_t ratings_clipped = 0;    // ratings outside the scale (clipped once, before the releases)
  std::uint64_t residuals_clipped = 0;  // residual terms over B_r, over all V-steps
  std::uint64_t user_factors_clipped = 0;  // local solves with ‖u_i‖ > B_u, over all V-steps
  Eigen::Index items_left_out = 0;      // items below the count threshold (served by the baseline)
  std::optional<ModelGate> gate;        // set when gate_share > 0; closed: `model` has rank 0
};

// DPAM's weight of item j before a user's normalisation: a_j = (ĉ_j + 1)^(−p), from the public noisy
// count ĉ_j (ItemModel::item_weight).
double dpam_item_weight(double noisy_count, double exponent);

// One user's terms of a V-step release, added into `statistics` (items × statistics_stride(r)): for
// every item j she rated, w_ij·upper(u uᵀ) and w_ij·r_ij·u with her residual r_ij against `model`
// clipped to ±B_r (header). `user` is her fold-in (fold_in_user) against the model the release is
// computed from. Returns how many residuals were clipped. This is the only place a user's data enters
// a V-step: batch training, the online Recommender and the audits all add users through it.
std::uint64_t add_user_v_step_terms(const DpamAlsOptions& options, const ItemModel& model, const UserModel& user,
                                    std::span<const std::pair<Eigen::Index, double>> ratings,
                                    Eigen::Ref<Eigen::VectorXd> statistics);

// One user's term of the model gate's sum: her held-out gain (held_out_factor_gain with the serving
// fold-in) clipped to ±gate_bound; none below 4 ratings. `clipped` is set when the clip moved it. The
// only place a user's data enters the gate.
std::optional<double> dpam_gate_term(const DpamAlsOptions& options, const ItemModel& model,
                                     std::span<const std::pair<Eigen::Index, double>> ratings, bool& clipped);

// A V-step's fold-in: `serving` without validate_factor (item_model.hpp says why).
FoldInOptions training_fold_in(const FoldInOptions& serving);

// The exact (noiseless) statistics of a V-step against a public model: every user of `ratings` folds
// in (training_fold_in) and adds her terms. For audits and tests (train() computes the same, then adds the noise).
Eigen::VectorXd dpam_v_step_statistics(const DpamAlsOptions& options, const ItemModel& model,
                                       const RatingsMatrix& ratings);

// v_j from one item's noisy statistics (layout above): the noise-aware ridge λ_v + κ·2σ√r through
// the eigendecomposition of Ĝ_j, its negative eigenvalues clipped at 0. Post-processing.
Eigen::VectorXd solve_item_factor(const DpamAlsOptions& options, const double* statistics, double noise_sigma);

class DpamAls {
 public:
  // Validates (InvalidParameter naming the field) and calibrates.
  explicit DpamAls(const DpamAlsOptions& options);
  ~DpamAls();

  const DpamAlsOptions& options() const noexcept { return options_; }
  double mu() const noexcept { return mu_; }                    // the run's GDP μ
  const BaselineNoise& baseline_noise() const noexcept { return baseline_noise_; }
  double release_sigma() const noexcept { return release_sigma_; }  // σ_a of every V-step coordinate
  double gate_sigma() const noexcept { return gate_sigma_; }        // σ_c (0 without a gate)
  double release_sensitivity() const noexcept;                      // Δ_a
  bool secure() const noexcept;

  using ReleaseObserver = std::function<void(const DpamRelease&)>;
  // Charges `budget` first; BudgetExhausted: nothing read or drawn.
  DpamAlsResult train(const RatingsMatrix& train, const privacy::Budget& budget,
                      const std::string& label = "dpam als", const ReleaseObserver& observer = {});

 private:
  DpamAlsOptions options_;
  double mu_ = 0.0;
  BaselineNoise baseline_noise_;
  double release_sigma_ = 0.0;
  double gate_sigma_ = 0.0;
  std::unique_ptr<privacy::NoiseSource> mechanism_source_;
  std::unique_ptr<privacy::NoiseSource> algorithm_source_;  // the initial V
};

}  // namespace dpstream::completion
