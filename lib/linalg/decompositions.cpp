// The one translation unit that instantiates Eigen's dense decompositions (see the header for why).
#include "dpstream/linalg/decompositions.hpp"

#include <algorithm>

namespace dpstream::linalg {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

SymmetricEigenSolver::SymmetricEigenSolver(Index size) : solver_(size) {}

SymmetricEigenSolver::SymmetricEigenSolver(const Eigen::Ref<const MatrixXd>& a, int options)
    : solver_(a.rows()) {
  compute(a, options);
}

SymmetricEigenSolver& SymmetricEigenSolver::compute(const Eigen::Ref<const MatrixXd>& a, int options) {
  solver_.compute(a, options);
  return *this;
}

SymmetricEigenSolver& SymmetricEigenSolver::compute_from_tridiagonal(const Eigen::Ref<const VectorXd>& diagonal,
                                                                     const Eigen::Ref<const VectorXd>& subdiagonal,
                                                                     int options) {
  solver_.computeFromTridiagonal(diagonal, subdiagonal, options);
  return *this;
}

HouseholderQr::HouseholderQr(const Eigen::Ref<const MatrixXd>& a) : qr_(a) {}

MatrixXd HouseholderQr::q() const { return qr_.householderQ(); }

MatrixXd HouseholderQr::q(Index columns) const {
  return qr_.householderQ() * MatrixXd::Identity(qr_.rows(), columns);
}

MatrixXd HouseholderQr::q_nonnegative_r() const {
  MatrixXd out = q();
  make_r_nonnegative(out);
  return out;
}

MatrixXd HouseholderQr::q_nonnegative_r(Index columns) const {
  MatrixXd out = q(columns);
  make_r_nonnegative(out);
  return out;
}

void HouseholderQr::make_r_nonnegative(MatrixXd& q) const {
  const Index diagonal = std::min({q.cols(), qr_.rows(), qr_.cols()});
  for (Index j = 0; j < diagonal; ++j)
    if (qr_.matrixQR()(j, j) < 0) q.col(j) *= -1.0;
}

MatrixXd HouseholderQr::r() const {
  return qr_.matrixQR().topRows(std::min(qr_.rows(), qr_.cols())).triangularView<Eigen::Upper>();
}

JacobiSvd::JacobiSvd(const Eigen::Ref<const MatrixXd>& a, unsigned options) : svd_(a, options) {}

VectorXd singular_values(const Eigen::Ref<const MatrixXd>& a) { return JacobiSvd(a).singular_values(); }

}  // namespace dpstream::linalg
