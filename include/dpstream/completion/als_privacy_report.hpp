// What a noisy ALS / IRLS run (private_als.hpp) claims and what it really spends: the privacy report
// of the algorithms of Gowtham, Gokularam, Tholeti & Kalyani, "Introducing the Huber mechanism for
// differentially private low-rank matrix completion" (arXiv 2022; §2.2, Table 1), in both modes.
//
// The two modes report different things, and only one of them is a guarantee:
//  * faithful: the paper as printed. The paper states ε for ONE noise draw (Table 1) with an assumed
//    sensitivity Δf = 5 and never composes it, although the V-step draws an r-vector per item
//    per release: n·T draws (ALS) or n·T·K (IRLS). The report shows the per-draw figure (natural log,
//    and the paper's log10 Gaussian figure in Table 1), and what those draws compose to IF Δf were their
//    sensitivity. It is not: the noised sum Σ_i x_ij u_i has unbounded sensitivity, since nothing is
//    clipped, and the Gram matrix is not noised at all (Algorithms 1 and 3). So every faithful figure is
//    conditional on an assumption that does not hold: `proven` is false and the true ε is unbounded.
//  * rigorous: a mechanism with a proof (private_als.hpp "Privacy contract, rigorous mode"). Its
//    figures are guarantees for one user (user-level), calibrated to the options' target.
#pragma once

#include <string>

#include <Eigen/Core>

namespace dpstream::completion {

// The noise added in the V-step. `none` is vanilla ALS/IRLS (faithful mode only).
enum class AlsMechanism { none, gaussian, laplace, huber };
// faithful: the paper's Algorithms 1–3 as printed; rigorous: clipped, Gram and RHS noised, accounted.
enum class AlsMode { faithful, rigorous };

const char* to_string(AlsMechanism mechanism) noexcept;  // "none" | "gaussian" | "laplace" | "huber"
const char* to_string(AlsMode mode) noexcept;            // "faithful" | "rigorous"
// The inverses; any other text: InvalidParameter naming it.
AlsMechanism parse_als_mechanism(const std::string& text);
AlsMode parse_als_mode(const std::string& text);

// All ε below are natural-log (ε, δ)-DP figures; +inf where a figure does not exist (no noise, or a
// conversion needing δ > 0 when δ = 0); NaN where a field does not apply to the mechanism.
struct AlsPrivacyReport {
  AlsMode mode = AlsMode::faithful;
  AlsMechanism mechanism = AlsMechanism::none;
  // True only in rigorous mode: the figures are proven bounds. Faithful figures assume Δf (see top).
  bool proven = false;

  // V-step noise releases per run: T (ALS, irls_iterations = 0) or T·K (IRLS). Counted with or
  // without noise.
  long releases = 0;
  // Independent noise vectors drawn, each a separate mechanism invocation: faithful n·releases
  // (one r-vector per item per release); rigorous `releases` (one vector over all items per
  // release); 0 without noise.
  long draws = 0;
  // Coordinates of one draw: faithful r (the RHS of one item); rigorous n·(r(r+1)/2 + r) (every item's
  // Gram upper triangle and RHS).
  Eigen::Index coordinates_per_draw = 0;

  // Sensitivity of one draw. faithful: the paper's assumed Δf (used as ℓ1 and ℓ2, Table 1);
  // rigorous: the derived Δ of one release, ℓ2 for Gaussian, ℓ1 for Laplace/Huber (private_als.hpp).
  double sensitivity = 0.0;
  double noise_scale = 0.0;        // σ (Gaussian), b (Laplace), s (Huber: noise s·h, h ~ Huber(α)); 0 for none
  double huber_noise_alpha = 0.0;  // α of the Huber noise; NaN for the other mechanisms
  double noise_variance = 0.0;     // per coordinate: σ², 2b², s²·Var(α); 0 for none

  // δ of every Gaussian figure and of every zCDP conversion: faithful options.report_delta (paper
  // Table 1: 1e-5), rigorous options.target.delta().
  double delta = 0.0;
  // ε of one draw. faithful Gaussian: √(2 ln(1.25/δ))·Δf/σ (the formula with the natural log);
  // Laplace Δf/b; Huber α·Δf/s (Thm 2.1). rigorous: ε of one release at δ (Gaussian: the analytic
  // profile of Δ/σ; pure: ε/releases).
  double per_draw_epsilon = 0.0;
  // The figure the paper's Table 1 prints for this draw: Gaussian with log10 in place of ln (a
  // factor √(ln 10) ≈ 1.517 below the formula); Laplace and Huber as per_draw_epsilon. Faithful only
  // (NaN in rigorous mode).
  double per_draw_epsilon_as_printed = 0.0;

  // Basic composition over all draws: Σ ε, Σ δ (Dwork & Roth Thm 3.16); Σ δ may exceed δ or even 1.
  double composed_epsilon_basic = 0.0;
  double composed_delta_basic = 0.0;
  // zCDP over all draws: ρ = Σ Δ²/(2σ²) (Gaussian) or Σ ε²/2 (pure, Bun & Steinke Prop 1.4),
  // converted at δ with the CKS 2020 bound (privacy/calibration.hpp).
  double rho = 0.0;
  double composed_epsilon_zcdp = 0.0;
  // Gaussian only: the exact profile of the composed mechanism, μ-GDP with μ = Δ·√draws/σ (Dong, Roth
  // & Su 2019), at δ. NaN otherwise.
  double composed_epsilon_gdp = 0.0;

  // What the run spends by the best valid bound:
  //  faithful: the smallest composed figure whose δ is within `delta` (basic only when Σ δ ≤ δ, i.e.
  //    for pure mechanisms; zCDP; GDP) — conditional on Δf, NOT a guarantee (`proven` false);
  //    +inf for none.
  //  rigorous: the accountant's figure for this run's single charge (private_als.hpp "Accounting"):
  //    the target ε, at δ_spent = target.δ (Gaussian) or 0 (pure).
  double epsilon_spent = 0.0;
  double delta_spent = 0.0;
};

}  // namespace dpstream::completion
