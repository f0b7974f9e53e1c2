// PrivateFrankWolfe: joint-DP matrix completion by private Frank–Wolfe — Jain, Thakkar & Thakurta 2018
// ("Differentially private matrix completion revisited", ICML), Algorithm 1 (and Algorithm 2 as its
// eigensolver), §3.
//
// Problem (Eq. (2)): min_{‖Y‖_nuc ≤ k} F̂(Y) = ‖P_Ω(Y − Y*)‖_F²/(2|Ω|). Frank–Wolfe moves Y toward
// −k·u vᵀ, (u, v) the top singular pair of the residual A = P_Ω(Y − Y*) (§3). The computation is split
// into global and local parts (§1.1.1, §3):
//   aggregator (PrivateFrankWolfe, trusted): W(t) = Σ_i A_i(t)ᵀA_i(t), released as Ŵ(t) = W(t) + N(t);
//     publishes the broadcast (v̂_t, λ̂_t, λ̂′_t): v̂_t, λ̂_t² the top eigenpair of Ŵ(t), λ̂′_t the damped
//     value below.
//   user i (FrankWolfeUser, local, one per user): holds her own observed ratings P_Ω(Y*_i) and her row
//     Y_i; sends A_i(t)ᵀA_i(t) to the aggregator; on each broadcast takes the local step
//       û_i = A_i v̂/λ̂′,   Y_i ← Π_{L,Ω}((1 − η)·Y_i − η·k·û_i·v̂ᵀ)                       (Eq. (3), Alg. 1)
//     with Π_{L,Ω}(M_i) = min{1, L/‖P_Ω(M_i)‖₂}·M_i: the norm of her OBSERVED entries bounds the
//     scale, which applies to the whole row.
// Rounds (iteration 1 of Algorithm 1 is a warm-up): Y_i(1) = 0, so round 1 releases the noisy covariance of the
// (clipped) ratings. Rounds t = 1..T−1 each make one release and one broadcast, and every user applies
// broadcast t to get Y_i(t+1). Y_i(T) is her prediction. The paper's loop also makes a T-th release;
// its eigenpair is never used because the users output at t = T. It is NOT computed here. σ is still
// calibrated and charged for T releases, as the paper does. That is conservative: T−1 are made.
// T − 1 effective FW steps; T = 1 releases nothing and predicts 0.
//   λ̂_t   = √max(λ̂_t², 0)       (λ̂_t² < 0 is possible under noise; clamped)
//   λ̂′_t  = λ̂_t + c·√(σ·ln(n/β))·n^{1/4}   (footnote 2: a bound on ‖N‖₂ that over-estimates λ, so it
//          damps û. c = bias_multiplier ∈ [0, 1], default 1 = faithful. Every term is public, so any c
//          is post-processing and costs no privacy.) When λ̂′ = 0 (only possible with
//          c = 0 or nonprivate, and λ̂ = 0), û = 0: no direction is known.
// Step η for the s-th real step (s = 1..T−1, the step that applies broadcast s, in round t = s + 1):
// paper → 1/T (constant, as printed); standard → 2/(t+1) = 2/(s+2), the textbook schedule counted by
// the ROUND, so η = 2/3 at the first real step. Privacy does not depend on η: Π bounds the iterates
// whatever η is. Why the round and not the real step (η_1 = 1, the other reading): without a
// line search FW is not monotone, and a first full step to the vertex overshoots. Non-private at the
// CI scale below, 2/(s+1) gives 0.060 on 9 of 10 data seeds and 0.146 on one; 2/(t+1) gives
// 0.044–0.065 on 9 of them and 0.083 on the tenth, and matches a reference prototype's figure 0.049
// (its schedule, then, counted rounds). The private cells do not tell the two apart.
// Local state: every update is rank one along a public v̂_s and Π only rescales, so
// Y_i = Σ_s c_{i,s}·v̂_sᵀ. A user stores her coefficients c_i ∈ ℝ^{T−1} (plus P_Ω(Y_i) on her own
// items, at most her rating count), never a dense row. rank(Y) ≤ T − 1, and its rows lie in
// span{v̂_1..v̂_{T−1}} (the paper: "rank of Y(T) is at most T").
// Cost per round: O(Σ_i |Ω_i|²) to accumulate W sparsely (each user's outer product over her own
// items, lower triangle), plus O(n²) for the noise, plus the eigensolver (below). No dense users × items
// matrix is formed. The oja eigensolver forms nothing n × n: O(Γ·|Ω|) per round.
//
// Eigensolver (the top pair of Ŵ(t) is post-processing of the release: any method is private):
//   exact: the dense symmetric n × n Ŵ(t) of the mechanism below. Its top pair (largest algebraic
//     eigenvalue) comes from Lanczos with full reorthogonalisation from a fixed, data-independent start
//     vector, stopped at a Ritz residual ‖Ŵx − θx‖ ≤ 1e-10·max|Ritz value| (≤ ‖Ŵ‖₂), or at an
//     invariant Krylov space, where it is exact. That is the same pair as SelfAdjointEigenSolver's to
//     round-off (tested). It costs O(n²) per product instead of O(n³): at MovieLens' n = 1682 a
//     whole private round costs a small share of one full eigendecomposition (docs/performance.md).
//   oja: pca::PrivateOja (Algorithm 2, §3.2) on the residual rows A_i(t), which have norm ≤ 2L. It
//     makes Γ noisy products Σ_i A_iᵀ(A_i v̂) + g and the eigenvalue ‖A v̂_Γ‖² + N(0, σ²): Γ + 1
//     releases per round, with nothing n × n formed. Its σ is the one calibrated here for all rounds
//     (PrivateOjaOptions::sigma). The λ̂′ bias uses that σ (our reading: §3.2 leaves it open).
//
// Privacy contract
//  * Unit and neighbours: one user, i.e. her whole row of ratings (user-level, §1). Neighbouring
//    rating sets differ by adding/removing one user (add_remove_row, default: the relation behind the
//    paper's constant 64, Thm 3.1) or by replacing one user's ratings (replace_row, Def. 2.1 literally).
//  * Enforced bounds: ‖P_Ω(Y*_i)‖₂ ≤ L for EVERY user. clip_user_rows = true scales a user whose
//    observed ratings have norm > L down to norm L (a per-user map, so privacy is unaffected) and counts
//    her (FrankWolfeResult::users_clipped). With false, a user over L·(1 + 1e-12) is refused with
//    InvalidRow naming her. The 1e-12 round-off allowance moves Δ by a relative 1e-12, at the
//    calibration's own bisection tolerance. Π_{L,Ω} keeps ‖P_Ω(Y_i(t))‖₂ ≤ L after every step. So
//    ‖A_i(t)‖₂ ≤ ‖P_Ω(Y_i(t))‖₂ + ‖P_Ω(Y*_i)‖₂ ≤ 2L. Without either bound the guarantee is void.
//  * Sensitivity of one exact-mode release (frank_wolfe_release_sensitivity). Under adaptive
//    composition the earlier broadcasts are fixed, and every other user's A_j(t) is a function of them
//    and her own ratings. So W(t) moves only by user i's term:
//      add/remove: ‖A_iᵀA_i‖_F = ‖A_i‖₂² ≤ (2L)² = 4L².
//      replace a → b: ‖aaᵀ − bbᵀ‖_F² = ‖a‖⁴ + ‖b‖⁴ − 2(aᵀb)² ≤ 2(2L)⁴, so Δ = 4√2·L² (attained by
//        orthogonal a, b of norm 2L).
//    Ŵ(t) is a bijection of its lower triangle (diagonal included), whose ℓ2 change is ≤ the Frobenius
//    change above, and equal to it for a = 2L·e_j: privacy::covariance_sensitivity with row bound 2L.
//    Oja mode: each product and the eigenvalue have Δ = (2L)² = 4L² under BOTH relations
//    (‖(aaᵀ − bbᵀ)v‖₂ ≤ max(‖a‖², ‖b‖²) for unit v: private_oja.hpp).
//  * Mechanism: exact mode releases Ŵ(t) = W(t) + N(t). N(t) is symmetric: the n(n+1)/2 entries on and
//    below the diagonal are i.i.d. N(0, σ²), drawn column by column (column j, rows j..n−1), and
//    mirrored. The paper prints "i.i.d. entries" (not symmetric). Symmetric noise is the Gaussian
//    mechanism on the lower triangle with the same σ. The released entries are snapped to the
//    grid snap_granularity(σ) (snap.hpp; Mironov 2012 mitigation, as every dpstream mechanism) before
//    the eigensolver. In oja mode PrivateOja snaps each of its releases.
//  * Composition: R adaptively composed Gaussian releases with one Δ and one σ: μ-GDP with
//    μ = Δ·√R/σ (Dong, Roth & Su 2019, Thm 3.2), i.e. one Gaussian mechanism of sensitivity
//    Δ_joint = Δ·√R (joint_sensitivity); zCDP ρ = R·Δ²/(2σ²). R = T (exact) or T·(Γ + 1) (oja), as
//    calibrated (T−1 rounds are made).
//  * Calibration to target (ε, δ), δ > 0:
//      tight: σ = analytic_gaussian_sigma(Δ_joint, target): exactly (ε, δ)-DP for the whole run. Any ε.
//      paper, exact: σ = L²·√(64·T·ln(1/δ))/ε, exactly as Algorithm 1 prints it (natural log). The
//        paper's condition ε ≤ 2·ln(1/δ) is enforced (InvalidParameter naming epsilon). Why it holds
//        (Thm 3.1, zCDP): ρ = T·(4L²)²/(2σ²) = ε²/(8·ln(1/δ)), and ρ + 2√(ρ·ln(1/δ)) = ε²/(8 ln(1/δ)) + ε/√2 ≤
//        ε/4 + 0.71ε < ε under the condition. The printed formula is for add/remove. With replace_row
//        it is SCALED: σ × √2 (64 → 128), which keeps ρ with Δ = 4√2·L².
//      paper, oja: Algorithm 2's σ with its row bound 2L and its Γ replaced by the T·Γ products of the
//        whole run: (2L)²·√(256·T·Γ·ln(2/δ))/ε (pca::paper_oja_sigma). This is our reading of §3.2
//        inside FW, which the paper does not spell out. Valid: ρ = T(Γ+1)·(2L)⁴/(2σ²) ≤
//        ε²/(256·ln(2/δ)), far inside ε (private_oja.hpp). Same condition on ε. No replace scaling is
//        needed (Δ is the same).
//  * Guarantee: the public output, the sequence of broadcasts (v̂_t, λ̂_t, λ̂′_t) and everything a
//    RoundObserver sees (Ŵ(t) is the release, the rest its post-processing), is (ε, δ)-DP for
//    `target`. User i's prediction Y_i(T) is a deterministic function of the broadcasts and her own
//    ratings (FrankWolfeUser, rebuild_user_predictions). By the billboard argument (§3), the outputs
//    to all OTHER users are (ε, δ)-DP in user i's data: (ε, δ)-JOINT DP (Kearns et al. 2014; paper
//    Thm 3.1). Her own predictions depend on her ratings without noise: they are hers, not private
//    from her, and must not be published.
//  * Trusted-curator view: FrankWolfeResult::trusted_user_coefficients / predict() hold EVERY user's
//    row. They exist to evaluate and simulate on one machine. Publishing them (or the completed matrix)
//    is NOT covered by the guarantee and breaks joint DP. So is users_clipped, an unnoised
//    count of the private data.
//  * Accounting: train() charges the budget's accountant (if accounted) ONCE for the whole run BEFORE any rating is
//    read: charge_gaussian(label, Δ_joint, σ, target), i.e. ρ = R·Δ²/(2σ²). BudgetExhausted means
//    nothing was read or drawn. A run refused afterwards (a user over L without clipping) keeps its
//    charge: conservative.
//  * Noise: options.seed set → a SeededNoiseSource: reproducible, NOT secure (tests and replay only).
//    Unset → the secure source (make_secure_noise_source). The object owns its source across runs, so
//    two runs of one object draw different noise, and two objects with the same seed agree bitwise.
//  * nonprivate = true: σ = 0, no noise, no bias, no snapping. The SAME algorithm otherwise (clipping
//    and Π included): the non-private baseline of the reference tables below, NOT private. It refuses an
//    accountant and needs the exact eigensolver (InvalidParameter).
//
// Utility (§3.1, Thm 3.2): F̂(Y(T)) = O(k²/(|Ω|T) + k·T^{1/4}·L·√(√n·√ln(1/δ)·ln n)/(|Ω|√ε)).
// Synthetic CI scale (the §4 synthetic set scaled down; m = 1e5, n = 100, 20 ratings per user, oracle k,
// L = √20, T = 10, paper σ, c = 1). Test RMSE, reference prototype / this implementation (3 seeds,
// tests/test_private_frank_wolfe.cpp):
//   step 1/T:      non-private 0.139 / 0.134   ε = 1: 0.290 / 0.292   ε = 5: 0.239 / 0.241
//   step 2/(t+1):  non-private 0.049 / 0.060   ε = 1: 0.285 / 0.281   ε = 5: 0.206 / 0.209
//   (seeds 100–102, which hold the data seed where 2/(s+1) overshoots: 0.059 / 0.281 / 0.206)
// One training takes ≈ 0.25 s there, and < 1 s at MovieLens-100K's size (n = 1682, T = 10; 2 cores).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/completion/ratings_matrix.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/privacy_spec.hpp"

