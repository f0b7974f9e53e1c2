#include "dpstream/linalg/mirror.hpp"

#include <algorithm>

#include "transpose_tile.hpp"

namespace dpstream::linalg {

using detail::kTile;
using detail::transpose_tile;
using Eigen::Index;

namespace {

// The off-diagonal tile c(i0.., j0..) ← the transpose of its mirror c(j0.., i0..), written column
// by column from `tile` (kTile² doubles, 64-byte aligned; transpose_tile.hpp says why a buffer).
void tile_from_mirror(Eigen::Ref<Eigen::MatrixXd> c, Index i0, Index j0, double* tile) {
  const Index d = c.rows(), stride = c.outerStride();
  const Index jn = std::min(kTile, d - j0), in = std::min(kTile, d - i0);
  transpose_tile(c.data() + i0 * stride + j0, stride, jn, in, tile);  // tile[i + j·kTile] = c(j0 + j, i0 + i)
  for (Index j = 0; j < jn; ++j) std::copy_n(tile + j * kTile, in, c.data() + (j0 + j) * stride + i0);
}

}  // namespace

// In a diagonal tile the few entries are copied one by one.
void mirror_lower(Eigen::Ref<Eigen::MatrixXd> c) {
  const Index d = c.rows();
  alignas(64) double tile[kTile * kTile];
  for (Index j0 = 0; j0 < d; j0 += kTile) {
    for (Index i0 = 0; i0 < j0; i0 += kTile) tile_from_mirror(c, i0, j0, tile);  // upper ← lower
    for (Index j = j0; j < std::min(j0 + kTile, d); ++j)
      for (Index i = j0; i < j; ++i) c(i, j) = c(j, i);
  }
}

void mirror_upper(Eigen::Ref<Eigen::MatrixXd> c) {
  const Index d = c.rows();
  alignas(64) double tile[kTile * kTile];
  for (Index j0 = 0; j0 < d; j0 += kTile) {
    for (Index i0 = j0 + kTile; i0 < d; i0 += kTile) tile_from_mirror(c, i0, j0, tile);  // lower ← upper
    const Index end = std::min(j0 + kTile, d);
    for (Index j = j0; j < end; ++j)
      for (Index i = j + 1; i < end; ++i) c(i, j) = c(j, i);
  }
}

}  // namespace dpstream::linalg
