// Subspace maths for (private) PCA: the algebraic top-k eigenspace of a symmetric, possibly
// indefinite matrix — exactly (full eigendecomposition) or by a cheap warm-started refresh — and the
// metrics that compare subspaces and score them.
//
// Why "algebraic": a released covariance Ĉ = C + E is indefinite (E is a symmetric Gaussian matrix),
// and early in a stream its most negative eigenvalues are as large in magnitude as its largest ones.
// The proofs of Analyze Gauss use max tr(VᵀĈV), so the top k is by largest λ, never largest |λ|
// (Dwork, Talwar, Thakurta & Zhang, "Analyze Gauss", STOC 2014, §3 and §4; their Algorithm 2
// line 6 says "top k singular subspace", which is loose). Subspaces are compared through projectors,
// never through bases, since signs and rotations inside a degenerate eigenspace are arbitrary.
//
// Every function validates its inputs and throws InvalidParameter naming the bad value: matrices
// must be square, finite, and symmetric within max|C_ij − C_ji| ≤ 1e-10·max|C_ij| (a perturbation of
// ‖C‖₂ · d · 1e-10 at most, below every tolerance used here; released covariances are bitwise
// symmetric, and this leaves room for a caller's own AᵀA); bases must be finite with orthonormal
// columns within max|VᵀV − I| ≤ 1e-8 (far above the ~d·2⁻⁵³ of any double-precision
// orthonormalisation, far below any distance worth reporting).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <Eigen/Core>

namespace dpstream::proto {
class SubspaceTracker;
}  // namespace dpstream::proto

