// PrivateOja: private Oja's method for the top right singular vector of a (possibly sparse) data
// matrix — Jain, Thakkar & Thakurta 2018 ("Differentially private matrix completion revisited"),
// §3.2, Algorithm 2.
//
// Algorithm (A is m × n, one row per record; Γ = iterations):
//   v̂_0 = z/‖z‖, z ~ N(0, σ² I_n)                        data-independent start (see "v̂_0" below)
//   η   = 1/(σ·√(n·Γ))                                   (§3.2: η = 1/√(VΓ) with V = σ²n)
//   for τ = 1..Γ:
//     y_τ = Aᵀ(A v̂_{τ−1}) + g_τ,  g_τ ~ N(0, σ² I_n) fresh   the τ-th Gaussian release
//     v̂_τ = (v̂_{τ−1} + η·y_τ) / ‖v̂_{τ−1} + η·y_τ‖
//   release v̂_Γ and (optionally) λ̂² = ‖A v̂_Γ‖² + N(0, σ²)
// N_τ v̂ ~ N(0, σ² I) for the paper's n × n noise matrix N_τ and a unit v̂ independent of it, so one
// n-vector g_τ per step replaces the matrix: nothing of size n × n is ever formed. The sparse overload
// computes Aᵀ(A v̂) = Σ_i a_i (a_iᵀ v̂) over the stored entries only: O(nnz) time per step and O(n)
// extra memory (plus O(1) per row); the dense one uses two matrix-vector products (O(m + n) extra).
//
// v̂_0: the printed pseudo-code starts from v̂_0 ~ N(0, σ² I) without normalising it, so the first
// product would be Aᵀ(A v̂_0) with ‖v̂_0‖ ≈ σ√n and sensitivity L²·‖v̂_0‖, not L². v̂_0 is normalised
// here (free: it is data-independent), which is what the sensitivity bound below needs.
//
// Privacy contract
//  * Neighbouring relation: add/remove one row, or replace one row (options.relation); every row has
//    ‖a‖₂ ≤ L = row_norm_bound. Rows are checked on entry, not clipped: a non-finite entry or a row
//    with ‖a‖₂ > L·(1 + 1e-12) throws InvalidRow naming its index (the 1e-12 round-off allowance moves
//    the sensitivity by a relative 2e-12, below the calibration's own 1e-12 bisection tolerance).
//  * Sensitivity of each release, for any unit v (v̂_{τ−1} and v̂_Γ are unit by construction):
//      product y ↦ AᵀAv:  add/remove: ‖a aᵀ v‖₂ = ‖a‖₂·|aᵀv| ≤ L².
//                         replace a → b: ‖(aaᵀ − bbᵀ)v‖₂ ≤ ‖aaᵀ − bbᵀ‖₂ ≤ max(‖a‖², ‖b‖²) ≤ L²,
//                         because −bbᵀ ⪯ aaᵀ − bbᵀ ⪯ aaᵀ (both PSD). Attained (a = L·v, b ⊥ v), so
//                         the sensitivity does NOT double under replacement (unlike AᵀA itself,
//                         whose Frobenius sensitivity grows to √2·L²: symmetric_gaussian.hpp).
//      eigenvalue ‖Av‖²:  add/remove (aᵀv)² ∈ [0, L²]; replace (aᵀv)² − (bᵀv)² ∈ [−L², L²]: L².
//    So Δ = L² per release under both relations (oja_release_sensitivity).
//  * Mechanism: Γ (+1 with the eigenvalue) adaptively composed Gaussian mechanisms, each with
//    sensitivity L² and the same σ; v̂_0 is data-independent and normalising, the step and snapping are
//    post-processing. Gaussian mechanisms compose adaptively in Gaussian DP (Dong, Roth & Su 2019,
//    Thm 3.2): the whole run is μ-GDP with μ = L²·√k/σ, k = Γ + 1 (Γ without the eigenvalue) —
//    equivalently one Gaussian mechanism with sensitivity Δ_joint = L²·√k (joint_sensitivity).
//  * Calibration:
//      tight (default): σ = analytic_gaussian_sigma(L²·√k, target): exactly (ε, δ)-DP for the run
//        (the μ-GDP profile is the analytic Gaussian one). Any ε > 0, δ ∈ (0, 1).
//      paper: σ = L²·√(256·Γ·ln(2/δ))/ε exactly as Algorithm 2 prints it (natural log), with the
//        paper's condition ε ≤ 2·ln(1/δ) enforced (InvalidParameter naming epsilon). It ignores
//        whether the eigenvalue is released. It is valid with a wide margin: its zCDP is
//        ρ = k·L⁴/(2σ²) ≤ ε²/(256·ln(2/δ)), and ρ + 2√(ρ ln(1/δ)) ≤ ε(1/8 + 1/128) < ε under the
//        condition. At L² = 20, δ = 1e-6 it is 11.9–14.4× the tight σ (ε ∈ {1, 5}, Γ ∈ {10, 100}).
//  * Guarantee and accounting: the released v̂_Γ and λ̂² (and every y_τ and iterate a StepObserver
//    sees) are jointly (ε, δ)-DP for `target`. run() charges the budget's accountant (if accounted) ONCE for the
//    whole run before reading any data: charge_gaussian(label, Δ_joint, σ, target), i.e.
//    ρ = k·L⁴/(2σ²). A run refused afterwards (a bad row) keeps its charge: conservative. With the
//    expert options.sigma override the target is not claimed: the charge is ρ alone.
//  * Each y_τ and λ̂² is snapped to the grid snap_granularity(σ) (snap.hpp) before use, so the
//    iterates are post-processing of snapped releases (Mironov 2012 mitigation, as the other
//    mechanisms).
//  * Noise: options.seed set → a SeededNoiseSource: reproducible, NOT secure (tests, replay only);
//    unset → the secure source (make_secure_noise_source). The object owns one source across runs,
//    so two runs of one object draw different noise; two objects with the same seed agree bitwise.
//
// Utility (§3.2, Thm 3.3 with V = σ²n): ‖A‖₂² − ‖Av̂_Γ‖₂² = O(σ√n·log(n/β)) w.p. ≥ 1 − β² for
// Γ = Ω(min{1/β, ‖A‖₂/(σ√n)}); gap-independent (no eigen-gap needed). σ grows as √Γ, so more
// iterations mean more noise per step.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/privacy_spec.hpp"

