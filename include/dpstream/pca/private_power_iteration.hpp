// Private power iteration (PPI) and rank-k approximation by deflation: Hardt & Roth 2013, "Beyond
// worst-case analysis in private singular vector computation" (HR13, STOC 2013).
//
// PPI (HR13 Fig 2), exactly as printed, on a symmetric n × n matrix A:
//   σ = 2ε⁻¹√(4T ln(1/δ));  x_0 = g_0 ~ N(0, 1/n)^n (not normalised);
//   for t = 1..T: (a) if ‖x_{t−1}‖∞² > C/n: stop and output "fail";
//                 (b) g_t ~ N(0, Cσ²/n)^n;  (c) x'_t = A x_{t−1} + g_t;  (d) x_t = x'_t/‖x'_t‖₂.
//   Output x_T.
// The check (a) runs on x_{t−1} before A x_{t−1} is formed, for every t including t = 1 (x_0), and
// reads only x_{t−1}, which is x_0 (data-independent) or post-processing of the release x'_{t−1}: the
// fail outcome costs nothing extra (HR13 Lemma 3.4). It is what makes PPI private for EVERY input;
// coherence only decides whether a run fails (utility), never the privacy.
//
// Rank k (HR13 Fig 3): k PPI runs on A_0 = A, A_i = A_{i−1} − σ̂_i v_i v_iᵀ, with a Laplace estimate
// σ̂_i of the i-th singular value. The OUTPUT is B_k = Σ σ̂_i v_i v_iᵀ (Fig 3 says "A_k", the residual
// A − B_k, which is raw data minus a release and must never be released; HR13 §5's theorems bound the
// error of this rank-k output B_k).
//
// Privacy contract
//  * Neighbouring relation (HR13 Def 2.1, entry level): A − A' = α e_s e_tᵀ with |α| ≤ 1, one entry
//    of the matrix as given changes by at most 1. Scaling is the caller's (ratings in 1..5: divide
//    by 5). A symmetric input cannot change in one off-diagonal entry and stay symmetric: when one
//    record is an entry together with its mirror (an undirected edge, A − A' = α(e_s e_tᵀ + e_t e_sᵀ)),
//    set unit = EntryChange::mirrored_pair, which multiplies the Gaussian sensitivities by √2 and
//    ‖A‖₁'s by 2. The default single_entry is the paper's relation and does NOT cover such a pair.
//    Rectangular A (m × d) uses the dilation B = [[0, A], [Aᵀ, 0]] (N = m + d): one entry of A is two
//    entries of B. This relation is weaker than HR12's row level: using PPI for row-level privacy
//    is invalid (a row change moves (A − A')x by up to ‖x‖ = 1, not ‖x‖∞).
//  * Sensitivity of one round: after (a), ‖(A − A')x‖₂ = |α|·|x[t]| ≤ ‖x‖∞ ≤ √(C/n) for x = x_{t−1};
//    ×√2 for mirrored pairs and for the dilation (‖(B − B')x‖₂ ≤ √2‖x‖∞ ≤ √(2C/N), HR13
//    §2.2: cheaper than Fact 2.8's halving of (ε, δ), which would double σ). So a round is a
//    Gaussian mechanism with sensitivity-to-noise ratio s/σ, s = 1 or √2, and noise std √(C/n)·σ.
//    The σ̂ releases have l1 sensitivity 1 in every case: |‖Av‖ − ‖A'v‖| ≤ |α v_t| ≤ 1,
//    |vᵀ(A − A')v| ≤ |α|·|v_s v_t| ≤ 1 (mirrored: 2|v_s v_t| ≤ v_s² + v_t² ≤ 1), |ûᵀ(A − A')v̂| ≤ 1.
//    Deflation subtracts released values only, so A_{i−1} − A'_{i−1} = A − A' (adaptive composition).
//  * Calibration
//      paper: Fig 2's σ = s·2ε⁻¹√(4T ln(1/δ)) (δ < 1/2, HR13 Thm 2.6); rank k: Fig 3's
//             ε' = ε/√(4k ln(1/δ)), δ' = δ/k for every PPI run and Laplace(1/ε') for every σ̂.
//             As printed it is valid but ~4× conservative: T rounds compose to μ = √T·s/σ =
//             ε/(4√ln(1/δ)) Gaussian DP, whose exact ε at δ is 0.26·ε at δ = 1e-6 (exact
//             Gaussian privacy profile, Balle & Wang 2018).
//      tight: the planned rounds (T, or k·T for rank k) compose EXACTLY to one μ-GDP mechanism
//             (Dong, Roth & Su 2019, Cor 3.3; valid for adaptive rounds), calibrated to the budget
//             with the exact Gaussian profile: σ = s·√(rounds)·analytic_gaussian_sigma(1, target).
//             Rank k: value_share·ε goes to the k Laplace σ̂ releases (value_share·ε/k each, basic
//             composition) and the rest to the Gaussian rounds. At ε = 1, δ = 1e-6, T = 37: σ = 25.7 (paper 90.4).
//      Both: when T is chosen privately (iterations unset), iteration_share·ε is spent first on
//      ‖A‖₁ + Laplace and the rest is what the above is calibrated to (basic composition).
//  * Guarantee and accounting: (ε, δ)-DP for the whole call w.r.t. the relation above. The budget's
//    accountant (if accounted) is charged for the WHOLE call before A is read, atomically (nothing is charged if
//    any charge would be refused): one Gaussian charge for all planned rounds (sensitivity
//    s·√(rounds), noise σ: its ρ, and its single-release claim = the exact GDP ε at δ — paper — or
//    the calibration target — tight), one pure charge per σ̂ release and one for the ‖A‖₁ release.
//    A run that fails early has spent what was charged for it (the fail output is a release).
//  * Released values are snapped to a power-of-two grid at the noise scale (snap.hpp) before
//    normalisation; the Laplace releases are snapped by LaplaceMechanism.
//
// Utility (HR13 Thm 4.4, not asserted as a bound here — constants are not given):
// with C ≥ 16 μ(A) ln n no run fails with probability 1 − 1/n (Lemma 4.3), and in practice the error
// follows the quadratic law E[σ₁ − ‖A x_T‖] ≈ Cσ²/(2σ₁) (a first-order
// estimate for the last round of Fig 2, not a bound of the paper). 16 μ ln n exceeds n for
// n ≲ 10⁴, where an empirical C or the private doubling search (coherence.hpp) is the usable choice.
//
// Iterations: HR13 prints T = 4 log σ₁(A) (Lemma 3.5, Thm 4.4). The proof of Lemma 3.1 needs
// T = (4/γ) ln σ_k for a gap σ_{k+1} ≤ (1 − γ)σ_k, and Cor 3.2 (γ' = γ/(4k)) T = (16k/γ) ln σ₁
// (the printed T lacks the 1/γ): paper_iteration_count and proof_iteration_count. Logs are natural.
// σ₁ is sensitive: Remark 4.5 bounds it privately by ‖A‖₁ = Σ|A_ij| (l1 sensitivity 1; 2 for
// mirrored pairs) + Laplace, see private_iteration_count. σ₁ ≤ ‖A‖_F ≤ ‖A‖₁ ≤ √(md)·‖A‖_F ≤
// √(md·rank)·σ₁ for m × d, so this T overshoots 4 ln σ₁ by at most 2 ln(md·rank) (+ the noise
// margin): about 30 extra rounds at n = 1000.
//
// Rectangular input (HR13 §2.2, Fact 2.8; Lemma B.3): PPI runs on the dilation, whose eigenvalues are
// ±σ_i. Its top vector is x = (a u₁, b v₁) with a, b arbitrary, and Fig 3 on the dilation cannot
// remove ±σ₁ with one rank-1 step: the residual stays ≥ σ₁ (≈ 1.5σ₁ in a reference prototype's
// example, there quoted as "3σ₂"). So A itself is deflated, A_i = A_{i−1} − σ̂_i û_i v̂_iᵀ with û, v̂
// the normalised halves of x and σ̂_i = û_iᵀA_{i−1}v̂_i + Laplace (signed; û_i is flipped so that σ̂_i ≥ 0).
// Halves (HalfVectors): the half with the small amplitude (a or b near 0, 0.057 in prototype runs) is
// mostly noise in x_T alone. Because B x_{T−1} = (A x_{T−1,bottom}, Aᵀ x_{T−1,top}), the halves
// of x_{T−1} and x_T carry the SAME directions with swapped amplitudes; last_two_iterates (default)
// combines them weighted by their norms (maximum-ratio combining), so every half has amplitude
// ≈ √(a² + b²) = 1. Pure post-processing of released iterates: no privacy cost. last_iterate is the
// plain recipe (x_T's halves alone). With T = 1 both use x_T alone (x_0 is pure noise).
// last_two_iterates also fixes the relative sign (ûᵀAv̂ > 0 unless the noise dominates); with
// last_iterate it is arbitrary. Rank k folds the sign of σ̂ into û either way.
//
// General symmetric input: the paper's σ̂ = ‖A_{i−1}v_i‖ + Lap is positive, so deflation is wrong on
// a negative eigenvalue (HR13 Lemma B.3 silently assumes the top eigenvalues positive); the default
// SingularValueEstimate::rayleigh releases the signed v_iᵀA_{i−1}v_i + Lap instead.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::pca {