namespace dpstream::pca {

struct KrylovWorkspace;  // buffers a SubspaceTracker keeps between refreshes (subspace.cpp)

// A matrix counts as symmetric when max|C_ij − C_ji| ≤ kSymmetryTolerance·max|C_ij| (see above).
inline constexpr double kSymmetryTolerance = 1e-10;

// The check every function here makes of a matrix argument (see above): square, non-empty, finite
// and symmetric within 1e-10·max|C_ij|; throws InvalidParameter naming `where` and the entry.
void require_symmetric(const char* where, const Eigen::Ref<const Eigen::MatrixXd>& c);

// k eigenpairs of a symmetric matrix, in descending algebraic order of eigenvalue.
struct TopEigen {
  Eigen::MatrixXd vectors;  // d × k, orthonormal columns; vectors.col(i) belongs to values(i)
  Eigen::VectorXd values;   // k, values(0) ≥ values(1) ≥ …
};

// The algebraic top k of the symmetric d × d matrix c (1 ≤ k ≤ d) by a full eigendecomposition
// (Eigen's SelfAdjointEigenSolver): the reference every faster method is checked against.
TopEigen top_k_eigen(const Eigen::Ref<const Eigen::MatrixXd>& c, Eigen::Index k);

// Σ of the k algebraically largest eigenvalues of c = max over orthonormal d × k V of tr(VᵀcV)
// (Ky Fan): OPT of the regret, and the captured variance of the best k-subspace.
double sum_top_k_eigenvalues(const Eigen::Ref<const Eigen::MatrixXd>& c, Eigen::Index k);

// tr(VᵀcV) for an orthonormal d × k basis v: the variance c puts in span(V) (= ‖AV‖_F² for c = AᵀA).
double captured_variance(const Eigen::Ref<const Eigen::MatrixXd>& c,
                         const Eigen::Ref<const Eigen::MatrixXd>& v);

// Principal angles between span(V) and span(W) (orthonormal d × k bases, the same k), ascending, in
// [0, π/2]. Cosines are the singular values of the k × k matrix VᵀW; angles below π/4 are taken from
// the sines, the singular values of the d × k matrix W − V(VᵀW), since arccos loses half the digits
// near 0 (Knyazev & Argentati 2002). No d × d matrix is formed.
Eigen::VectorXd principal_angles(const Eigen::Ref<const Eigen::MatrixXd>& v,
                                 const Eigen::Ref<const Eigen::MatrixXd>& w);

enum class ProjectorNorm { spectral, frobenius };
const char* to_string(ProjectorNorm norm) noexcept;  // "spectral" | "frobenius"
// The inverse; any other text: InvalidParameter naming it and the accepted names.
ProjectorNorm parse_projector_norm(const std::string& text);

// ‖VVᵀ − WWᵀ‖ for orthonormal bases V (d × k) and W (d × m), without forming either projector.
// Same k: spectral = max sin θᵢ, Frobenius = √(2 Σ sin² θᵢ) over the principal angles θ.
// k ≠ m: spectral = 1 (the larger subspace holds a unit vector orthogonal to the smaller), and
// Frobenius² = k + m − 2‖VᵀW‖_F².
double projector_distance(const Eigen::Ref<const Eigen::MatrixXd>& v,
                          const Eigen::Ref<const Eigen::MatrixXd>& w,
                          ProjectorNorm norm = ProjectorNorm::spectral);

// Warm-started refresh of the algebraic top k: a thick-restarted block Lanczos (block Krylov) method
// with Rayleigh–Ritz, started from the previous basis. Rayleigh–Ritz keeps the algebraically largest
// Ritz values, so no spectral shift or bound is needed, and the Krylov polynomial adapts to the
// spectrum by itself. That matters when the top k sit at the edge of a noise bulk, ~1% of the
// spectral width apart: in bench_fpl (d = 784) a subspace iteration on Ĉ − λ_min·I would shrink the
// residual by (λ_{k+p+1} − λ_min)/(λ_k − λ_min) ≈ 0.986 per product; this method measures ≈ 0.75.
struct RefreshOptions {
  // p: the block holds k + max(p, 1) vectors. Extra vectors widen the gap that sets the convergence
  // rate (λ_k against λ_{k+p+1}) and carry the next eigenvectors over to the next refresh. The last
  // start column is always a fresh pseudo-random vector (the others come from the start basis): a
  // start spanning an invariant subspace — exact eigenvectors, e.g. when new rows are orthogonal to
  // the current top k — would otherwise hide a new, larger eigenvalue, with zero residuals.
  Eigen::Index oversample = 5;
  // Krylov blocks held before a thick restart from the k + p best Ritz vectors (≥ 2). The
  // Rayleigh–Ritz problem is at most max_blocks·(k + p) square; fewer blocks are used when d is small
  // (so that it stays cheap next to a block product) or the blocks are wide (at most ~120 columns in
  // all, never fewer than 2 blocks: at k = 32 that is 3 blocks; subspace.cpp measures why), and when
  // d < 2(k + p) the full solver answers.
  Eigen::Index max_blocks = 6;
  // Block products Ĉ·Q (d × (k + p) each) allowed per refresh before falling back to the full solver.
  // Checked where Rayleigh–Ritz runs (every second block, never before the second), so a refresh
  // may take one product more.
  int max_iterations = 100;
  // Stopping rule on the Ritz residuals rᵢ = Ĉvᵢ − θᵢvᵢ of the k wanted pairs:
  //   max ‖rᵢ‖₂ ≤ tolerance·‖Ĉ‖₂,
  // where ‖Ĉ‖₂ is estimated from below (the largest |Ritz value|, or ‖Ĉ‖_F/√d), so the test is never
  // looser than stated. Why this bounds the captured variance: in the basis [V, V⊥], Ĉ is
  // diag(Θ, D) plus an off-diagonal block B with ‖B‖ = ‖R‖, and the Ky Fan sum S_k of the k largest
  // eigenvalues is subadditive, so OPT = S_k(Ĉ) ≤ S_k(diag(Θ, D)) + S_k([0 Bᵀ; B 0]) = tr Θ + ‖R‖_*
  // (the first term is tr Θ unless an eigenvalue of D exceeds θ_k, i.e. unless the iteration missed
  // an eigenvector entirely: the random start column and at least one expansion before any answer
  // is accepted make that unlikely, but like every Krylov method this one cannot exclude it for an
  // eigenvector the start is nearly orthogonal to), and ‖R‖_* ≤ Σ‖rᵢ‖. Hence 0 ≤ OPT − tr(VᵀĈV) ≤ k·tolerance·‖Ĉ‖₂ with no
  // eigenvalue gap needed: a relative error ≤ 1e-4·‖Ĉ‖₂/(OPT/k) at the default, below 1e-3 while the
  // mean of the top-k eigenvalues is ≥ ‖Ĉ‖₂/10. With a gap the error is quadratic in the residual
  // and orders of magnitude smaller (tests, bench).
  double tolerance = 1e-4;
  // If > 0, also stop once Σ‖rᵢ‖ ≤ variance_tolerance·|tr Θ|: by the bound above this certifies
  // OPT − tr(VᵀĈV) ≤ variance_tolerance·|tr(VᵀĈV)| directly, the quantity regret depends on,
  // typically with far fewer iterations when the top k sit in a cluster (the basis itself is then
  // less accurate, but within a cluster it is ill-determined anyway). 0 = off.
  double variance_tolerance = 0;
  // Run the block products Ĉ·Q in single precision (Ĉ rounded to float once per refresh): twice the
  // GEMM rate and half the memory traffic, the products being ~all of a refresh's cost at d = 784.
  // Rounding moves Ĉ by ≤ 2⁻²⁴·max|Ĉ_ij| per entry, ~1e-5·‖Ĉ‖₂ at most at d = 784, so the iteration
  // still reaches the default tolerances; the answer is then confirmed in double precision (one
  // product Ĉ·V of the k wanted vectors), so the stopping rule above holds for Ĉ itself, and the
  // values returned are the Rayleigh–Ritz values of V on Ĉ in double (never above Ĉ's). The thin
  // products on the products' float results (H's new column, the new block's two projections against
  // the basis, a restart's ĈY) run in single precision too: they carry that rounding anyway, and at
  // d = 2048, k = 32 they were as costly as the block products. The blocks are then orthogonal to one
  // another only to ~1e-7, so V is made orthonormal in double (Cholesky QR, twice) before it is
  // confirmed. Used only when tolerance and variance_tolerance (if set) are ≥ 1e-5; below that
  // everything stays double.
  bool single_precision = true;
  // SubspaceTracker's cold start (no basis yet): a full eigendecomposition up to this dimension (the
  // exact answer), above it the refresh iteration itself from a start of coordinate axes and
  // pseudo-random columns (same stopping rule and fallback as any refresh). Why: the full solve is
  // O(d³), and a replay cold-starts two trackers (private learner, the meter's leader): at d = 784
  // over a stream of 128 blocks it cost more a block than a warm refresh's products. At d ≤ 256 it
  // costs about one refresh and is exact.
  Eigen::Index cold_full_solve_max_dimension = 256;
};

struct RefreshStats {
  std::uint64_t refreshes = 0;    // calls
  std::uint64_t iterations = 0;   // block products Ĉ·Q, over all calls
  std::uint64_t matvecs = 0;      // matrix–vector products (columns of those blocks), over all calls
  std::uint64_t restarts = 0;     // thick restarts
  std::uint64_t fallbacks = 0;    // calls that did not converge in max_iterations: full solver used
  std::uint64_t full_solves = 0;  // full eigendecompositions: cold starts, tiny d, fallbacks
  int last_iterations = 0;        // block products of the last call
  double last_residual = 0;       // its max ‖Ĉv − λv‖ / ‖Ĉ‖ estimate (0 after a full solve)
};

// One warm-started refresh: the algebraic top k of c starting from the columns of `start` (d × m,
// m ≥ 1; only the first k + max(p, 1) − 1 are used, the rest of the block is pseudo-random, so a
// start of any quality works). Adds its counts to *stats if given. Same result as top_k_eigen up to
// the tolerance; falls back to it when the iteration does not converge.
TopEigen refresh_top_k(const Eigen::Ref<const Eigen::MatrixXd>& c,
                       const Eigen::Ref<const Eigen::MatrixXd>& start, Eigen::Index k,
                       const RefreshOptions& options = {}, RefreshStats* stats = nullptr);

// Holds the k + p basis between releases, so an online PCA calls refresh(Ĉ_t) once per release.
// The first refresh (or the first after reset()) is a full solve up to
// RefreshOptions::cold_full_solve_max_dimension, the iteration from a data-independent start above
// it; later ones start from the last basis.
class SubspaceTracker {
 public:
  // Throws InvalidParameter unless dimension ≥ 1, 1 ≤ k ≤ dimension and the options are valid.
  SubspaceTracker(Eigen::Index dimension, Eigen::Index k, const RefreshOptions& options = {});
  ~SubspaceTracker();
  SubspaceTracker(const SubspaceTracker& other);
  SubspaceTracker& operator=(const SubspaceTracker& other);
  SubspaceTracker(SubspaceTracker&&) noexcept;
  SubspaceTracker& operator=(SubspaceTracker&&) noexcept;

