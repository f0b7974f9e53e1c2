// Coherence of a matrix: how much of its singular vectors' mass sits on few coordinates (Hardt &
// Roth, "Beating randomized response on incoherent matrices", STOC 2012 (HR12), §5; Hardt & Roth,
// "Beyond worst-case analysis in private singular vector computation", STOC 2013 (HR13), Def 2.7),
// and the private doubling search for PPI's coherence bound C.
//
// Every measure here is a NON-PRIVATE diagnostic: it reads the matrix exactly and releases an exact
// function of it. Use it on public or synthetic data, in tests and benchmarks, never on data whose
// privacy matters. The one private procedure is private_coherence_search (bottom), whose privacy
// contract is that of PPI (private_power_iteration.hpp) composed over its runs.
//
// Bounds: 1 ≤ μ ≤ max(m, n) (HR13 Def 2.7); 1 ≤ μ0 ≤ m/r (HR12 Fact 5.6 says ≤ m; rows of an
// orthonormal U have squared norm ≤ 1); μ0 ≤ μ for the same basis (HR13 §5);
// 1 ≤ C ≤ √m and, for rank r, C ≤ √(r μ0) (HR12 Lemma 5.13).
//
// Which basis (HR13 Def 2.7): μ is defined for a given SVD, which is not unique on repeated
// singular values — above all on a null space. PPI's noise is isotropic, so its analysis holds for
// every admissible basis and μ may be taken as the minimum over them. A solver's basis of a repeated
// eigenspace can be needlessly spiky (the identity's solver basis is e_1 … e_n, μ = n, though a
// Hadamard basis gives 1). EigenbasisChoice::best_of_solver_and_random therefore scores each
// cluster of equal values (relative gap ≤ 1e-9) in the solver's basis and in a (fixed-seed) Haar
// rotation of it and keeps the smaller: still an upper bound on the minimum over bases, usually
// ~2–4 ln n on a null space instead of up to n.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "dpstream/pca/private_power_iteration.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::pca {

enum class EigenbasisChoice { solver, best_of_solver_and_random };

// μ(A) (HR13 Def 2.7) over the FULL orthogonal factors, null space included:
//   symmetric n × n (within 1e-10·max|A_ij|): n·max_ij |U_ij|² over a full eigenbasis U;
//   otherwise (m × n): max{m‖U‖∞², n‖V‖∞²} over a full SVD (U m × m, V n × n).
// For a symmetric A both give the same value (singular vectors are ± eigenvectors).
double mu_coherence(const Eigen::Ref<const Eigen::MatrixXd>& a,
                    EigenbasisChoice basis = EigenbasisChoice::best_of_solver_and_random);

// μ_k (HR13 Def C.1): max_{i ≤ k} max{m‖u_i‖∞², n‖v_i‖∞²} over the top-k singular vectors (for a
// symmetric matrix: the eigenvectors of the k largest |λ|). 1 ≤ k ≤ min(m, n). Solver's vectors.
double top_k_coherence(const Eigen::Ref<const Eigen::MatrixXd>& a, Eigen::Index k);

// μ0 of an m × r orthonormal basis U (HR12 Def 5.5, HR13 Def 5.2): (m/r)·max_j ‖U_(j)‖². Basis
// invariant (row norms of the projector). Columns must be orthonormal within 1e-8.
double mu0_coherence(const Eigen::Ref<const Eigen::MatrixXd>& basis);
// μ0(A): μ0 of A's left singular vectors for its r nonzero singular values. rank = 0: the numerical
// rank (σ_i > max(m, n)·2⁻⁵²·σ₁); otherwise the top `rank` (≤ min(m, n)).
double mu0_coherence_of(const Eigen::Ref<const Eigen::MatrixXd>& a, Eigen::Index rank = 0);

// The smallest C for which A is C-coherent (HR12 Def 5.1): √m·max_i ‖A_(i)‖₂ / ‖A‖_F. A ≠ 0.
double c_coherence(const Eigen::Ref<const Eigen::MatrixXd>& a);

// Numerical rank: #{σ_i > max(m, n)·2⁻⁵²·σ₁}.
Eigen::Index numerical_rank(const Eigen::Ref<const Eigen::MatrixXd>& a);

// ---- Private doubling search over C (HR13 Remark 4.5) ------------------------------------
//
// Runs PPI (one vector) with C = 1, 2, 4, …, 2^{R−1}, R = ⌈log₂ N⌉ + 1 (N = n, or m + d for the
// dilation; the last C ≥ N, where the check can only fail on an unnormalised x_0), and returns the
// first run that does not fail. A run's fail output is itself private (post-processing), so the
// search adapts to it for free; a non-failing run with a small C is simply less noisy.
// Privacy and accounting: the budget left after the iteration share is pre-split over all R runs:
//   paper: each run is PPI(ε/R, δ/R) as printed (Remark 4.5: "scale (ε, δ) down by log n"). The
//          accountant is checked for all R runs before A is read, then charged run by run: runs
//          not made are not charged.
//   tight: all R·T rounds compose to one μ-GDP mechanism (stopping is post-processing of the run
//          sequence), σ = s·√(R·T)·analytic_gaussian_sigma(1, target) for every run. Charged once, in
//          full, before A is read: stopping early refunds nothing.
// options.coherence_bound is ignored; options.k is ignored (one vector).
struct CoherenceSearchResult {
  PpiResult run;                      // the first run that did not fail, or the last run if all did
  bool found = false;                 // a run succeeded
  double coherence_bound = 0.0;       // its C
  int runs = 0;                       // runs made
  int planned_runs = 0;               // R
  std::vector<double> failed_bounds;  // the C's that failed, ascending
};

CoherenceSearchResult private_coherence_search(const Eigen::Ref<const Eigen::MatrixXd>& a,
                                               const PpiOptions& options, privacy::NoiseSource& noise,
                                               const privacy::Budget& budget);
CoherenceSearchResult private_coherence_search_rectangular(const Eigen::Ref<const Eigen::MatrixXd>& a,
                                                           const PpiOptions& options,
                                                           privacy::NoiseSource& noise,
                                                           const privacy::Budget& budget);

}  // namespace dpstream::pca
