// Private Find-and-Project (Hardt & Roth 2012, "Beating randomized response on incoherent matrices",
// STOC; HR12): a private rank-k approximation of an m × n matrix A (rows = records)
// in two private stages, the range finder (Fig 2) and the projection (Fig 3), composed as PFP (Fig 4).
//
//   range finder:  W = orth(AΩ + N),       Ω ~ N(0, 1)^{n×K} secret and fresh, N ~ N(0, ρ²)^{m×K}
//   prune:         W' = W with entries |w_ij| > α zeroed           (post-processing of W)
//   projection:    P = W'ᵀA + N',          N' Gaussian (K × n; K = k + oversampling, W's columns)
//   output:        B = W·P (rank ≤ K), kept factored; its top-k truncation and right singular vectors.
//
// Privacy contract
//  * Neighbouring relation (MatrixNeighbours): A − A' is zero except in one row i, where it is a
//    vector e with ‖e‖₂ ≤ Δ (HR12 eq. (1) is Δ = 1):
//      row_change:     Δ = row_norm_bound, rows unbounded (HR12's own unit: e.g. one rating inside a
//                      movie's row changes; rows are only checked to be finite);
//      add_remove_row: rows are records with ‖a_i‖₂ ≤ L = row_norm_bound (checked: InvalidRow naming
//                      the row, nothing clipped); a record removed is its row zeroed: Δ = L;
//      replace_row:    the same rows, one replaced by another: Δ = 2L.
//  * Range finder: row i of AΩ moves by eᵀΩ ~ N(0, ‖e‖² I_K): its sensitivity is random, not bounded,
//    and privacy comes from Ω being secret and drawn after the data are fixed. Ω is drawn from the
//    NoiseSource on every call, used once, wiped, and never returned.
//      tight (default), a rigorous refinement of the paper's Lemma 4.1: for fixed Ω the release is a
//        Gaussian mechanism with shift ‖eᵀΩ‖, whose exact profile is δ_G(ε; ‖eᵀΩ‖/ρ) (Balle & Wang);
//        the output law is the Ω-mixture of these, and the hockey-stick divergence is jointly convex,
//        so  δ(ε) ≤ E_{X~χ_K}[δ_G(ε; ΔX/ρ)]  (the "mixture bound"). Lemma 4.1 is the two-cell
//        version of this (X ≤ c: δ_G(c/ρ); X > c: 1). range_finder_certified_delta evaluates the
//        bound as an upper Riemann sum (δ_G increases with X); ρ is the smallest σ it certifies at
//        the target. Pins (K = 6, Δ = 1, ε = 0.5, δ = 5e-7, PFP's share of (1, 1e-6)): tight 28.8;
//        paper 58.3; the corrected two-part √(2K ln(4K/δ))·√(2 ln(2.5/δ))/ε 161.8 (5–6×
//        the tight ρ over K = 4..10, δ = 1e-4..5e-7).
//      paper: ρ = 2ε⁻¹√(2K ln(4K/δ)) as printed (HR12 writes log; read as ln). The paper's proof does
//        NOT establish it: given ‖eᵀΩ‖ ≤ c = √(2K ln(4K/δ)) its Gaussian step has exact δ 6.8e-3 at
//        ε = 1 (2.7e-3 at 0.5, 4.5e-4 at 0.1) for every δ, not δ/2 (Fig 2, Lemma 4.1). That is a failed
//        proof, not a leak: the mixture bound certifies the paper's ρ at 3.3e-13 at the pin above,
//        and for every K ≥ 4 tried (K ≤ 256, ε ∈ [0.01, 5], δ ∈ [1e-12, 0.5]); it fails to certify
//        K = 1 at δ ≤ 1e-9 (and at δ = 1e-6 for ε = 5) and K = 2 at δ = 1e-12 (and 1e-9 for ε = 5).
//        RangeFinderCalibration::certified_delta reports it for any configuration: paper mode is
//        proven (ε, δ)-DP wherever certified_delta ≤ δ, and unproven (not shown leaky) elsewhere.
//    Accounting: the range finder is not a Gaussian mechanism with a fixed sensitivity (charging the
//    ρ of a bound c would drop the probability that ‖eᵀΩ‖ > c), so it is charged as an (ε, δ) release
//    (charge_approx): a proven guarantee in tight mode, the paper's claim in paper mode.
//  * Projection: row i of W'ᵀA moves by W'_(i)ᵀ ⊗ e, Frobenius norm ‖W'_(i)‖₂·‖e‖ ≤ Δ·max_i ‖W'_(i)‖₂.
//      tight (default; "PFP-tight", a deviation from Fig 3): one Gaussian release of W'ᵀA
//        with sensitivity s = Δ·max_i ‖W'_(i)‖₂ (the max row norm of W') and σ = s·analytic_gaussian_
//        sigma(1, target), i.i.d. over all K·n entries. Charged as a Gaussian mechanism: ρ = s²/(2σ²)
//        depends on the target only (s is a function of the released W), so zCDP composition applies.
//      paper (Fig 3): row j of N' is N(0, α_j²ρ²Δ²) i.i.d., α_j = ‖w'_j‖∞, ρ = 2ε⁻¹√(8K ln(4K/δ)
//        ln(2/δ)) (Lemma 4.6: advanced composition over the K rows). Valid but conservative: the
//        whole release is a Gaussian mechanism with whitened sensitivity ≤ √K/ρ, which spends only
//        ≈ 0.03–0.04 of the nominal ε (exact Gaussian profile, Balle & Wang 2018). Charged with
//        charge_approx at the paper's claimed (ε, δ).
//  * PFP: range finder at (ε/2, δ/2), projection at (ε/2, δ/2), basic composition (Lemma 6.1); W' and
//    B are post-processing. With paper constants the whole run is proven wherever the range finder's
//    certified_delta ≤ δ/2 (the projection's claim always holds). Both charges are checked on a copy of the ledger first, so a
//    BudgetExhausted leaves the ledger unchanged and nothing released.
//  * Every released value (AΩ + N, W'ᵀA + N') is snapped to the grid of its noise scale (snap.hpp).
//
// Utility (HR12; the tests check the forms): ‖A − WWᵀA‖_F ≤ (1 + r/(p−1))^{1/2}·(Σ_{j>r}(σ_j + ρ)²)^{1/2}
// in expectation (Thm 4.2, r = k, p = oversampling ≥ 2); with W' = W, A − B = (I − WWᵀ)A − W N'
// splits orthogonally, so ‖A − B‖²_F = ‖A − WWᵀA‖²_F + ‖N'‖²_F exactly (the tight form of Thm 4.7).
// Rank-R A = USVᵀ, K ≥ R + 2 [note, checked in the tests]: (I − WWᵀ)A = −(I − WWᵀ)NG⁺ exactly with
// G = VᵀΩ, so E‖A − WWᵀA‖²_F ≈ ρ²(m − K)R/(K − R − 1) (docs/performance.md: measured against it). PFP therefore beats input
// perturbation (input_perturbation.hpp, error ≈ σ_RR√(k(m + n))) only for n ≫ m and incoherent A
// (the projection's σ ∝ max row norm of W ≈ √(cK/m), c ≈ 2–3); the paper's constants lose an order
// of magnitude against the tight calibration (the ratios: docs/performance.md).
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/pca/private_subspace.hpp"
#include "dpstream/pca/range_finder_calibration.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/privacy/privacy_spec.hpp"

