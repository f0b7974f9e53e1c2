// The checks a symmetric matrix argument in pca/ gets (subspace.hpp, doubly_nonnegative.hpp), and
// the one pass that builds a symmetric matrix from one triangle (internal header, not installed).
// The check and the expansions read each d × d matrix once, in 32 × 32 tiles, and can write the
// float copy a single-precision refresh needs in the same pass (subspace.cpp says why: at d = 2048
// these passes are memory-bound).
#pragma once

#include <Eigen/Core>

namespace dpstream::pca::detail {

struct MatrixSummary {
  double max_abs = 0;
  double frobenius = 0;
};

// Square, non-empty, finite and symmetric within kSymmetryTolerance·max|C_ij| (subspace.hpp);
// InvalidParameter naming `fn` and the entry otherwise. If `single` is given, c rounded to float is
// written there in the same pass.
MatrixSummary check_symmetric(const char* fn, const Eigen::Ref<const Eigen::MatrixXd>& c,
                              Eigen::MatrixXf* single = nullptr);

// The symmetric matrix whose upper triangle is upper's, into `full` (and in float into `single`, if
// given), reading the upper triangle only; finite, else InvalidParameter naming the entry. Its
// summary is check_symmetric's for `full`, bit for bit.
MatrixSummary expand_upper(const char* fn, const Eigen::Ref<const Eigen::MatrixXd>& upper, Eigen::MatrixXd& full,
                           Eigen::MatrixXf* single);
// The same without `full`: only the float copy (for a single-precision refresh that reads the
// double matrix from `upper` itself, linalg::symmetric_product_upper), the same summary.
MatrixSummary expand_upper_single(const char* fn, const Eigen::Ref<const Eigen::MatrixXd>& upper,
                                  Eigen::MatrixXf& single);
// The same from c's lower triangle, in place: the strict upper triangle is not read but overwritten
// with the mirror (even when an entry is not finite; the lower triangle is left as it is).
MatrixSummary expand_lower_in_place(const char* fn, Eigen::Ref<Eigen::MatrixXd> c, Eigen::MatrixXf* single);

// c's lower triangle finite (c square, the caller's check), else InvalidParameter naming `fn` and
// the first non-finite entry; the strict upper triangle is not read.
void require_finite_lower(const char* fn, const Eigen::Ref<const Eigen::MatrixXd>& c);

}  // namespace dpstream::pca::detail