// What one record changes in a symmetric input (rectangular input is always one entry of A).
enum class EntryChange {
  single_entry,   // A − A' = α e_s e_tᵀ, |α| ≤ 1 (HR13 Def 2.1): sensitivity factor 1
  mirrored_pair,  // A − A' = α(e_s e_tᵀ + e_t e_sᵀ) (s ≠ t) or α e_s e_sᵀ, |α| ≤ 1: factor √2
};

// How σ̂_i is released for symmetric input (rectangular input always uses ûᵀAv̂, signed).
enum class SingularValueEstimate {
  norm,      // ‖A_{i−1}v_i‖ + Lap (HR13 Fig 3 as printed; correct only for PSD-like input)
  rayleigh,  // v_iᵀA_{i−1}v_i + Lap: signed, correct for every symmetric input
};

// Rectangular input: where û, v̂ come from (see the header comment).
enum class HalfVectors { last_iterate, last_two_iterates };

const char* to_string(EntryChange unit) noexcept;

struct PpiOptions {
  // Target and calibration only, not a PrivacySpec: the unit is an entry change (EntryChange), not a
  // row of bounded norm, and the noise is the caller's source.
  privacy::EpsDelta target{1.0, 1e-6};  // for the whole call
  privacy::Calibration calibration = privacy::Calibration::tight;
  // T ≥ 1. Unset: T = paper_iteration_count(σ̂₁) with σ̂₁ from private_iteration_count (dense input
  // only), spending iteration_share·ε of the budget first.
  std::optional<long> iterations;
  double iteration_share = 0.05;  // in (0, 1); used only when iterations is unset
  // C > 0: the coherence bound of the check (a) and the noise level √(C/n)·σ. Not read by the
  // doubling search (coherence.hpp), which sets it.
  double coherence_bound = 0.0;
  EntryChange unit = EntryChange::single_entry;  // symmetric input only
  // Rank k only (private_rank_k*):
  long k = 1;  // 1 ≤ k ≤ dimension
  SingularValueEstimate estimate = SingularValueEstimate::rayleigh;
  // tight only: the share of ε (after the iteration share) spent on the k σ̂ releases, in (0, 1).
  // The σ̂ error (~k/(share·ε)) is small next to the vector error (~√C·σ per component), so the
  // Gaussian rounds get most of the budget.
  double value_share = 0.1;
  HalfVectors halves = HalfVectors::last_two_iterates;  // rectangular input only
};