namespace dpstream::pca {

// ---- The privacy unit and result types shared with input_perturbation.hpp ---------------------

enum class MatrixNeighbours { row_change, add_remove_row, replace_row };
const char* to_string(MatrixNeighbours relation) noexcept;  // "row_change" | "add_remove_row" | "replace_row"
// The inverse; any other text: InvalidParameter naming it and the accepted names.
MatrixNeighbours parse_matrix_neighbours(const std::string& text);

// Δ, the largest ℓ2 norm of the one nonzero row of A − A': row_norm_bound for row_change and
// add_remove_row, 2·row_norm_bound for replace_row. InvalidParameter unless the bound is finite, > 0.
double row_change_bound(MatrixNeighbours relation, double row_norm_bound);

// The options' privacy spec (PrivacySpec, which has no row_change) checked against `relation`, then
// row_change_bound. The estimators below read the spec's target, calibration and L; its relation must
// be `relation`'s: add_remove_row for add_remove_row, replace_row for replace_row and row_change (one
// row changed); its noise must be unset (the noise is release()'s source). InvalidParameter naming who.
double spec_row_change(const char* who, const privacy::PrivacySpec& spec, MatrixNeighbours relation);

// Checks every row of a on entry: finite entries (InvalidRow naming row and column) and, for the
// record relations, ‖a_i‖₂ ≤ row_norm_bound (stream::row_norm; InvalidRow naming the row).
void check_rows(const Eigen::Ref<const Eigen::MatrixXd>& a, MatrixNeighbours relation, double row_norm_bound);

// A rank-r matrix in factored form: B = left · diag(singular_values) · rightᵀ.
struct LowRankFactors {
  Eigen::MatrixXd left;             // m × r, orthonormal columns
  Eigen::VectorXd singular_values;  // r, descending, ≥ 0
  Eigen::MatrixXd right;            // n × r, orthonormal columns
  Eigen::MatrixXd dense() const;    // B itself (m × n): for tests and small matrices
};

// The top-k SVD of m (1 ≤ k ≤ min(rows, cols)): the k leading eigenvectors U of the Gram matrix of
// the shorter side, then X = mᵀU re-orthonormalised (Householder QR and a k × k SVD), so the right
// vectors are orthonormal to rounding and the values are never taken from squares alone. The result
// is U_kU_kᵀm, the best rank-k approximation up to the accuracy of U_k.
LowRankFactors top_k_svd(const Eigen::Ref<const Eigen::MatrixXd>& m, Eigen::Index k);

// The PrivateSubspace of a released rank-k approximation: its right vectors and squared singular
// values (these include the noise energy — about n·σ² per direction — and are not debiased).
PrivateSubspace to_private_subspace(const LowRankFactors& factors, const std::string& method);

// ---- Range finder (Fig 2); its calibration: range_finder_calibration.hpp ----------------------

struct RangeFinderOptions {
  Eigen::Index k = 1;             // target rank (HR12's r), ≥ 1
  Eigen::Index oversampling = 2;  // p ≥ 0; the sketch has K = k + p columns (HR12's k). Thm 4.2 needs p ≥ 2
  privacy::PrivacySpec privacy;   // target (δ > 0), calibration, L (see spec_row_change)
  MatrixNeighbours relation = MatrixNeighbours::add_remove_row;
};

class PrivateRangeFinder {
 public:
  // InvalidParameter naming the bad field (k, oversampling, delta, row_norm_bound).
  explicit PrivateRangeFinder(const RangeFinderOptions& options);

