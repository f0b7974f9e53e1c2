#include "dpstream/linalg/mirror.hpp"

#include <algorithm>

namespace dpstream::linalg {

using Eigen::Index;

namespace {
constexpr Index kTile = 32;
}

void mirror_lower(Eigen::Ref<Eigen::MatrixXd> c) {
  const Index d = c.rows();
  for (Index j0 = 0; j0 < d; j0 += kTile)
    for (Index i0 = j0; i0 < d; i0 += kTile) {
      const Index jn = std::min(kTile, d - j0), in = std::min(kTile, d - i0);
      for (Index i = i0; i < i0 + in; ++i)  // upper column i ← lower row i, tile by tile
        for (Index j = j0; j < std::min(j0 + jn, i); ++j) c(j, i) = c(i, j);
    }
}

void mirror_upper(Eigen::Ref<Eigen::MatrixXd> c) {
  const Index d = c.rows();
  for (Index j0 = 0; j0 < d; j0 += kTile)
    for (Index i0 = j0; i0 < d; i0 += kTile) {
      const Index jn = std::min(kTile, d - j0), in = std::min(kTile, d - i0);
      for (Index j = j0; j < j0 + jn; ++j)  // lower column j ← upper row j, tile by tile
        for (Index i = std::max(i0, j + 1); i < i0 + in; ++i) c(i, j) = c(j, i);
    }
}

}  // namespace dpstream::linalg
