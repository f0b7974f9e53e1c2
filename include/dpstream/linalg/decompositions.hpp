// Eigen's dense decompositions, instantiated once, in the library.
//
// Why this header exists: Eigen's SelfAdjointEigenSolver, HouseholderQR and JacobiSVD are templates
// that every translation unit using them compiles anew, for seconds each with -march=native -O2 and
// tens of seconds under ASan + UBSan. Used from ~30 files, they were most of the build. These classes hold the
// Eigen object and forward to it, so the results are Eigen's, bit for bit; only the instantiation
// moves to lib/linalg/decompositions.cpp. Call sites that reuse one solver keep its workspace.
#pragma once

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <Eigen/SVD>

#include "dpstream/linalg/dense_kernels.hpp"

namespace dpstream::linalg {

// Eigenvalues (ascending) and, unless Eigen::EigenvaluesOnly, orthonormal eigenvectors of a symmetric
// matrix; only the lower triangle is read.
class SymmetricEigenSolver {
 public:
  explicit SymmetricEigenSolver(Eigen::Index size = 0);  // workspace for size × size, nothing computed
  explicit SymmetricEigenSolver(const Eigen::Ref<const Eigen::MatrixXd>& a,
                                int options = Eigen::ComputeEigenvectors);

  SymmetricEigenSolver& compute(const Eigen::Ref<const Eigen::MatrixXd>& a, int options = Eigen::ComputeEigenvectors);
  // The symmetric tridiagonal matrix with this diagonal and subdiagonal (one entry shorter).
  SymmetricEigenSolver& compute_from_tridiagonal(const Eigen::Ref<const Eigen::VectorXd>& diagonal,
                                                 const Eigen::Ref<const Eigen::VectorXd>& subdiagonal,
                                                 int options = Eigen::ComputeEigenvectors);

  const Eigen::VectorXd& eigenvalues() const { return solver_.eigenvalues(); }
  const Eigen::MatrixXd& eigenvectors() const { return solver_.eigenvectors(); }
  Eigen::ComputationInfo info() const { return solver_.info(); }

 private:
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver_;
};

// A = QR by Householder reflections (orthonormal to rounding even when A is ill-conditioned).
class HouseholderQr {
 public:
  explicit HouseholderQr(const Eigen::Ref<const Eigen::MatrixXd>& a);

  Eigen::MatrixXd q() const;                     // rows × rows
  Eigen::MatrixXd q(Eigen::Index columns) const;  // its first `columns` columns (the thin Q)
  // The same with each column's sign chosen so that R's diagonal is nonnegative: the factorisation of
  // a full-rank A is then unique (column j keeps the direction of A's first j + 1 columns), and Q is
  // Haar-distributed when A is a square Gaussian matrix.
  Eigen::MatrixXd q_nonnegative_r() const;
  Eigen::MatrixXd q_nonnegative_r(Eigen::Index columns) const;
  // The thin R: min(rows, cols) × cols, upper triangular (its diagonal carries Eigen's signs).
  Eigen::MatrixXd r() const;

 private:
  // Flips the columns of q whose R diagonal entry is negative.
  void make_r_nonnegative(Eigen::MatrixXd& q) const;

  Eigen::HouseholderQR<Eigen::MatrixXd> qr_;
};

// Two-sided Jacobi SVD (accurate small singular values). `options`: Eigen::ComputeThinU/FullU and
// ComputeThinV/FullV, or 0 for the singular values alone (descending).
class JacobiSvd {
 public:
  explicit JacobiSvd(const Eigen::Ref<const Eigen::MatrixXd>& a, unsigned options = 0);

  const Eigen::VectorXd& singular_values() const { return svd_.singularValues(); }
  const Eigen::MatrixXd& u() const { return svd_.matrixU(); }
  const Eigen::MatrixXd& v() const { return svd_.matrixV(); }

 private:
  Eigen::JacobiSVD<Eigen::MatrixXd> svd_;
};

// The singular values alone, descending.
Eigen::VectorXd singular_values(const Eigen::Ref<const Eigen::MatrixXd>& a);

}  // namespace dpstream::linalg