  // W (m × K, orthonormal columns): orth(AΩ + N) by Householder QR. Checks a (K ≤ min(m, n), rows),
  // charges `budget`, then draws Ω (n × K, column-major) and N (m × K) from `noise`,
  // in that order.
  Eigen::MatrixXd release(const Eigen::Ref<const Eigen::MatrixXd>& a, privacy::NoiseSource& noise,
                          const privacy::Budget& budget,
                          const std::string& label = "hr12 range finder") const;

  Eigen::Index columns() const noexcept { return options_.k + options_.oversampling; }
  double sigma() const noexcept { return calibration_.sigma; }
  double row_change() const noexcept { return row_change_; }
  const RangeFinderCalibration& calibration() const noexcept { return calibration_; }
  const RangeFinderOptions& options() const noexcept { return options_; }

 private:
  friend class PrivateFindAndProject;
  Eigen::MatrixXd draw(const Eigen::Ref<const Eigen::MatrixXd>& a, privacy::NoiseSource& noise) const;

  RangeFinderOptions options_;
  double row_change_;
  RangeFinderCalibration calibration_;
};

// ---- Pruning (Fig 4, step 2) ------------------------------------------------------------------

// W' = w with every entry |w_ij| > alpha set to 0 (alpha finite > 0; alpha ≥ 1 changes no entry of a
// matrix with unit columns: HR12 Thm 6.3's "no pruning"). *zeroed, if given, receives the count.
Eigen::MatrixXd prune(const Eigen::Ref<const Eigen::MatrixXd>& w, double alpha, Eigen::Index* zeroed = nullptr);

// ---- Projection (Fig 3) -----------------------------------------------------------------------

// Fig 3's ρ per unit α and Δ: 2ε⁻¹√(8K ln(4K/δ) ln(2/δ)). δ in (0, 1).
double projection_paper_rho(Eigen::Index columns, const privacy::EpsDelta& target);

struct ProjectionOptions {
  privacy::PrivacySpec privacy;  // target (δ > 0), calibration, L (see spec_row_change)
  MatrixNeighbours relation = MatrixNeighbours::add_remove_row;
};

struct ProjectionRelease {
  Eigen::MatrixXd released;        // P = W'ᵀA + N' (K × n)
  Eigen::VectorXd noise_sigma;     // K: the standard deviation of row j of N' (0 where W'ᵀA's row is
                                   // identically 0, i.e. column j of W' is 0)
  Eigen::VectorXd column_max_abs;  // K: α_j = ‖w'_j‖∞
  double max_row_norm = 0;         // max_i ‖W'_(i)‖₂ (the tight sensitivity per unit Δ)
};

class PrivateProjection {
 public:
  // InvalidParameter naming the bad field (delta, row_norm_bound).
  explicit PrivateProjection(const ProjectionOptions& options);