// y = A x for a symmetric n × n A held by the caller (sparse, streamed, implicit). The caller vouches
// that it is symmetric and that one record changes it as `PpiOptions::unit` says. `apply` is called
// only with vectors that passed the check (a) (plus, for rank k, with the released v_i for σ̂_i).
struct SymmetricOperator {
  Eigen::Index dimension = 0;
  std::function<void(const Eigen::VectorXd& x, Eigen::VectorXd& y)> apply;
};

// One PPI run, everything computed from released values only (post-processing, free to read).
struct PpiTrace {
  // n·‖x_t‖∞² for t = 0, 1, … up to the last iterate formed (x_T included, though (a) checks only
  // t < T). On a failed run the last entry is the one that exceeded C.
  std::vector<double> coherence;
  // ‖x'_t‖₂ for t = 1, …: the norms of the Gaussian releases (≈ ‖A x_{t−1}‖ + noise).
  std::vector<double> norms;
  bool failed = false;
  long failed_round = 0;  // the t whose check on x_{t−1} fired (1 ≤ t ≤ T), 0 if none
};

// The private T of Remark 4.5.
struct IterationCount {
  long iterations = 0;         // paper_iteration_count(sigma1_upper)
  double l1_release = 0.0;     // ‖A‖₁ + Lap(Δ₁/ε₀), snapped
  double sigma1_upper = 0.0;   // l1_release + (Δ₁/ε₀)·ln(500): ≥ ‖A‖₁ ≥ σ₁ except with prob. 1e-3
  double epsilon = 0.0;        // ε₀ spent
};

