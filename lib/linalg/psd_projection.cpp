#include "dpstream/linalg/psd_projection.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include <Eigen/Eigenvalues>

#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/linalg/mirror.hpp"
#include "tridiagonal_reduction.hpp"

// LAPACK (liblapack3, reference or any other provider): the symmetric tridiagonal MRRR solver.
// gfortran passes each CHARACTER argument's length after the others.
extern "C" void dstemr_(const char* jobz, const char* range, const int* n, double* d, double* e, const double* vl,
                        const double* vu, const int* il, const int* iu, int* m, double* w, double* z, const int* ldz,
                        const int* nzc, int* isuppz, int* tryrac, double* work, const int* lwork, int* iwork,
                        const int* liwork, int* info, std::size_t jobz_length, std::size_t range_length);

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
  VectorXd diagonal, off, values, residual;  // T's diagonal and subdiagonal (dstemr overwrites its copies)
  MatrixXd pairs;                            // T's eigenvectors, by column (d × d)
  MatrixXd gram;                             // the certificate's ZᵀZ (m × m)
  std::vector<int> support, iwork;
  std::vector<double> work;

  bool tridiagonal_pairs(const VectorXd& a, const VectorXd& b);
  bool certified(const VectorXd& a, const VectorXd& b, double norm, const Eigen::Ref<const VectorXd>& side_values,
                 const Eigen::Ref<const MatrixXd>& z);
  bool one_side(Eigen::Ref<MatrixXd> c);
};

// MRRR for every eigenpair of the tridiagonal (into values, ascending, and pairs); false if dstemr
// fails. All of them, not the interval of one side: dstemr finds all eigenvalues by dqds but an
// interval's by bisection, which took longer for half the spectrum than dqds for all of it (80
// against 55 ms at d = 784).
bool PsdProjector::Workspace::tridiagonal_pairs(const VectorXd& a, const VectorXd& b) {
  const int n = static_cast<int>(a.size());
  diagonal = a;  // dstemr overwrites both; its E has n entries
  off.resize(n);
  off.head(n - 1) = b;
  off(n - 1) = 0;
  const double unused_bound = 0;
  int unused_index = 0, m = 0, info = 0, tryrac = 1;
  support.resize(2 * static_cast<std::size_t>(n));
  const int lwork = 18 * n, liwork = 10 * n;
  work.resize(static_cast<std::size_t>(lwork));
  iwork.resize(static_cast<std::size_t>(liwork));
  values.resize(n);
  pairs.resize(n, n);
  dstemr_("V", "A", &n, diagonal.data(), off.data(), &unused_bound, &unused_bound, &unused_index, &unused_index, &m,
          values.data(), pairs.data(), &n, &n, support.data(), &tryrac, work.data(), &lwork, iwork.data(), &liwork,
          &info, 1, 1);
  return info == 0 && m == n;
}

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
  if (!tridiagonal_pairs(a, b)) return false;
  Index negatives = 0;
  while (negatives < d && values(negatives) <= 0) ++negatives;
  // The smaller side: C − V₋Λ₋V₋ᵀ, or V₊Λ₊V₊ᵀ.
  const bool negative_side = negatives <= d - negatives;
  const Index first = negative_side ? 0 : negatives, m = negative_side ? negatives : d - negatives;
  const auto side_values = values.segment(first, m);
  auto vectors = pairs.middleCols(first, m);  // worked on in place
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
