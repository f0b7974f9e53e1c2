// A symmetric matrix by its lower triangle, column by column (d(d+1)/2 values): the layout of
// proto::SymmetricMatrix in checkpoints. The replay runs its StationaryEstimate on releases in this
// form, so that its checkpoint is a copy of the state; symmetric releases lose nothing.
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/linalg/mirror.hpp"

namespace dpstream::linalg {

// out (sized d(d+1)/2 by the caller; InvalidParameter otherwise) ← m's lower triangle.
void pack_lower(const Eigen::MatrixXd& m, Eigen::Ref<Eigen::VectorXd> out);
// d for d(d+1)/2 = n values; InvalidParameter naming `what` if n is no such number.
Eigen::Index packed_side(Eigen::Index n, const std::string& what);
// out (resized to d × d) ← the lower triangle only; the strict upper one is left as it was, for a
// reader of one triangle (pca::FplOnlinePca::follow_lower). `packed` may be an Eigen expression (the
// stationary estimate's prefix): it is evaluated column by column, without a temporary.
template <class Packed>
void unpack_lower_triangle(const Eigen::MatrixBase<Packed>& packed, Eigen::MatrixXd& out) {
  const Eigen::Index d = packed_side(packed.size(), "unpack_lower");
  out.resize(d, d);
  for (Eigen::Index j = 0, offset = 0; j < d; offset += d - j, ++j)
    out.col(j).tail(d - j) = packed.segment(offset, d - j);
}
// out ← the d × d matrix, both triangles, exactly symmetric.
template <class Packed>
void unpack_lower(const Eigen::MatrixBase<Packed>& packed, Eigen::MatrixXd& out) {
  unpack_lower_triangle(packed, out);
  mirror_lower(out);
}

}  // namespace dpstream::linalg
