// PrivateAls: noisy alternating least squares and IRLS matrix completion with Gaussian, Laplace or
// Huber noise — Gowtham, Gokularam, Tholeti & Kalyani, "Introducing the Huber mechanism for
// differentially private low-rank matrix completion" (arXiv 2022), §3, Algorithms 1–3 — in two modes:
// `faithful` (as printed, NO guarantee) and `rigorous` (a user-level joint-DP mechanism modelled on
// DP-ALS, Chien et al. 2021, and on the global/local "billboard" split of Jain, Thakkar & Thakurta,
// "Differentially private matrix completion revisited", ICML 2018, §3).
//
// Model: X ≈ U Vᵀ, U users × r, V items × r; min Σ_Ω L(x_ij − u_iᵀv_j) + λ(‖U‖² + ‖V‖²).
// Each outer iteration t = 1..T (Algorithm 1 / 2):
//   u-step: u_i = (V_{Ω_i}ᵀV_{Ω_i} + λI)⁻¹ V_{Ω_i}ᵀ x_i for every user — ridge LS, never noised (both
//           algorithms, as printed: IRLS is used on the V side only).
//   V-step: ALS (irls_iterations K = 0): one step with weights w = 1. IRLS (K ≥ 1, Algorithm 3): every
//           item starts from a fresh θ̂_j ~ N(0, 1) and takes K steps with w_ij = min(1, α/|x_ij − u_iᵀθ̂_j|)
//           (huber_weight). A step computes, for every item j, the Gram G_j = Σ_{i∈Ω̃_j} w_ij u_i u_iᵀ
//           and RHS b_j = Σ_{i∈Ω̃_j} w_ij x_ij u_i, adds noise (below), and solves
//           v_j = (G_j + λI)⁻¹ b_j. One such step for all items is one "release".
// The result is U from the last u-step (computed from the V of iteration T−1) and V from the last
// V-step, as Algorithm 1 returns Ẑ = ÛV̂ᵀ.
// Noise draw order (seeded runs): the mechanism noise comes from its own stream, drawn release by
// release, items ascending, coordinates in order; the initial V and every θ̂ start come from a second,
// algorithmic stream. So IRLS with K = 1 and α large enough that every weight is 1 draws exactly the
// noise ALS draws and gives ALS's iterates bitwise (the weights enter as exact multiplications by 1).
// Cost: per release O(|Ω|·r² + n·r³); no dense users × items matrix is formed (times on MovieLens
// 100K: docs/performance.md, "Figures behind the code's choices").
//
// Privacy contract, faithful mode — NO PROVEN GUARANTEE:
//  * Noise: only the r-vector RHS b_j of each item is noised, once per item per release (draw
//    t ~ N(0, v I), Laplace(√(v/2)) or unit-scale Huber(α) with Var(α) = v), as Algorithms 1 and 3 print.
//  * The paper's ε is for ONE draw with an assumed sensitivity Δf = 5 (Table 1); it never composes the
//    n·T (ALS) or n·T·K (IRLS) draws. Δf is unjustified: b_j = Σ x_ij u_i moves by |Δx|·‖u_i‖
//    with u_i unclipped, and one user moves every item she rated. The Gram G_j is released into
//    V unnoised though it depends on who rated j and on their u_i. U and ÛV̂ᵀ are computed
//    without noise; the neighbouring relation is never defined (§2.1: "differ on a single element").
//  * The report (als_privacy_report.hpp) shows the per-draw ε (natural log and the paper's log10,
//    Table 1) and the ε those draws compose to IF Δf held. Use faithful mode to reproduce the paper's
//    numbers, never to protect data. It refuses an accountant (there is nothing proven to charge).
//
// Privacy contract, rigorous mode:
//  * Unit: one user — her whole row of ratings. Neighbours: add/remove one user (default). Replacing
//    a user is a removal plus an addition: options.relation = replace_row doubles both sensitivities
//    (triangle inequality), i.e. μ → 2μ (Gaussian) and ε → 2ε (pure) at the same noise.
//  * Enforced bounds: ratings clipped to |x| ≤ B_r = rating_bound (clipped and counted); at most
//    ξ = max_per_user ratings per user (a user over the cap is refused with InvalidRow naming her:
//    cap first with cap_ratings_per_user, ratings_io.hpp); every u_i clipped to ‖u_i‖₂ ≤ B_u =
//    user_factor_bound after each u-step (counted).
//  * Released per V-step, for all items at once: Ĝ_j = upper(G_j) + E_j and b̂_j = b_j + e_j, with
//    upper(·) the r(r+1)/2 entries on and above the diagonal (Ĝ_j is mirrored from it). The weights
//    lie in (0, 1] and depend only on user i's own data and on θ̂_j, which is data-independent (first
//    step) or post-processing of earlier releases.
//  * Sensitivity of one release (v_step_sensitivity), add/remove user i: only her terms change, in at
//    most ξ items; u_k of every other user is a function of the public V and u_k's own ratings.
//      ℓ2: per item w²(‖upper(uuᵀ)‖² + x²‖u‖²), ‖upper(uuᵀ)‖² = (‖u‖₂⁴ + ‖u‖₄⁴)/2 ≤ ‖u‖₂⁴, so
//          Δ₂ = √ξ · B_u · √(B_u² + B_r²)            (attained: u = B_u e₁, |x| = B_r, w = 1);
//      ℓ1: per item Σ_{a≤b}|u_a u_b| + |x|‖u‖₁ = (‖u‖₁² + ‖u‖₂²)/2 + |x|‖u‖₁ ≤ (r+1)B_u²/2 + √r B_r B_u,
//          Δ₁ = ξ · ((r+1)B_u²/2 + √r·B_r·B_u)       (attained: u = B_u·1/√r, |x| = B_r, w = 1).
//  * Mechanism and calibration over the R = T (ALS) or T·K (IRLS) adaptive releases, to target (ε, δ):
//      gaussian: N(0, σ²) on every coordinate; the run is μ-GDP with μ = Δ₂√R/σ (Dong, Roth & Su 2019,
//        Thm 3.2), σ = analytic_gaussian_sigma(Δ₂·√R, target): exactly (ε, δ)-DP. Needs δ > 0.
//      laplace: Laplace(b), b = Δ₁/(ε/R) per coordinate; basic composition: ε-DP.
//      huber:   s·Huber(α), s = α·Δ₁/(ε/R) (Thm 2.1 with a scale, huber.hpp); basic composition: ε-DP.
//        α = huber_noise_alpha, default 1 (variance ∝ α²Var(α) = 2.24 at α = 1, 1.12× Laplace's 2 at
//        the same ε; lighter tails. Huber never beats Laplace's variance: α²Var(α) → 2 as α → 0).
//    Snapping: each release is snapped by its mechanism (snap.hpp), as every dpstream mechanism.
//  * Post-processing (free): V = the solves from the releases. The noisy Ĝ_j need not be positive
//    definite, and inverting a noise-dominated direction blows v_j up; so its eigenvalues are clipped
//    below at f = c·2·sd·√r (sd the noise's standard deviation per entry, 2·sd·√r ≈ ‖E_j‖₂ at the
//    semicircle edge; c = gram_floor_multiplier, default 2; c = 0 is the plain projection onto the
//    PSD cone), then λI is added and the system solved. f depends on public quantities only.
//    Without the floor the solves amplify the noise past a zero predictor's error; with it they do
//    not (RMSE by c: docs/performance.md).
//  * Joint DP (Kearns et al. 2014; the billboard argument of Jain, Thakkar & Thakurta 2018, §3): the
//    releases are (ε, δ)-DP; user i's factor u_i — and her predictions u_iᵀv_j — are computed from
//    the public V's and her own ratings only (local_user_factor; not released). So the outputs to all other users are (ε, δ)-DP in user
//    i's data. AlsResult::user_factors (all of U, and U·Vᵀ) is the TRUSTED-CURATOR view of the
//    simulation: publishing it is not covered.
//  * Accounting: train() charges the budget's accountant (if accounted) ONCE for the whole run BEFORE reading any
//    data: Gaussian charge_gaussian(label, Δ₂√R, σ, target); pure charge_pure(label, ε).
//    BudgetExhausted: nothing was read or drawn. A run refused afterwards (a user over the cap) keeps
//    its charge: conservative.
//
// Noise sources: options.seed set → SeededNoiseSource streams (reproducible, NOT secure: tests and
// replay only); unset → the secure source. The object owns its sources across runs: two runs of one
// object draw different noise; two objects with the same seed agree bitwise.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <Eigen/Core>