namespace dpstream::pca {
class PrivateOja;
}

namespace dpstream::completion {

// η of the s-th real step: paper 1/T (Algorithm 1 as printed); standard 2/(s+2), i.e. 2/(t+1) in round t.
enum class FrankWolfeStep { paper, standard };
// How the aggregator finds the top eigenpair of each round's release (header comment).
enum class FrankWolfeEigensolver { exact, oja };

const char* to_string(FrankWolfeStep step) noexcept;                // "paper" | "standard"
const char* to_string(FrankWolfeEigensolver eigensolver) noexcept;  // "exact" | "oja"
// The inverses; any other text: InvalidParameter naming it and the accepted names.
FrankWolfeStep parse_frank_wolfe_step(const std::string& text);
FrankWolfeEigensolver parse_frank_wolfe_eigensolver(const std::string& text);

struct FrankWolfeOptions {
  double nuclear_norm_bound = 1.0;  // k > 0: the nuclear-norm ball of Eq. (2) (NOT a rank)
  int iterations = 10;              // T ≥ 1: rounds as the paper counts them (T − 1 real steps)
  // The target is for the whole run (δ > 0); row_norm_bound is L, the bound on each user's
  // ‖P_Ω(Y*_i)‖₂ (finite > 0, (2L)² normal); the noise's seed (set: reproducible, NOT secure).
  privacy::PrivacySpec privacy;
  FrankWolfeStep step = FrankWolfeStep::paper;
  double bias_multiplier = 1.0;      // c ∈ [0, 1] on λ̂′'s bias term; 1 = faithful (post-processing)
  // β ∈ (0, 1) in ln(n/β). The paper gives no value; 0.01 reproduces the reference prototype table best
  // (0.1 lowers the private RMSEs by ≈ 0.003–0.006).
  double failure_probability = 0.01;
  FrankWolfeEigensolver eigensolver = FrankWolfeEigensolver::exact;
  int oja_iterations = 10;           // Γ ≥ 1: Oja steps per round (oja eigensolver only)
  bool clip_user_rows = true;        // true: scale users over L down to L (counted); false: refuse them
  bool nonprivate = false;           // σ = 0: the non-private baseline (header); NOT private
};

// Δ of one exact-mode release Ŵ(t) for users with ‖P_Ω(Y*_i)‖₂ ≤ L: 4L² (add/remove) or 4√2·L²
// (replace); derivation in the header. L finite > 0, else InvalidParameter.
double frank_wolfe_release_sensitivity(privacy::Neighbours relation, double row_norm_bound);

// Algorithm 1's σ exactly as printed: L²·√(64·T·ln(1/δ))/ε, times √2 for replace_row (header). Throws
// InvalidParameter unless ε ≤ 2·ln(1/δ) (naming epsilon), δ > 0, T ≥ 1 and L finite > 0.
// Pins (L² = 80, T = 10, δ = 1e-6, add/remove): ε = 0.1 → 75225.2, 0.5 → 15045.0, 1 → 7522.5,
// 2 → 3761.3, 5 → 1504.5.
double paper_frank_wolfe_sigma(double row_norm_bound, int iterations, const privacy::EpsDelta& target,
                               privacy::Neighbours relation = privacy::Neighbours::add_remove_row);

// η of the s-th real step (1 ≤ s ≤ T − 1): 1/T or 2/(s+2). Out of range: InvalidParameter.
double frank_wolfe_step_size(FrankWolfeStep step, int iterations, int real_step);

// One public release of the aggregator: everything in it is (ε, δ)-DP (post-processing of Ŵ(t)).
struct FrankWolfeBroadcast {
  int round = 0;                 // t = 1..T−1
  Eigen::VectorXd direction;     // v̂_t: unit n-vector, the top eigenvector of Ŵ(t) (sign arbitrary)
  double top_eigenvalue = 0.0;   // λ̂_t²: the top eigenvalue of Ŵ(t) as computed (may be < 0)
  double singular_value = 0.0;   // λ̂_t = √max(λ̂_t², 0): estimates ‖A(t)‖₂
  double damped_singular_value = 0.0;  // λ̂′_t = λ̂_t + c·√(σ ln(n/β))·n^{1/4}: divides û in the next step
};

// What a RoundObserver sees after round t's release, before the users apply it. Everything here is
// released (nonprivate mode: nothing is private at all).
struct FrankWolfeRound {
  const FrankWolfeBroadcast& broadcast;
  // exact eigensolver: Ŵ(t) as released, symmetric n × n, snapped (nonprivate: the exact W(t)).
  // oja eigensolver: null (no n × n matrix exists).
  const Eigen::MatrixXd* released_gram = nullptr;
};

// User i's side of Algorithm 1 (A_local): her own observed ratings and her row Y_i, nothing else. Her
// state after s broadcasts is a deterministic function of those s broadcasts and her ratings. train()
// runs exactly this code for every user, so a FrankWolfeUser fed the recorded broadcasts reproduces her
// trusted-curator row bitwise.
class FrankWolfeUser {
 public:
  // Reads only row `user` of `ratings` (user in range, else InvalidParameter). Validates `options`
  // like PrivateFrankWolfe. Applies the user-level bound: clip_user_rows → her ratings scaled to
  // norm L when over L (clipped() is then true); otherwise a norm over L·(1 + 1e-12) throws InvalidRow
  // naming `user`.
  FrankWolfeUser(const FrankWolfeOptions& options, const RatingsMatrix& ratings, Eigen::Index user);

