#include "dpstream/linalg/mirror.hpp"

#include <algorithm>

#include "transpose_tile.hpp"

namespace dpstream::linalg {

using detail::kTile;
using detail::transpose_tile;
using Eigen::Index;

// Off the diagonal, each tile is written column by column from its mirror transposed in a buffer
// (transpose_tile.hpp says why); in a diagonal tile the few entries are copied one by one.
void mirror_lower(Eigen::Ref<Eigen::MatrixXd> c) {
  const Index d = c.rows(), stride = c.outerStride();
  alignas(64) double tile[kTile * kTile];
  for (Index j0 = 0; j0 < d; j0 += kTile)
    for (Index i0 = 0; i0 <= j0; i0 += kTile) {  // upper tile c(i0.., j0..) ← lower tile c(j0.., i0..)
      const Index jn = std::min(kTile, d - j0), in = std::min(kTile, d - i0);
      if (i0 == j0) {
        for (Index j = j0; j < j0 + jn; ++j)
          for (Index i = j0; i < j; ++i) c(i, j) = c(j, i);
        continue;
      }
      transpose_tile(c.data() + i0 * stride + j0, stride, jn, in, tile);  // tile[i + j·kTile] = c(j0 + j, i0 + i)
      for (Index j = 0; j < jn; ++j) std::copy_n(tile + j * kTile, in, c.data() + (j0 + j) * stride + i0);
    }
}

void mirror_upper(Eigen::Ref<Eigen::MatrixXd> c) {
  const Index d = c.rows(), stride = c.outerStride();
  alignas(64) double tile[kTile * kTile];
  for (Index j0 = 0; j0 < d; j0 += kTile)
    for (Index i0 = j0; i0 < d; i0 += kTile) {  // lower tile c(i0.., j0..) ← upper tile c(j0.., i0..)
      const Index jn = std::min(kTile, d - j0), in = std::min(kTile, d - i0);
      if (i0 == j0) {
        for (Index j = j0; j < j0 + jn; ++j)
          for (Index i = j + 1; i < j0 + jn; ++i) c(i, j) = c(j, i);
        continue;
      }
      transpose_tile(c.data() + i0 * stride + j0, stride, jn, in, tile);  // tile[i + j·kTile] = c(j0 + j, i0 + i)
      for (Index j = 0; j < jn; ++j) std::copy_n(tile + j * kTile, in, c.data() + (j0 + j) * stride + i0);
    }
}

}  // namespace dpstream::linalg