#include "dpstream/completion/als_privacy_report.hpp"
#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::completion {

// Initial V (data-independent): uniform → entries U[0, init_scale] (the choice under which a reference
// prototype reproduced the paper's Table 3);
// gaussian → N(0, init_scale²). The paper leaves it unspecified. U needs no start: the first u-step
// overwrites it.
enum class AlsInit { uniform, gaussian };
const char* to_string(AlsInit init) noexcept;  // "uniform" | "gaussian"
// The inverse; any other text: InvalidParameter naming it and the accepted names.
AlsInit parse_als_init(const std::string& text);

struct AlsOptions {
  // ---- model (both modes) ----
  Eigen::Index rank = 5;        // r ≥ 1
  double regularization = 0.5;  // λ > 0 (paper 0.5)
  int iterations = 50;          // T ≥ 1 outer alternations (paper: 50 synthetic, 20 MovieLens)
  int irls_iterations = 0;      // K ≥ 0: 0 = ALS (Algorithm 1); K ≥ 1 = IRLS (Algorithms 2–3)
  double huber_alpha = 3.0;     // α > 0 of the IRLS weights min(1, α/|residual|)
  AlsInit init = AlsInit::uniform;
  double init_scale = 1.0;      // > 0

  // ---- noise ----
  AlsMechanism mechanism = AlsMechanism::none;  // rigorous mode needs one of gaussian/laplace/huber
  AlsMode mode = AlsMode::faithful;
  // α > 0 of the Huber noise. faithful: unset → alpha_for_variance(noise_variance) (needs v > 1; the
  // paper's v = 1 rows use α = 3, Var 1.0036: set it); set → noise_variance is ignored for Huber.
  // rigorous: unset → 1.
  std::optional<double> huber_noise_alpha;