  // The algebraic top k of c (dimension × dimension, symmetric), warm-started from basis(). Returns
  // current(), overwritten by the next refresh() or reset(). Throws InvalidParameter for a bad c.
  // residual_floor > 0: the iteration also stops once Σ‖rᵢ‖ ≤ residual_floor, which certifies
  // OPT − tr(VᵀcV) ≤ residual_floor (RefreshOptions::tolerance's bound) — for a caller that knows
  // c carries noise and that a shortfall below this is not worth products (FplOnlinePca::follow).
  const TopEigen& refresh(const Eigen::Ref<const Eigen::MatrixXd>& c, double residual_floor = 0);
  // The same for the symmetric matrix whose upper triangle is upper's (its strict lower triangle is
  // never read), for a caller that keeps one triangle (stream::CovarianceAccumulator): the tracker
  // builds what it needs in its own buffers in one pass, instead of the caller mirroring a full
  // copy that refresh() then reads again to check it (over a quarter of the regret meter's time a
  // block at d = 2048). Same result as refresh() of that matrix, bit for bit; InvalidParameter for
  // a wrong size or a non-finite entry. In single precision (the default) only the float copy is
  // built, and the double products (the certificate's) read `upper` in place
  // (linalg::symmetric_product_upper); in double precision, or for a full solve, a d × d double
  // copy is built too, and held between calls.
  const TopEigen& refresh_upper(const Eigen::Ref<const Eigen::MatrixXd>& upper, double residual_floor = 0);
  // The same from c's lower triangle, for a caller that keeps that one (the replay hands its
  // learner the releases' lower triangles: linalg::unpack_lower_triangle). The strict upper triangle is
  // not read but overwritten, in the same one pass, with the mirror: c ends as the symmetric matrix
  // refreshed from, and no d × d double copy is held. Same result as refresh() of
  // that matrix, bit for bit; InvalidParameter for a wrong size or a non-finite entry.
  const TopEigen& refresh_lower(Eigen::Ref<Eigen::MatrixXd> c, double residual_floor = 0);