struct PpiResult {
  // Symmetric input: n × k' with the released unit vectors (x_T of each completed run, in deflation
  // order). Rectangular input: v̂_i (d × k'), the right singular vectors.
  Eigen::MatrixXd vectors;
  Eigen::MatrixXd left_vectors;  // rectangular input: û_i (m × k'); empty for symmetric input
  // σ̂_1 … σ̂_k' (rank k only; empty for a single PPI run, which releases none). Symmetric input with
  // the rayleigh estimate: signed eigenvalue estimates. Rectangular: ≥ 0.
  Eigen::VectorXd values;
  bool releases_values = false;  // true for rank k (values has one σ̂ per completed component)
  bool failed = false;
  long failed_component = 0;   // 1-based component whose run failed (0: none); k' = it − 1
  long failed_round = 0;       // its failed round
  std::vector<PpiTrace> traces;  // one per PPI run made

  // Calibration actually used.
  long iterations = 0;             // T
  double coherence_bound = 0.0;    // C
  double sigma = 0.0;              // Fig 2's σ (× s): noise_std = √(C/n)·σ
  double round_sensitivity = 0.0;  // s·√(C/n): max ‖(A − A')x_{t−1}‖₂ after the check
  double noise_std = 0.0;          // per-coordinate std of g_t
  double gdp_mu = 0.0;             // μ of all planned Gaussian rounds of the call (√rounds·s/σ)
  double value_epsilon = 0.0;      // ε of each σ̂ release (rank k), Laplace scale 1/value_epsilon
  std::optional<IterationCount> iteration_count;  // set when T was chosen privately

  // The same released subspace in the shape every pca/ method shares: orthonormalised vectors
  // (rectangular: v̂), ordered by |σ̂| descending when values are released, values = σ̂² (the
  // eigenvalues of AᵀA); method "ppi".
  PrivateSubspace subspace;

  // max_t n‖x_t‖∞² over every run (0 if none).
  double max_coherence() const;
  // B_k = Σ σ̂_i v_i v_iᵀ (symmetric) or Σ σ̂_i û_i v̂_iᵀ (rectangular) over the completed components.
  // Throws InvalidParameter for a single PPI run (no σ̂ released).
  Eigen::MatrixXd approximation() const;
};

// ---- Calibration helpers ------------------------------------------------------------------------