namespace dpstream::pca {

struct PrivateOjaOptions {
  int iterations = 100;           // Γ ≥ 1: noisy products (= passes over the data)
  // The target is for the whole run (δ > 0); relation add_remove_row or replace_row (Δ = L² under
  // both, header); L finite > 0 with L² normal; the noise's seed (set: reproducible, NOT secure).
  privacy::PrivacySpec privacy;
  bool release_eigenvalue = true;  // also release λ̂² (one more Gaussian release)
  // k ≥ 1: vectors run_components() releases by deflation (one Oja run per vector on A(I − V̂V̂ᵀ),
  // V̂ the vectors already released). σ is calibrated for all k runs together: k·releases()
  // Gaussian releases of sensitivity L² (rows of A(I − V̂V̂ᵀ) keep ‖a‖ ≤ L, and V̂ is public), i.e.
  // Δ_joint = L²·√(k·releases()). tight only for k > 1 (the paper's σ is for one vector).
  Eigen::Index components = 1;
  // Expert override (finite > 0): use this σ for every release instead of calibrating one from
  // `target` (which is then not claimed). The ACCOUNTING IS THE CALLER'S: run() charges an accountant,
  // if given, only the zCDP ρ = components·releases()·L⁴/(2σ²) the run really has, with no (ε, δ)
  // claim. For a caller that composes many runs into one calibrated mechanism (private Frank–Wolfe's
  // oja mode calls one run per round with σ calibrated for all rounds: private_frank_wolfe.hpp).
  std::optional<double> sigma;
};

// Δ of one release (a noisy product Aᵀ(Av) for unit v, or ‖Av‖²) for rows of norm ≤ L: L² under
// both relations (derivation in the header comment). Throws InvalidParameter unless L is finite > 0.
double oja_release_sensitivity(privacy::Neighbours relation, double row_norm_bound);

// Algorithm 2's σ exactly as printed: L²·√(256·Γ·ln(2/δ))/ε. Throws InvalidParameter unless
// ε ≤ 2·ln(1/δ) (naming epsilon), δ > 0, Γ ≥ 1 and L finite > 0. Pin: L = 1, Γ = 1, (1, 1e-6) →
// √(256·ln(2e6)) = 60.94437.
double paper_oja_sigma(double row_norm_bound, int iterations, const privacy::EpsDelta& target);

struct PrivateOjaResult {
  Eigen::VectorXd vector;            // v̂_Γ, unit n-vector (its sign is arbitrary)
  // λ̂² = ‖Av̂_Γ‖² + N(0, σ²): a private estimate of the top eigenvalue of AᵀA (≤ it before noise).
  // Unbiased for ‖Av̂_Γ‖², NOT clamped: it may be negative when σ ≳ ‖Av̂_Γ‖² (clamping at 0 is free
  // post-processing, left to the caller). Unset when release_eigenvalue is false.
  std::optional<double> eigenvalue;
  double sigma = 0.0;                // the noise σ used for every release
  double step_size = 0.0;            // η = 1/(σ√(nΓ))
  // k = 1, method "oja"; values holds λ̂² (unclamped) or is empty.
  PrivateSubspace to_subspace() const;
};

class PrivateOja {
 public:
  // Validates the options (InvalidParameter naming the field) and calibrates σ.
  explicit PrivateOja(const PrivateOjaOptions& options);
  ~PrivateOja();
  PrivateOja(PrivateOja&&) noexcept;
  PrivateOja& operator=(PrivateOja&&) noexcept;