  // ---- faithful mode ----
  double noise_variance = 1.0;     // v > 0 per coordinate (paper: 1 or 2)
  double paper_sensitivity = 5.0;  // Δf > 0 the report assumes (Table 1: the 1..5 rating range)
  double report_delta = 1e-5;      // δ ∈ (0, 1) of the Gaussian figures and compositions (Table 1)

  // ---- rigorous mode ----
  // Not a privacy::PrivacySpec: the privacy unit here is a user (her ratings bounded by B_r, at most
  // ξ of them), not a row of norm L, and the run draws from two sources derived from one seed;
  // a spec would carry a row bound and a calibration nothing reads.
  privacy::EpsDelta target{1.0, 1e-6};  // for the whole run; δ > 0 for Gaussian
  privacy::Neighbours relation = privacy::Neighbours::add_remove_row;
  double rating_bound = 5.0;        // B_r > 0: ratings clipped to [−B_r, B_r]
  Eigen::Index max_per_user = 100;  // ξ ≥ 1
  double user_factor_bound = 1.0;   // B_u > 0: ‖u_i‖₂ clipped to B_u
  double gram_floor_multiplier = 2.0;  // c ≥ 0: noisy-Gram eigenvalue floor c·2·sd·√r (contract)

  std::optional<std::uint64_t> seed;  // set: seeded, reproducible, NOT secure; unset: secure
};

// w = ψ_α(r)/r = min(1, α/|r|), and 1 at r = 0 (the limit; Algorithm 3 line 3).
double huber_weight(double residual, double alpha);

// Sensitivity of one rigorous V-step release under add/remove of one user (derivation above).
// rank, max_per_user ≥ 1 and the bounds finite > 0, else InvalidParameter naming the argument.
struct AlsReleaseSensitivity {
  double l2 = 0.0;  // √ξ·B_u·√(B_u² + B_r²)
  double l1 = 0.0;  // ξ·((r+1)B_u²/2 + √r·B_r·B_u)
};
AlsReleaseSensitivity v_step_sensitivity(Eigen::Index rank, Eigen::Index max_per_user, double rating_bound,
                                         double user_factor_bound);

// Per item, the statistics a V-step noises: the r(r+1)/2 upper-triangle entries of G_j, row by row
// ((0,0), (0,1), …, (0,r−1), (1,1), …), then the r entries of b_j. statistics_stride(r) of them.
Eigen::Index statistics_stride(Eigen::Index rank);

// What user `user` computes for herself from public item factors V (items × r) and her own row of
// `ratings`: the ridge solve of the u-step; rigorous mode clips her ratings to B_r and the result to
// B_u. train() calls exactly this, so it reproduces the user's factor bitwise.
Eigen::VectorXd local_user_factor(const AlsOptions& options, const RatingsMatrix& ratings, Eigen::Index user,
                                  const Eigen::MatrixXd& item_factors);

