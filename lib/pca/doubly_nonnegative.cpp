#include "dpstream/pca/doubly_nonnegative.hpp"

#include <string>

#include "dpstream/errors.hpp"
#include "dpstream/linalg/psd_projection.hpp"
#include "dpstream/pca/subspace.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;

void project_doubly_nonnegative(Eigen::Ref<MatrixXd> c, int rounds) {
  if (rounds < 1)
    throw InvalidParameter("project_doubly_nonnegative: rounds must be >= 1, got " + std::to_string(rounds));
  require_symmetric("project_doubly_nonnegative", c);
  const Index d = c.rows();
  for (int round = 0; round < rounds; ++round) {
    linalg::project_psd(c);  // reads the lower triangle, which the last round left equal to the upper
    // Orthant projection, entry by entry on the lower triangle and mirrored: the result stays exactly
    // symmetric (released covariances are).
    for (Index j = 0; j < d; ++j)
      for (Index i = j; i < d; ++i) {
        const double entry = c(i, j) > 0 ? c(i, j) : 0.0;
        c(i, j) = entry;
        c(j, i) = entry;
      }
  }
}

}  // namespace dpstream::pca