// Fig 2's σ for `rounds` Gaussian rounds at `target` with unit sensitivity factor s (1 or √2):
//   paper: s·2ε⁻¹√(4·rounds·ln(1/δ)) (δ must be in (0, 1/2));  σ(37; 1, 1e-6) = 90.44.
//   tight: s·√rounds·analytic_gaussian_sigma(1, target);        σ(37; 1, 1e-6) = 25.70.
double ppi_sigma(long rounds, const privacy::EpsDelta& target, privacy::Calibration calibration,
                 double unit_sensitivity = 1.0);
// The exact ε of a μ-GDP mechanism at δ (Dong, Roth & Su 2019, Cor 2.13, = the Gaussian profile of
// analytic_gaussian_delta with Δ/σ = μ): the smallest ε ≥ 0 with δ(ε) ≤ delta, by bisection to a
// relative 1e-12 (returned on the valid side). μ = ε/(4√ln(1/δ)) at (1, 1e-6) gives 0.26.
double gaussian_dp_epsilon(double mu, double delta);

// T = max(1, ⌈4 ln σ⌉) (HR13 as printed). sigma1_upper finite and > 0.
long paper_iteration_count(double sigma1_upper);
// T = max(1, ⌈(16k/γ) ln σ⌉): what Cor 3.2's proof needs for σ_{k+1} ≤ (1 − γ/2)σ₁ (γ in (0, 1)).
long proof_iteration_count(double sigma1_upper, long k, double gap);
// Remark 4.5: releases ‖A‖₁ + Lap(Δ₁/epsilon) (Δ₁ = 1 for single_entry and rectangular input, 2 for
// mirrored pairs), charging `accountant` (pure ε) before reading A, and returns
// T = paper_iteration_count(σ̂₁). Any dense matrix (square or not); finite entries.
IterationCount private_iteration_count(const Eigen::Ref<const Eigen::MatrixXd>& a, double epsilon,
                                       EntryChange unit, privacy::NoiseSource& noise,
                                       const privacy::Budget& budget);

// The dilation [[0, A], [Aᵀ, 0]] ((m + d) square), for tests and diagnostics.
Eigen::MatrixXd dilation(const Eigen::Ref<const Eigen::MatrixXd>& a);

// ---- PPI (Fig 2): one vector ---------------------------------------------------------------------

// Symmetric n × n (square, finite, symmetric within 1e-10·max|A_ij| as in subspace.hpp).
PpiResult private_power_iteration(const Eigen::Ref<const Eigen::MatrixXd>& a, const PpiOptions& options,
                                  privacy::NoiseSource& noise,
                                  const privacy::Budget& budget);
// A linear operator: iterations must be set (‖A‖₁ is not available).
PpiResult private_power_iteration(const SymmetricOperator& a, const PpiOptions& options,
                                  privacy::NoiseSource& noise,
                                  const privacy::Budget& budget);
// Rectangular m × d through the dilation: left_vectors = û, vectors = v̂ (halves), no σ̂.
PpiResult private_power_iteration_rectangular(const Eigen::Ref<const Eigen::MatrixXd>& a,
                                              const PpiOptions& options, privacy::NoiseSource& noise,
                                              const privacy::Budget& budget);

// ---- Rank k by deflation (Fig 3) -----------------------------------------------------------------

PpiResult private_rank_k(const Eigen::Ref<const Eigen::MatrixXd>& a, const PpiOptions& options,
                         privacy::NoiseSource& noise, const privacy::Budget& budget);
PpiResult private_rank_k(const SymmetricOperator& a, const PpiOptions& options, privacy::NoiseSource& noise,
                         const privacy::Budget& budget);
// Rectangular: deflates A itself with σ̂_i û_i v̂_iᵀ (never the dilation).
PpiResult private_rank_k_rectangular(const Eigen::Ref<const Eigen::MatrixXd>& a, const PpiOptions& options,
                                     privacy::NoiseSource& noise,
                                     const privacy::Budget& budget);

}  // namespace dpstream::pca
