#include "dpstream/linalg/psd_projection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <Eigen/Eigenvalues>

#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/linalg/mirror.hpp"
#include "tridiagonal_reduction.hpp"
#include "tridiagonal_side.hpp"

namespace dpstream::linalg {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

void full_solve(Eigen::Ref<MatrixXd> c) {
  const Index d = c.rows();
  const SymmetricEigenSolver eigen(c);
  if (eigen.info() != Eigen::Success) throw std::runtime_error("project_psd: SelfAdjointEigenSolver did not converge");
  const VectorXd& values = eigen.eigenvalues();  // ascending
  Index positive = 0;
  while (positive < d && values(d - 1 - positive) > 0) ++positive;
  const auto vectors = eigen.eigenvectors().rightCols(positive);
  const MatrixXd scaled = vectors * values.tail(positive).asDiagonal();
  c.noalias() = scaled * vectors.transpose();
  mirror_lower(c);  // the product's two triangles differ in the last bits
}

}  // namespace

// What one_side works in, kept between calls (the header says why).
struct PsdProjector::Workspace {
  detail::TridiagonalReduction reduction;
  detail::TridiagonalSide side;  // T's eigenpairs on the smaller side of 0
  VectorXd residual;
  MatrixXd gram;                 // the certificate's ZᵀZ (m × m)

  bool certified(const VectorXd& a, const VectorXd& b, double norm, const Eigen::Ref<const VectorXd>& side_values,
                 const Eigen::Ref<const MatrixXd>& z);
  bool one_side(Eigen::Ref<MatrixXd> c);
};

// The certificate (header): residuals on the tridiagonal and orthogonality.
bool PsdProjector::Workspace::certified(const VectorXd& a, const VectorXd& b, double norm,
                                        const Eigen::Ref<const VectorXd>& side_values,
                                        const Eigen::Ref<const MatrixXd>& z) {
  const Index n = a.size(), m = side_values.size();
  if (m == 0) return true;
  const double epsilon = std::numeric_limits<double>::epsilon();
  const double residual_bound = 64.0 * static_cast<double>(n) * epsilon * norm;
  residual.resize(n);
  for (Index j = 0; j < m; ++j) {
    const auto v = z.col(j);
    residual = (a.array() - side_values(j)) * v.array();
    residual.head(n - 1) += b.cwiseProduct(v.tail(n - 1));
    residual.tail(n - 1) += b.cwiseProduct(v.head(n - 1));
    if (!(residual.norm() <= residual_bound)) return false;
  }
  gram.setZero(m, m);
  gram.selfadjointView<Eigen::Lower>().rankUpdate(z.transpose());
  gram.diagonal().array() -= 1.0;
  const double orthogonality_bound = 64.0 * static_cast<double>(n) * epsilon;
  for (Index j = 0; j < m; ++j)  // the lower triangle (rankUpdate's); a NaN fails
    for (Index i = j; i < m; ++i)
      if (!(std::abs(gram(i, j)) <= orthogonality_bound)) return false;
  return true;
}

bool PsdProjector::Workspace::one_side(Eigen::Ref<MatrixXd> c) {
  const Index d = c.rows();
  reduction.compute(c);  // reads the lower triangle
  const VectorXd& a = reduction.diagonal();
  const VectorXd& b = reduction.sub_diagonal();
  double norm = 0;  // ‖T‖₁ = max row sum: bounds every eigenvalue
  for (Index i = 0; i < d; ++i)
    norm = std::max(norm, std::abs(a(i)) + (i > 0 ? std::abs(b(i - 1)) : 0.0) + (i + 1 < d ? std::abs(b(i)) : 0.0));
  if (norm == 0) return true;       // c = 0: already PSD
  if (!std::isfinite(norm)) return false;  // not for MRRR: the full solve passes it through
  if (!side.compute(a, b)) return false;
  // The smaller side: C − V₋Λ₋V₋ᵀ, or V₊Λ₊V₊ᵀ.
  const bool negative_side = side.negative_side();
  const auto side_values = side.values();
  auto vectors = side.vectors();  // worked on in place
  const Index m = side_values.size();
  if (!certified(a, b, norm, side_values, vectors)) return false;
  reduction.apply_q(vectors);  // eigenvectors of c (blocked Householder product)
  // Either way a rank update W Wᵀ of the lower triangle, W = V·|Λ|^½ (the product on one triangle
  // costs half a GEMM).
  // Column by column with the scalar square root, correctly rounded: Eigen's packet sqrt
  // (EIGEN_FAST_MATH, AVX-512) is not, and a vectorised scaling changed results in the last bit.
  for (Index j = 0; j < m; ++j) vectors.col(j) *= std::sqrt(std::abs(side_values(j)));
  if (!negative_side) c.triangularView<Eigen::Lower>().setZero();
  if (m > 0) c.selfadjointView<Eigen::Lower>().rankUpdate(vectors);
  return true;
}

PsdProjector::PsdProjector() : workspace_(std::make_unique<Workspace>()) {}
PsdProjector::~PsdProjector() = default;
PsdProjector::PsdProjector(PsdProjector&&) noexcept = default;
PsdProjector& PsdProjector::operator=(PsdProjector&&) noexcept = default;
PsdProjector::PsdProjector(const PsdProjector&) : PsdProjector() {}
PsdProjector& PsdProjector::operator=(const PsdProjector&) { return *this; }

PsdRoute PsdProjector::project(Eigen::Ref<MatrixXd> c, PsdRoute route) {
  if (c.rows() == 0) return route;
  if (route == PsdRoute::one_side && c.rows() > 1 && workspace_->one_side(c)) {
    mirror_lower(c);
    return PsdRoute::one_side;
  }
  full_solve(c);
  return PsdRoute::full_solve;
}

PsdRoute project_psd(Eigen::Ref<MatrixXd> c, PsdRoute route) { return PsdProjector().project(c, route); }

}  // namespace dpstream::linalg