// The exact (noiseless) V-step statistics, items × statistics_stride(r) flattened item by item, for
// user factors U (users × r). weights_from: nullptr → ALS weights 1; else the items × r θ̂ whose
// residuals give the IRLS weights (options.huber_alpha). Rigorous mode clips ratings to B_r first.
Eigen::VectorXd v_step_statistics(const AlsOptions& options, const RatingsMatrix& ratings,
                                  const Eigen::MatrixXd& user_factors, const Eigen::MatrixXd* weights_from = nullptr);

// For a CLI that is given a per-draw ε in faithful mode: the noise variance Table 1 maps it to
// (Gaussian σ = √(2 ln(1.25/δ))·Δf/ε; Laplace 2(Δf/ε)²; Huber Var(ε/Δf) — for Huber better set
// huber_noise_alpha = ε/Δf directly). mechanism ≠ none, ε, Δf > 0, δ ∈ (0, 1), else InvalidParameter.
double faithful_noise_variance_for_epsilon(AlsMechanism mechanism, double per_draw_epsilon,
                                           double paper_sensitivity = 5.0, double delta = 1e-5);

struct AlsResult {
  // U (users × r): each row is that user's local factor (rigorous: not released — the matrix as a
  // whole is the trusted-curator view, see the contract).
  Eigen::MatrixXd user_factors;
  // V (items × r): rigorous mode: post-processing of the releases, public.
  Eigen::MatrixXd item_factors;
  // u_userᵀ v_item; indices outside the factors: InvalidParameter.
  double predict(Eigen::Index user, Eigen::Index item) const;

  std::uint64_t ratings_clipped = 0;       // rigorous: ratings with |x| > B_r (clipped once)
  std::uint64_t user_factors_clipped = 0;  // rigorous: u-step solves with ‖u_i‖ > B_u, over all iterations
  std::uint64_t gram_projections = 0;      // rigorous: noisy Grams whose eigenvalues were floored (contract)
  AlsPrivacyReport privacy;
};

// What a V-step observer sees: everything in it is released in rigorous mode (the noisy statistics
// and their post-processing). In faithful mode the Gram part is the exact Gram (not noised, as printed).
struct AlsRelease {
  int iteration = 0;   // outer t, 1-based
  int inner_step = 0;  // k, 1-based (1 for ALS)
  const Eigen::VectorXd& statistics;    // items × stride, layout of v_step_statistics, after the noise
  const Eigen::MatrixXd& item_factors;  // V (items × r) solved from them
};

class PrivateAls {
 public:
  // Validates the options (InvalidParameter naming the field) and calibrates the rigorous noise.
  explicit PrivateAls(const AlsOptions& options);
  ~PrivateAls();
  PrivateAls(PrivateAls&&) noexcept;
  PrivateAls& operator=(PrivateAls&&) noexcept;

  const AlsOptions& options() const noexcept { return options_; }
  long releases() const noexcept;  // V-steps per run: T·max(K, 1)
  bool secure() const noexcept;    // false iff options.seed is set
  // The report a run on a catalogue of `items` items will carry (items ≥ 1).
  AlsPrivacyReport privacy_report(Eigen::Index items) const;
  // The one charge train() makes for a rigorous run before any rating is read ("Accounting"), made
  // without training: a caller composing planned runs (a streaming run's refreshes) checks their
  // charges up front, each exactly as the run will make it. Faithful mode: InvalidParameter.
  void charge_run(privacy::PrivacyAccountant& accountant, const std::string& label) const;
  // Refuses (InvalidParameter) a run on `items` items (≥ 1) whose draws the mechanism cannot make —
  // Laplace: more grid steps than its exact sampler takes (laplace_mechanism.hpp) — as the first
  // draw would, after the charge. train() checks it before charging; a caller can before reading data.
  void check_draws(Eigen::Index items) const;

  using ReleaseObserver = std::function<void(const AlsRelease&)>;

  // Trains on `train` (users × items; at least one item). Rigorous: charges `accountant` first (see
  // the contract), then refuses a user with more than ξ ratings (InvalidRow naming her). Faithful:
  // `accountant` must be null (InvalidParameter). The observer, if set, sees every release.
  AlsResult train(const RatingsMatrix& train, const privacy::Budget& budget,
                  const std::string& label = "private als", const ReleaseObserver& observer = {});

 private:
  struct Noise;  // the calibrated mechanism (private_als.cpp)

  AlsOptions options_;
  std::unique_ptr<Noise> noise_;
  std::unique_ptr<privacy::NoiseSource> mechanism_source_;   // the mechanism's noise
  std::unique_ptr<privacy::NoiseSource> algorithm_source_;   // initial V and θ̂ starts
};

}  // namespace dpstream::completion