  const PrivateOjaOptions& options() const noexcept { return options_; }
  double sigma() const noexcept { return sigma_; }
  // Gaussian releases per run: Γ + 1 with the eigenvalue, Γ without.
  int releases() const noexcept;
  double release_sensitivity() const noexcept { return release_sensitivity_; }  // L²
  double joint_sensitivity() const noexcept;   // L²·√(components·releases()): the Δ charged to the accountant
  double mu() const noexcept { return joint_sensitivity() / sigma_; }  // the run's GDP parameter
  double step_size(Eigen::Index columns) const;  // η = 1/(σ√(nΓ)); columns ≥ 1
  bool secure() const noexcept;                   // false iff options.seed is set

  // Sees every step: (τ, v̂_{τ−1}, y_τ, v̂_τ), τ = 1..Γ. Everything it sees is already private (y_τ
  // are the mechanism's releases, iterates their post-processing): a diagnostic and test hook.
  using StepObserver = std::function<void(int step, const Eigen::VectorXd& previous,
                                          const Eigen::VectorXd& noisy_product,
                                          const Eigen::VectorXd& iterate)>;

  // A: m × n (m ≥ 0, n ≥ 1), one row per record. Charges `accountant` first (BudgetExhausted: nothing
  // is read or drawn), then checks every row (InvalidRow), then runs.
  PrivateOjaResult run(const Eigen::Ref<const Eigen::MatrixXd>& a,
                       const privacy::Budget& budget,
                       const std::string& label = "private oja", const StepObserver& observer = {});
  // The top `components` vectors by deflation (see PrivateOjaOptions::components): one charge for all
  // of them, before any data is read; vectors orthonormal, values the λ̂²'s (when released). Dense A.
  PrivateSubspace run_components(const Eigen::Ref<const Eigen::MatrixXd>& a,
                                 const privacy::Budget& budget,
                                 const std::string& label = "private oja (deflation)");
  // Sparse rows (compressed or not): touches only stored entries; never forms an n × n or m × n
  // dense matrix. With the same seed and data it draws the same noise as the dense overload.
  PrivateOjaResult run(const Eigen::SparseMatrix<double, Eigen::RowMajor>& a,
                       const privacy::Budget& budget,
                       const std::string& label = "private oja", const StepObserver& observer = {});

 private:
  void charge(const privacy::Budget& budget, const std::string& label) const;
  void require_single_component() const;
  template <class Product>
  PrivateOjaResult iterate(Eigen::Index columns, const Product& product, const StepObserver& observer);

  PrivateOjaOptions options_;
  double release_sensitivity_;
  double sigma_;
  std::unique_ptr<privacy::NoiseSource> noise_;
};

}  // namespace dpstream::pca
