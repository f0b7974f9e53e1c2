#include "tridiagonal_reduction.hpp"

#include <algorithm>

#include <Eigen/Householder>

namespace dpstream::linalg::detail {

using Eigen::Index;
using Eigen::MatrixXd;

void TridiagonalReduction::compute(const Eigen::Ref<const MatrixXd>& c) {
  const Index d = c.rows();
  reflectors_ = c;
  sub_diagonal_.resize(std::max<Index>(d - 1, 0));
  tau_.resize(std::max<Index>(d - 1, 0));
  w_.resize(d, kPanel);
  vw_.resize(d, 2 * kPanel);
  wv_.resize(d, 2 * kPanel);
  scratch_v_.resize(kPanel);
  scratch_w_.resize(kPanel);
  for (Index first = 0; first + 1 < d; first += kPanel) reduce_panel(first, std::min(kPanel, d - 1 - first));
  diagonal_ = reflectors_.diagonal();
}

// Columns first … first + width − 1 (dlatrd), then the trailing triangle (dsytrd). A is the trailing
// matrix from `first` on; within the panel, column i is first brought up to date with the panel's
// earlier reflectors (A −= V·Wᵀ + W·Vᵀ, on that column only), its reflector made, and W's column
// computed from the trailing matrix as it was at the panel's start, corrected for those updates.
void TridiagonalReduction::reduce_panel(Index first, Index width) {
  const Index size = reflectors_.rows() - first;
  auto a = reflectors_.bottomRightCorner(size, size);
  auto w = w_.topLeftCorner(size, width);
  for (Index i = 0; i < width; ++i) {
    const Index below = size - i - 1;  // the rows the reflector acts on
    if (i > 0) {
      a.col(i).tail(size - i).noalias() -= a.block(i, 0, size - i, i) * w.row(i).head(i).transpose();
      a.col(i).tail(size - i).noalias() -= w.block(i, 0, size - i, i) * a.row(i).head(i).transpose();
    }
    double tau = 0, beta = 0;
    a.col(i).tail(below).makeHouseholderInPlace(tau, beta);
    sub_diagonal_(first + i) = beta;
    tau_(first + i) = tau;
    a(i + 1, i) = 1.0;  // v's leading 1, for the products below; β goes back after the panel
    const auto v = a.col(i).tail(below);
    auto wi = w.col(i).tail(below);
    wi.noalias() = a.bottomRightCorner(below, below).selfadjointView<Eigen::Lower>() * v;
    if (i > 0) {
      const auto v_done = a.block(i + 1, 0, below, i), w_done = w.block(i + 1, 0, below, i);
      scratch_w_.head(i).noalias() = w_done.transpose() * v;
      wi.noalias() -= v_done * scratch_w_.head(i);
      scratch_v_.head(i).noalias() = v_done.transpose() * v;
      wi.noalias() -= w_done * scratch_v_.head(i);
    }
    wi *= tau;
    wi += (-0.5 * tau * wi.dot(v)) * v;
  }
  const Index rest = size - width;
  if (rest > 0) {  // the trailing triangle: −= [V W]·[W V]ᵀ, one product on the lower triangle
    auto vw = vw_.topLeftCorner(rest, 2 * width), wv = wv_.topLeftCorner(rest, 2 * width);
    vw.leftCols(width) = a.block(width, 0, rest, width);
    vw.rightCols(width) = w.bottomRows(rest);
    wv.leftCols(width) = w.bottomRows(rest);
    wv.rightCols(width) = a.block(width, 0, rest, width);
    a.bottomRightCorner(rest, rest).triangularView<Eigen::Lower>() -= vw * wv.transpose();
  }
  for (Index i = 0; i < width; ++i) a(i + 1, i) = sub_diagonal_(first + i);
}

void TridiagonalReduction::apply_q(Eigen::Ref<MatrixXd> x) const {
  const Index d = reflectors_.rows();
  if (d < 2) return;
  Eigen::HouseholderSequence<MatrixXd, Eigen::VectorXd> q(reflectors_, tau_);
  q.setLength(d - 1).setShift(1);
  x.applyOnTheLeft(q);
}

}  // namespace dpstream::linalg::detail