  // P = W'ᵀA + N'. w_prime: m × K, finite, every column of norm ≤ 1 (+1e-9 for rounding; Fig 3's
  // input), K ≤ n; it must be data-independent or already released (e.g. a pruned range-finder W).
  // Checks the rows of a, charges `budget`, then draws N' (K × n, column-major).
  ProjectionRelease release(const Eigen::Ref<const Eigen::MatrixXd>& a,
                            const Eigen::Ref<const Eigen::MatrixXd>& w_prime, privacy::NoiseSource& noise,
                            const privacy::Budget& budget,
                            const std::string& label = "hr12 projection") const;

  // tight: σ per unit of sensitivity, analytic_gaussian_sigma(1, target); paper: Fig 3's ρ for
  // `columns` (per unit α and Δ).
  double noise_multiplier(Eigen::Index columns) const;
  double row_change() const noexcept { return row_change_; }
  const ProjectionOptions& options() const noexcept { return options_; }

 private:
  friend class PrivateFindAndProject;
  void check_basis(const Eigen::Ref<const Eigen::MatrixXd>& w_prime, Eigen::Index rows) const;
  void charge(privacy::PrivacyAccountant& accountant, const std::string& label) const;
  ProjectionRelease draw(const Eigen::Ref<const Eigen::MatrixXd>& a, const Eigen::Ref<const Eigen::MatrixXd>& w_prime,
                         privacy::NoiseSource& noise) const;

  ProjectionOptions options_;
  double row_change_;
  double tight_multiplier_;  // analytic_gaussian_sigma(1, target); 0 in paper mode
};

// ---- PFP (Fig 4) ------------------------------------------------------------------------------

struct FindAndProjectOptions {
  Eigen::Index k = 1;             // target rank r ≥ 1 (the truncation and the subspace have k columns)
  Eigen::Index oversampling = 2;  // p ≥ 0: W and P have K = k + p columns/rows (Thm 6.3 wants p ≥ 2)
  privacy::PrivacySpec privacy;  // the whole run's target (δ > 0), calibration, L (see spec_row_change)
  MatrixNeighbours relation = MatrixNeighbours::add_remove_row;
  double prune_threshold = 1.0;   // α > 0; ≥ 1 prunes nothing (Thm 6.3). Thm 6.2's α* depends on the
                                  // unknown coherence and ‖A‖_F (Thm 6.2's proof): the caller's choice
};

struct FindAndProjectResult {
  Eigen::MatrixXd range;          // W (m × K), orthonormal: the range finder's release
  ProjectionRelease projection;   // P = W'ᵀA + N' (K × n): the projection's release
  Eigen::Index pruned_entries = 0;
  // B = W·P (Fig 4, with the unpruned orthonormal W on the left, as Thm 4.7's proof uses; the
  // pruned W' only inside). Its top-k truncation, computed from P alone (B = W·P, W orthonormal):
  LowRankFactors approximation;
  PrivateSubspace subspace;       // n × k right singular vectors of B, values s_i²; method "pfp"
  Eigen::MatrixXd released_matrix() const { return range * projection.released; }  // B, dense m × n
};

class PrivateFindAndProject {
 public:
  // InvalidParameter naming the bad field (k, oversampling, delta, row_norm_bound, prune_threshold).
  explicit PrivateFindAndProject(const FindAndProjectOptions& options);

  // Checks a (k + oversampling ≤ min(m, n), rows), charges the accountant twice ("<label> range
  // finder", "<label> projection") after checking both fit, then draws Ω, N, N' from `noise`.
  FindAndProjectResult release(const Eigen::Ref<const Eigen::MatrixXd>& a, privacy::NoiseSource& noise,
                               const privacy::Budget& budget,
                               const std::string& label = "pfp") const;

  const PrivateRangeFinder& range_finder() const noexcept { return range_finder_; }
  const PrivateProjection& projection() const noexcept { return projection_; }
  const FindAndProjectOptions& options() const noexcept { return options_; }

 private:
  FindAndProjectOptions options_;
  PrivateRangeFinder range_finder_;  // at (ε/2, δ/2)
  PrivateProjection projection_;     // at (ε/2, δ/2)
};

}  // namespace dpstream::pca
