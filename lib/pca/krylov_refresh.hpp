// The thick-restarted block Lanczos refresh behind SubspaceTracker and refresh_top_k
// (subspace.hpp; internal header, not installed): the buffers it keeps between calls, the matrix it
// reads in double precision, and the refresh itself.
#pragma once

#include <Eigen/Core>

#include "dpstream/linalg/symmetric_product.hpp"
#include "dpstream/pca/subspace.hpp"
#include "symmetric_input.hpp"

namespace dpstream::pca {

// Buffers of the Krylov refresh, kept by a SubspaceTracker between calls.
struct KrylovWorkspace {
  Eigen::MatrixXd q, w, h;
  Eigen::MatrixXd c_full;  // refresh_upper in double precision or for a full solve: both triangles
  Eigen::MatrixXf c_single, q_single, w_single;  // single precision: Ĉ, the basis Q and W = ĈQ (all blocks)
};

namespace detail {

// The top `count` eigenpairs of c, algebraic order, from the full eigendecomposition.
// SelfAdjointEigenSolver sorts ascending, so the top ones are the last columns, reversed.
TopEigen full_top(const Eigen::Ref<const Eigen::MatrixXd>& c, Eigen::Index count);

// The matrix a refresh reads in double precision (every product in double, the certificate's
// product ĈV in single precision, a full solve): c itself, or, from refresh_upper in single
// precision, the upper triangle it was given, read in place (linalg::symmetric_product_upper, the
// same product bit for bit); a full solve, a rare fallback there, first expands it into `full_space`.
class DoubleMatrix {
 public:
  explicit DoubleMatrix(const Eigen::Ref<const Eigen::MatrixXd>& c) : c_(c) {}
  DoubleMatrix(const Eigen::Ref<const Eigen::MatrixXd>& upper, Eigen::MatrixXd& full_space) : c_(upper), full_space_(&full_space) {}
  Eigen::Index rows() const { return c_.rows(); }
  void product(const Eigen::Ref<const Eigen::MatrixXd>& q, Eigen::Ref<Eigen::MatrixXd> w) const {
    if (full_space_ != nullptr)
      linalg::symmetric_product_upper(c_, q, w);
    else
      linalg::symmetric_product(c_, q, w);
  }
  TopEigen top(Eigen::Index count) const {
    if (full_space_ == nullptr) return full_top(c_, count);
    expand_upper("SubspaceTracker::refresh_upper", c_, *full_space_, nullptr);
    return full_top(*full_space_, count);
  }

 private:
  const Eigen::Ref<const Eigen::MatrixXd>& c_;
  Eigen::MatrixXd* full_space_ = nullptr;
};

// Where the input's check (check_symmetric or expand_upper) writes its float copy: ws.c_single when
// the refresh's block products run in single precision, nowhere for a full solve or in double.
Eigen::MatrixXf* float_copy(const RefreshOptions& o, KrylovWorkspace& ws, bool full_solve);

// The thick-restarted block Lanczos refresh (subspace.hpp says how it stops). c is validated by the caller and
// `frobenius` is ‖c‖_F from that check (which also left c in float in ws.c_single, float_copy, if
// the products run in single precision). Leaves the k + p Ritz vectors in `block`; returns the top k.
// `ws` holds the buffers between calls (no allocation, hence no page faults, per refresh).
TopEigen krylov_refresh(const DoubleMatrix& c, double frobenius, const Eigen::Ref<const Eigen::MatrixXd>& start,
                        Eigen::Index k, const RefreshOptions& o, RefreshStats& stats, Eigen::MatrixXd& block,
                        KrylovWorkspace& ws, double residual_floor = 0);

}  // namespace detail

}  // namespace dpstream::pca
