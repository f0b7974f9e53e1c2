// Noise calibration: the one place where σ is derived from (ε, δ) or ρ, and where zCDP is converted
// to (ε, δ). Every mechanism and every continual-release strategy calls these functions.
#pragma once

#include "dpstream/privacy/params.hpp"

namespace dpstream::privacy {

// ---- Gaussian mechanism, one release ------------------------------------------------------------

// `paper`: σ = Δ·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1; Analyze Gauss §2). The proof needs
// ε < 1, so ε ≥ 1 is refused with InvalidParameter. With Δ = 1: σ(1, 1e-6) is refused (ε = 1 is not
// < 1); σ(0.1, 1e-5) = 48.4481, and the *formula* value at (1, 1e-6) is 5.298803 (see
// paper_gaussian_multiplier, which evaluates the formula without the domain check).
double paper_gaussian_sigma(double l2_sensitivity, const EpsDelta& target);

// The classical multiplier √(2 ln(1.25/δ))/ε without the ε < 1 check: for reproducing printed
// figures only. Δ_{ε,δ} of Analyze Gauss.
double paper_gaussian_multiplier(const EpsDelta& target);

// Exact privacy profile of the Gaussian mechanism (Balle & Wang 2018, Thm 8): the smallest δ for
// which N(0, σ²) noise on an l2-sensitivity-Δ query is (ε, δ)-DP:
//   δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ).
// ε must be finite and ≥ 0 (δ(0) is the total variation distance). The second term is evaluated as
// exp(ε + log Φ(·)) with a log-erfc that does not underflow when e^ε would overflow (ε > 700).
double analytic_gaussian_delta(double l2_sensitivity, double sigma, double epsilon);

// `tight`, one release: the smallest σ with analytic_gaussian_delta(Δ, σ, ε) ≤ δ (bisection to a
// relative 1e-12). Valid for every ε > 0. σ(Δ=1; 1, 1e-6) = 4.2247.
double analytic_gaussian_sigma(double l2_sensitivity, const EpsDelta& target);

// Dispatch on the calibration.
double gaussian_sigma(double l2_sensitivity, const EpsDelta& target, Calibration calibration);

// ---- zCDP -------------------------------------------------------------------------------------

// The Gaussian mechanism with sensitivity Δ and noise σ is ρ-zCDP with ρ = Δ²/(2σ²) (Bun & Steinke
// 2016, Prop 1.6). Compositions add ρ.
double gaussian_rho(double l2_sensitivity, double sigma);
// Inverse: σ = Δ/√(2ρ).
double gaussian_sigma_for_rho(double l2_sensitivity, double rho);
// Pure ε-DP implies (ε²/2)-zCDP (Bun & Steinke 2016, Prop 1.4).
double pure_epsilon_rho(double epsilon);

// ρ-zCDP ⇒ (ε, δ)-DP, standard bound: ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Prop 1.3).
double epsilon_from_rho_standard(double rho, double delta);

// ρ-zCDP ⇒ (ε, δ)-DP, Canonne, Kamath & Steinke 2020 (Cor 13):
//   δ = inf_{α>1} exp((α−1)(αρ−ε)) · (1−1/α)^{α−1} / α.
// delta_from_rho_cks gives that δ for an ε (ε finite and ≥ 0); epsilon_from_rho_cks the smallest ε for
// a δ in (0, 1). Never larger than the standard bound; clamped at 0 (a negative value means (0, δ)-DP).
// Both minimisations over α are exact (the objectives are unimodal in α; see calibration.cpp), so the
// two functions are inverses of each other. Formula checked against OpenDP's cdp_delta proof and
// Google dp_accounting's RDP → (ε, δ) conversion (references in calibration.cpp).
double delta_from_rho_cks(double rho, double epsilon);
double epsilon_from_rho_cks(double rho, double delta);

// The largest ρ whose CKS conversion is within the budget: epsilon_from_rho_cks(ρ, δ) ≤ ε.
// Used by `tight` calibration of compositions: a mechanism made of k Gaussian releases of
// sensitivity Δ gets σ = gaussian_sigma_for_rho(Δ, rho_for_budget(target) / k).
double rho_for_budget(const EpsDelta& target);

// A share of a budget for mechanisms run one after another and composed by the accountant's zCDP
// bound: the (ε_s, δ_s) whose analytic Gaussian calibration (analytic_gaussian_sigma, any Δ) yields
// σ ≥ Δ/√(2ρ_s) with ρ_s = rho_for_budget(total)/shares, so `shares` such releases together spend at
// most `total` under epsilon_from_rho_cks. Every point of the μ_s-GDP profile (μ_s = √(2ρ_s)) gives
// the same σ; δ_s = total.δ unless that is at or above the profile's δ at ε = 0, where δ_s is halved
// from there. ε_s is rounded down (its σ up), so the share never spends more than ρ_s.
// For callers that calibrate per run (e.g. one model refresh among `shares` planned ones) whose parts
// are not all Gaussian mechanisms; where every part is one, gdp_share_target gives each more.
// shares ≥ 1 (InvalidParameter); total.δ > 0.
EpsDelta zcdp_share_target(const EpsDelta& total, long shares);

// Gaussian DP (Dong, Roth & Su, "Gaussian differential privacy", JRSS-B 2022): a Gaussian mechanism
// with sensitivity Δ and noise σ is μ-GDP with μ = Δ/σ, and its exact (ε, δ) profile is
// analytic_gaussian_delta; μ_i-GDP mechanisms compose, adaptively, to √(Σ μ_i²)-GDP.
// gdp_mu_for_budget: the largest μ whose profile is within `target`, 1/analytic_gaussian_sigma(1, target).
double gdp_mu_for_budget(const EpsDelta& target);
// The ε at which the μ-GDP profile's δ is `delta` (rounded up, so the profile's δ there is ≤ delta;
// 0 where δ(0) ≤ delta). μ finite > 0, δ in (0, 1) (InvalidParameter).
double epsilon_from_gdp(double mu, double delta);
// The μ of each of `shares` equal Gaussian mechanisms composing to gdp_mu_for_budget(total):
// μ_s = μ_total/√shares. At (1, 1e-6) μ_total = 0.2367, where zcdp_share_target's shares compose to
// √(2ρ) = 0.2207 whatever their number (CKS bounds every ρ-zCDP mechanism, not the Gaussian's exact
// profile): each share's σ 7% larger than needed.
double gdp_share_mu(const EpsDelta& total, long shares);
// The share as an (ε_s, δ_s) on the μ_s-GDP profile, as zcdp_share_target (ε_s rounded down, so the
// analytic Gaussian σ for any Δ is ≥ Δ/μ_s). Valid ONLY when every part of the split is a Gaussian
// mechanism (or a composition of them) charged with charge_gaussian: the accountant's GDP bound then
// composes them to `total`; its zCDP bound would not (it refuses the last share).
EpsDelta gdp_share_target(const EpsDelta& total, long shares);

// σ for `releases` Gaussian releases of sensitivity Δ that together must satisfy `target`:
//   paper: basic composition, each release gets (ε/k, δ/k) and paper_gaussian_sigma (so ε/k ≥ 1 is
//          refused);
//   tight: Gaussian DP: the k releases are one Gaussian mechanism of sensitivity Δ√k (μ² adds), so
//          σ = analytic_gaussian_sigma(Δ√k, target), exact for the composition; k = 1 is
//          analytic_gaussian_sigma. Charged release by release (charge_gaussian), the accountant's
//          GDP bound composes them to the target.
// releases must be ≥ 1; δ must be > 0.
double gaussian_sigma_for_composition(double l2_sensitivity, const EpsDelta& target, long releases,
                                      Calibration calibration);

// ---- Binary-tree continual release (Analyze Gauss §4) -----------------------------------------

// Per-node σ of a tree whose every row lies in at most `levels` noised nodes, each node a sum with
// l2 sensitivity Δ (single participation: a row enters one leaf and its ancestors).
//   paper: basic composition over the levels, each node (ε/L, δ/L) with the classical formula —
//          the split behind the paper's log³ variance (Dwork, Talwar, Thakurta & Zhang, "Analyze
//          Gauss", STOC 2014, §4; the paper does not state its split); refused when ε/L ≥ 1.
//   tight: the vector of all node sums is one Gaussian mechanism with sensitivity Δ·√L (each of the
//          L nodes a row touches moves by ≤ Δ), so σ = analytic_gaussian_sigma(Δ√L, target). This is
//          exact for μ-GDP with μ = Δ√L/σ, and stays valid for adaptively chosen rows because the
//          tree is a lower-triangular (causal) factorization and Gaussian mechanisms compose
//          adaptively in GDP (Dong, Roth & Su 2019, Thm 3.2; Denisov et al. 2022, Thm 2.1).
// Pins (Δ = 1, L = 11 i.e. m = 1024, ε = 1, δ = 1e-6): paper 63.07; tight 14.01. The "joint
// classical" √L·Δ_{ε,δ} = 17.57 (the classical formula at the joint sensitivity) is
// tree_node_sigma_joint_classical.
double tree_node_sigma(long levels, double l2_sensitivity, const EpsDelta& target,
                       Calibration calibration);
// √L · Δ · √(2 ln(1.25/δ))/ε: the classical formula applied to the joint sensitivity, for
// reproducing reference tables only (no ε < 1 check, like paper_gaussian_multiplier).
double tree_node_sigma_joint_classical(long levels, double l2_sensitivity, const EpsDelta& target);

}  // namespace dpstream::privacy
