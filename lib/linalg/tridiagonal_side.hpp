// The eigenpairs of a symmetric tridiagonal T on the smaller side of 0 (internal header, not
// installed): what linalg/psd_projection.hpp's one-side route carries back, by LAPACK's MRRR run
// stage by stage so that only that side's eigenvectors are computed.
//
// Why not dstemr: asked for every pair it finds the eigenvalues by dqds and then computes all n
// eigenvectors, though the projection uses ~n/2; asked for an interval it finds the eigenvalues by
// bisection, slower than dqds for all of them. Here dstemr's own
// stages run with its settings (scaling, dlarrr's test for relative accuracy, tolerances, MINRGP):
// dlarre finds every eigenvalue (dqds), the side is read off their signs, and dlarrv computes the
// eigenvectors of that index range only (its DOL:DOU, there for this use): about 2/3 of dstemr's time
// (docs/performance.md, Kernels).
//
// The vectors are dstemr's up to sign and round-off, not bit for bit: with DOL:DOU set, dlarrv
// refines the eigenvalues of clusters to full accuracy by bisection where dstemr leaves that to its
// Rayleigh quotient iteration, and the two stop at different last bits (at n = 784: columns within
// 6e-14 of dstemr's, and the projections built from them within 1.4e-15 relative).
//
// dstemr itself (every pair) still answers when the side is not one index range of dlarrv's
// eigenvalues: when T splits into blocks (dlarre orders eigenvalues block by block), or when an
// eigenvalue next to the side's edge moved across 0 in the refinement (the side was read off the
// dqds values).
#pragma once

#include <vector>

#include <Eigen/Core>

namespace dpstream::linalg::detail {

class TridiagonalSide {
 public:
  // T's diagonal a (n ≥ 1) and subdiagonal b (n − 1 entries), finite. False if LAPACK fails.
  bool compute(const Eigen::VectorXd& a, const Eigen::VectorXd& b);

  // The side: the negative eigenvalues (≤ 0) when they are no more than the positive ones, else the
  // positive ones (> 0); its m values ascending, and their unit eigenvectors (n × m, by column; the
  // caller may overwrite them, until the next compute()).
  bool negative_side() const { return negative_; }
  Eigen::Ref<const Eigen::VectorXd> values() const { return values_.segment(first_, count_); }
  Eigen::Ref<Eigen::MatrixXd> vectors() { return vectors_.middleCols(first_, count_); }
  // Whether dlarrv computed the side alone (false: dstemr computed every pair; see above).
  bool side_only() const { return side_only_; }

 private:
  int load(const Eigen::VectorXd& a, const Eigen::VectorXd& b);
  bool side_by_stages(const Eigen::VectorXd& a, const Eigen::VectorXd& b);
  bool all_by_dstemr(const Eigen::VectorXd& a, const Eigen::VectorXd& b);
  void choose_side(const Eigen::VectorXd& signed_values, double shift);

  Eigen::Index first_ = 0, count_ = 0;
  bool negative_ = true, side_only_ = false;
  Eigen::VectorXd diagonal_, off_, values_;  // T's copies (LAPACK overwrites them), eigenvalues
  Eigen::MatrixXd vectors_;                  // n × n: dlarrv's Z, indexed by eigenvalue
  std::vector<double> work_;
  std::vector<int> iwork_, support_;
};

}  // namespace dpstream::linalg::detail
