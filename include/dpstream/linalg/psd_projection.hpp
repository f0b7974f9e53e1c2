// The Frobenius projection of a symmetric matrix onto the positive semidefinite cone, V₊Λ₊V₊ᵀ,
// computed from the eigenpairs of one side of the spectrum only.
//
// Why not a full eigendecomposition: Eigen's SelfAdjointEigenSolver spends most of its time
// accumulating the tridiagonal QR's rotations into all d eigenvectors (about 90% of its time, ten
// times the tridiagonal reduction's). Here the reduction is blocked
// (linalg/tridiagonal_reduction.hpp), the eigenpairs of the tridiagonal T
// are LAPACK's MRRR, for the smaller side of 0 only (linalg/tridiagonal_side.hpp: dqds for every
// eigenvalue, then the side's eigenvectors alone, O(d·m)), and only those m pairs are carried back
// (a blocked Householder product, 2d²m) and summed (a rank-m update of one triangle, d²m):
// C₊ = C − V₋Λ₋V₋ᵀ when fewer eigenvalues are negative, else V₊Λ₊V₊ᵀ. A noisy covariance has about
// half its spectrum below 0 (Fashion-MNIST's releases: 380–392 of 784), so m ≈ d/2 and the cost stays
// O(d³), with a smaller constant (figures: docs/performance.md, Kernels; the replay's in
// docs/tools.md, --nonnegative).
//
// Certificate: MRRR's eigenvectors can lose orthogonality in tight clusters, so the pairs used are
// checked first — residual ‖Tz − λz‖₂ ≤ 64·d·ε·‖T‖₁ for each, |ZᵀZ − I| ≤ 64·d·ε entrywise (the
// orders MRRR guarantees, with a margin). With both, the projection built from them is within
// O(d·ε·‖C‖) of the exact one, the order of the full solve's own backward error
// (tests/test_psd_projection.cpp checks 64·d·ε·‖C‖_F against the full solve). If a check or MRRR
// fails, the full solve runs instead (PsdRoute::full_solve is returned).
#pragma once

#include <memory>

#include <Eigen/Core>

namespace dpstream::linalg {

enum class PsdRoute {
  one_side,    // tridiagonal reduction, MRRR, the smaller side of 0 carried back, certificate
  full_solve,  // SelfAdjointEigenSolver: every eigenpair
};

// Replaces the symmetric matrix c (only its lower triangle is read) by its projection onto the
// positive semidefinite cone; both triangles are written, exactly symmetric. `route` one_side tries
// the cheap route and falls back; full_solve forces the full decomposition. Returns the route that
// produced the result. The caller checks that c is square and finite (a non-finite c gives a
// non-finite result); std::runtime_error if even the full solve does not converge.
PsdRoute project_psd(Eigen::Ref<Eigen::MatrixXd> c, PsdRoute route = PsdRoute::one_side);

// project_psd with its buffers kept from one call to the next, for callers that project repeatedly
// (one projector per thread). A one-side projection at dimension d works in ~2.5 d² doubles of
// temporaries (the reduction's copy, MRRR's d × d eigenvectors, the certificate's Gram): fresh ones
// each time cost page faults, ~1,000 per d × d at d = 784, a large share of a projection where
// faults are dear (virtual machines). Results are project_psd's, bit for bit.
class PsdProjector {
 public:
  PsdProjector();
  ~PsdProjector();
  PsdProjector(PsdProjector&&) noexcept;
  PsdProjector& operator=(PsdProjector&&) noexcept;
  PsdProjector(const PsdProjector&);             // buffers are not copied: a copy starts empty
  PsdProjector& operator=(const PsdProjector&);  // keeps its own

  PsdRoute project(Eigen::Ref<Eigen::MatrixXd> c, PsdRoute route = PsdRoute::one_side);

 private:
  struct Workspace;
  std::unique_ptr<Workspace> workspace_;
};

}  // namespace dpstream::linalg