  // Start the next refresh from `basis` (dimension × m, m ≥ 1, any quality; e.g. a checkpoint).
  void set_start(const Eigen::Ref<const Eigen::MatrixXd>& basis);
  // Forget the basis: the next refresh is a cold start (full solve).
  void reset();

  // Checkpoints: everything a later refresh() depends on. The refresh count in `stats` seeds the
  // pseudo-random start column of the next refresh (subspace.cpp), so set_start() alone would not
  // continue the same sequence; restore(state()) does, bit for bit.
  struct State {
    Eigen::MatrixXd block;  // basis(): the start of the next refresh (empty: a cold start)
    TopEigen current;       // current()
    RefreshStats stats;     // stats()

    // Its checkpoint message (lib/proto/learner_states.proto; the pattern: base/message_seal.hpp):
    // load throws CorruptInput naming `field` for a matrix whose values do not fit its shape;
    // restore() checks the rest.
    void save(proto::SubspaceTracker& out) const;
    static State load(const proto::SubspaceTracker& in, const std::string& field);
  };
  State state() const { return State{block_, current_, stats_}; }
  // InvalidParameter for a block or result of another dimension or k, or non-finite entries.
  void restore(const State& state);
  // The tracker's save / load pair: state() and restore() through State's.
  void save(proto::SubspaceTracker& out) const { state().save(out); }
  void load(const proto::SubspaceTracker& in, const std::string& field) { restore(State::load(in, field)); }

  bool has_basis() const noexcept { return block_.cols() > 0; }
  // The k + p vectors the next refresh starts from (empty before the first refresh).
  const Eigen::MatrixXd& basis() const noexcept { return block_; }
  // The last result (empty before the first refresh).
  const TopEigen& current() const noexcept { return current_; }
  const RefreshStats& stats() const noexcept { return stats_; }
  const RefreshOptions& options() const noexcept { return options_; }
  Eigen::Index dimension() const noexcept { return dimension_; }
  Eigen::Index k() const noexcept { return k_; }

 private:
  bool cold_full_solve() const noexcept;  // no basis yet, and d ≤ cold_full_solve_max_dimension
  void check_refresh_arguments(const char* fn, const Eigen::Ref<const Eigen::MatrixXd>& c, double residual_floor) const;
  enum class Held { full, upper };  // what refresh_checked's c holds: the matrix, or its upper triangle
  const TopEigen& refresh_checked(const Eigen::Ref<const Eigen::MatrixXd>& c, Held held, double frobenius,
                                  double residual_floor);

  Eigen::Index dimension_, k_;
  RefreshOptions options_;
  Eigen::MatrixXd block_;
  TopEigen current_;
  RefreshStats stats_;
  std::unique_ptr<KrylovWorkspace> workspace_;  // scratch only: a copy gets its own
};

}  // namespace dpstream::pca