  Eigen::Index user() const noexcept { return user_; }
  bool clipped() const noexcept { return clipped_; }
  int steps() const noexcept { return steps_; }  // broadcasts applied
  const std::vector<Eigen::Index>& items() const noexcept { return items_; }  // Ω_i, ascending
  const Eigen::VectorXd& ratings() const noexcept { return ratings_; }  // P_Ω(Y*_i) on items(), clipped
  // P_Ω(Y_i) on items(): ‖·‖₂ ≤ L after every step (Π_{L,Ω}).
  const Eigen::VectorXd& observed_predictions() const noexcept { return observed_predictions_; }
  // A_i = P_Ω(Y_i − Y*_i) on items(): ‖·‖₂ ≤ 2L.
  Eigen::VectorXd residual() const { return observed_predictions_ - ratings_; }
  // c_i: Y_i = Σ_s c_s·v̂_sᵀ over the broadcasts applied (length steps()).
  Eigen::Map<const Eigen::VectorXd> coefficients() const noexcept { return {coefficients_.data(), steps_}; }

  // Her message to the aggregator: adds A_iᵀA_i to the entries ON AND BELOW the diagonal of `gram`
  // (n × n; the strictly upper part is not touched). Only her items' rows and columns change.
  void add_contribution(Eigen::MatrixXd& gram) const;
  // The local step with broadcast s (header). broadcast.round must be steps() + 1 and the direction
  // have n entries, else InvalidParameter.
  void apply(const FrankWolfeBroadcast& broadcast);
  // Y_i on every item (n-vector), from her coefficients and the broadcasts she applied (the first
  // steps() of `broadcasts`; fewer: InvalidParameter). Bitwise what FrankWolfeResult::predict gives.
  Eigen::VectorXd predictions(const std::vector<FrankWolfeBroadcast>& broadcasts) const;

