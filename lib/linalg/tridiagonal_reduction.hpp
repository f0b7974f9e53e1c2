// Householder reduction of a symmetric matrix to tridiagonal form, C = Q·T·Qᵀ, blocked as LAPACK's
// dsytrd / dlatrd (lower) (internal header, not installed): what linalg/psd_projection.hpp's
// one-side route starts from.
//
// Why not Eigen's Tridiagonalization: it is unblocked, and each of its d steps reads the trailing
// triangle for a product and reads and writes it again for a rank-2 update, from memory once the
// matrix outgrows the caches. Here kPanel columns are reduced against the untouched trailing matrix
// (their pending updates folded into each column's product), and the trailing triangle is updated
// once per panel by a rank-2·kPanel product (GEMM-shaped): 1.4-2× faster than Eigen's at
// d = 784-4096 (docs/performance.md, Kernels). The same reflector convention as Eigen's (Q = H₀·H₁⋯, v = (0…0, 1, essential)), so Q is
// applied with Eigen's blocked HouseholderSequence.
#pragma once

#include <Eigen/Core>

namespace dpstream::linalg::detail {

class TridiagonalReduction {
 public:
  // Reduces the symmetric matrix whose lower triangle is c's (d ≥ 1; the strict upper one is not
  // read). No checks: a non-finite c gives non-finite outputs.
  void compute(const Eigen::Ref<const Eigen::MatrixXd>& c);
  const Eigen::VectorXd& diagonal() const { return diagonal_; }          // T's, d entries
  const Eigen::VectorXd& sub_diagonal() const { return sub_diagonal_; }  // T's, d − 1 entries
  // x ← Q·x (x: d rows).
  void apply_q(Eigen::Ref<Eigen::MatrixXd> x) const;

 private:
  static constexpr Eigen::Index kPanel = 32;  // 16 and 48 were slower at d = 784
  void reduce_panel(Eigen::Index first, Eigen::Index width);

  Eigen::MatrixXd reflectors_;  // c, then the reflectors' essential parts below the subdiagonal
  Eigen::VectorXd diagonal_, sub_diagonal_, tau_;
  Eigen::MatrixXd w_;           // a panel's W (LAPACK's dlatrd), d × kPanel
  Eigen::MatrixXd vw_, wv_;     // [V W] and [W V] for the trailing update, d × 2·kPanel
  Eigen::VectorXd scratch_v_, scratch_w_;  // Vᵀv and Wᵀv within a panel
};

}  // namespace dpstream::linalg::detail
