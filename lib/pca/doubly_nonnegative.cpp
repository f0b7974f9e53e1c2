#include "dpstream/pca/doubly_nonnegative.hpp"

#include <string>


#include "dpstream/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/subspace.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;

void project_doubly_nonnegative(Eigen::Ref<MatrixXd> c, int rounds) {
  if (rounds < 1)
    throw InvalidParameter("project_doubly_nonnegative: rounds must be >= 1, got " + std::to_string(rounds));
  require_symmetric("project_doubly_nonnegative", c);
  const Index d = c.rows();
  linalg::SymmetricEigenSolver eigen(d);
  MatrixXd scaled;
  for (int round = 0; round < rounds; ++round) {
    eigen.compute(c);  // reads the lower triangle, which the last round left equal to the upper
    const auto& values = eigen.eigenvalues();  // ascending
    Index positive = 0;
    while (positive < d && values(d - 1 - positive) > 0) ++positive;
    // PSD projection V₊Λ₊V₊ᵀ: only the positive eigenpairs, one d × d × p product.
    const auto vectors = eigen.eigenvectors().rightCols(positive);
    scaled.noalias() = vectors * values.tail(positive).asDiagonal();
    c.noalias() = scaled * vectors.transpose();
    // Orthant projection on the lower triangle, mirrored: the product's two triangles differ in the
    // last bits, and the result must be exactly symmetric (released covariances are).
    for (Index j = 0; j < d; ++j)
      for (Index i = j; i < d; ++i) {
        const double entry = c(i, j) > 0 ? c(i, j) : 0.0;
        c(i, j) = entry;
        c(j, i) = entry;
      }
  }
}

}  // namespace dpstream::pca