 private:
  Eigen::Index user_;
  Eigen::Index items_count_;  // n
  double nuclear_norm_bound_;
  double row_norm_bound_;
  int iterations_;
  FrankWolfeStep step_;
  bool clipped_ = false;
  int steps_ = 0;
  std::vector<Eigen::Index> items_;
  Eigen::VectorXd ratings_;
  Eigen::VectorXd observed_predictions_;
  Eigen::VectorXd coefficients_;  // T − 1 slots, the first steps_ used
};

// User `user`'s predicted row Y_user(T) on all items, rebuilt from the PUBLIC broadcasts and HER OWN
// ratings (only row `user` of `ratings` is read): what she computes on her device. Equal bitwise to
// the trusted-curator row of the run that produced `broadcasts` on ratings with the same row `user`
// (and the same options). Errors as FrankWolfeUser's constructor and apply().
Eigen::VectorXd rebuild_user_predictions(const FrankWolfeOptions& options, const RatingsMatrix& ratings,
                                         Eigen::Index user, const std::vector<FrankWolfeBroadcast>& broadcasts);

struct FrankWolfeResult {
  // ---- public: (ε, δ)-DP ----
  std::vector<FrankWolfeBroadcast> broadcasts;  // rounds 1..T−1, in order
  Eigen::Index items = 0;        // n, the catalogue size (public: the matrix's shape)
  double sigma = 0.0;            // σ of every Gaussian release (0: nonprivate)
  double bias = 0.0;             // c·√(σ ln(n/β))·n^{1/4}, added to every λ̂
  long releases_calibrated = 0;  // R: releases σ is calibrated and charged for (T or T·(Γ+1); 0 nonprivate)

  // ---- TRUSTED-CURATOR VIEW: not private, never publish (header "Trusted-curator view") ----
  std::uint64_t users_clipped = 0;  // users whose ratings were scaled down to L
  // users × (T−1): row i is user i's local coefficients c_i, so Y = C·V̂ with V̂'s rows the directions.
  Eigen::MatrixXd trusted_user_coefficients;
  // Y_user(T) at `item`: user `user`'s own local prediction (bitwise FrankWolfeUser::predictions).
  // Indices out of range: InvalidParameter.
  double predict(Eigen::Index user, Eigen::Index item) const;
};

class PrivateFrankWolfe {
 public:
  // Validates the options (InvalidParameter naming the field) and calibrates σ.
  explicit PrivateFrankWolfe(const FrankWolfeOptions& options);
  ~PrivateFrankWolfe();
  PrivateFrankWolfe(PrivateFrankWolfe&&) noexcept;
  PrivateFrankWolfe& operator=(PrivateFrankWolfe&&) noexcept;

  const FrankWolfeOptions& options() const noexcept { return options_; }
  double sigma() const noexcept { return sigma_; }  // 0 when nonprivate
  long releases() const noexcept;                    // R (header "Composition"); 0 when nonprivate
  double release_sensitivity() const noexcept { return release_sensitivity_; }  // Δ of one release
  double joint_sensitivity() const noexcept;         // Δ·√R: the Δ charged to the accountant
  double bias(Eigen::Index items) const;             // c·√(σ ln(n/β))·n^{1/4}; items ≥ 1
  bool secure() const noexcept;                      // false iff options.seed is set (or nonprivate)
  // The one charge train() makes before any rating is read, made without training: a caller
  // composing planned runs (a streaming run's refreshes) checks their charges up front, each exactly
  // as the run will make it. A nonprivate learner charges nothing: InvalidParameter.
  void charge_run(privacy::PrivacyAccountant& accountant, const std::string& label) const;

  using RoundObserver = std::function<void(const FrankWolfeRound&)>;

  // Runs Algorithm 1 on `ratings` (users × items, at least one item). Charges `accountant` first (see
  // the contract; nonprivate refuses one), then reads the ratings.
  FrankWolfeResult train(const RatingsMatrix& ratings, const privacy::Budget& budget,
                         const std::string& label = "private frank-wolfe", const RoundObserver& observer = {});

 private:
  FrankWolfeOptions options_;
  double release_sensitivity_;
  double sigma_;
  std::unique_ptr<privacy::NoiseSource> noise_;  // exact eigensolver: the noise of Ŵ(t)
  std::unique_ptr<pca::PrivateOja> oja_;         // oja eigensolver (owns its own source)
};

}  // namespace dpstream::completion
