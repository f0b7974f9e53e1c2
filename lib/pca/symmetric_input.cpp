#include "symmetric_input.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "../linalg/transpose_tile.hpp"
#include "matrix_checks.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"

namespace dpstream::pca::detail {

using Eigen::Index;
using Eigen::MatrixXd;
using base::format_value;
using linalg::detail::kTile;
using linalg::detail::transpose_tile;

namespace {
void require_square(const char* fn, Index rows, Index cols) {
  if (rows != cols || rows == 0)
    throw InvalidParameter(std::string(fn) + ": matrix must be square and non-empty, got " + detail::dims(rows, cols));
}
// InvalidParameter naming `fn` and the first non-finite entry of c's lower (else upper) triangle,
// column by column; for a caller whose pass found one (returns if there is none).
void name_non_finite(const char* fn, const Eigen::Ref<const MatrixXd>& c, bool lower) {
  const Index d = c.rows();
  for (Index j = 0; j < d; ++j)
    for (Index i = lower ? j : 0; i < (lower ? d : j + 1); ++i)
      if (!std::isfinite(c(i, j)))
        throw InvalidParameter(std::string(fn) + ": matrix(" + std::to_string(i) + "," + std::to_string(j) +
                               ") is not finite, got " + format_value(c(i, j)));
}
// What the passes below sum over a column of a tile: max|x|, Σ x², Σ 0·x (0 while every entry is
// finite, NaN otherwise) and, when a mirror is given, max|x − mirror|.
struct ColumnSums {
  double max_abs = 0, sum_sq = 0, zeros = 0, max_mismatch = 0;
};

// Packet by packet (entry i in lane i mod the packet size), the lanes combined by Eigen's predux
// and the last n mod size entries added after them: a fixed order, so every pass gives the same
// sums bit for bit, and vector arithmetic, where a plain loop's running sum is a chain of dependent
// adds the compiler may not reorder (such loops made the check half as slow again as one with no
// sums at all).
template <bool kMirror>
ColumnSums column_sums(const double* x, const double* mirror, Index n) {
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<double>::type;
  constexpr Index kSize = ei::packet_traits<double>::size;
  const Packet none = ei::pset1<Packet>(0.0);
  Packet abs = none, sq = none, zero = none, mismatch = none;
  Index i = 0;
  for (; i + kSize <= n; i += kSize) {
    const Packet v = ei::ploadu<Packet>(x + i);
    abs = ei::pmax(abs, ei::pabs(v));
    sq = ei::padd(sq, ei::pmul(v, v));
    zero = ei::padd(zero, ei::pmul(v, none));
    if constexpr (kMirror) {
      const Packet m = ei::ploadu<Packet>(mirror + i);
      mismatch = ei::pmax(mismatch, ei::pabs(ei::psub(v, m)));
      zero = ei::padd(zero, ei::pmul(m, none));
    }
  }
  ColumnSums out{ei::predux_max(abs), ei::predux(sq), ei::predux(zero), ei::predux_max(mismatch)};
  for (; i < n; ++i) {
    const double a = std::abs(x[i]);
    out.max_abs = out.max_abs > a ? out.max_abs : a;
    out.sum_sq += x[i] * x[i];
    out.zeros += x[i] * 0.0;
    if constexpr (kMirror) {
      const double m = std::abs(x[i] - mirror[i]);
      out.max_mismatch = out.max_mismatch > m ? out.max_mismatch : m;
      out.zeros += mirror[i] * 0.0;
    }
  }
  return out;
}

}  // namespace

// Square, finite and symmetric within kSymmetryTolerance·max|C_ij|. One pass over memory: each
// tile above the diagonal is checked together with its mirror while both are in cache. If `single`
// is given, c rounded to float is written there in the same pass (a refresh in single precision
// needs it; at d = 2048 the pass is memory-bound and a second one would cost 40% more).
MatrixSummary check_symmetric(const char* fn, const Eigen::Ref<const MatrixXd>& c, Eigen::MatrixXf* single) {
  require_square(fn, c.rows(), c.cols());
  const Index d = c.rows();
  if (single != nullptr) single->resize(d, d);
  alignas(64) double mirror[kTile * kTile];  // the mirror tile, transposed: mirror[i + j·kTile] = c(j0 + j, i0 + i)
  double max_abs = 0, sum_sq = 0, max_asym = 0, zeros = 0;
  for (Index j0 = 0; j0 < d; j0 += kTile)
    for (Index i0 = 0; i0 <= j0; i0 += kTile) {
      const Index jn = std::min(kTile, d - j0), in = std::min(kTile, d - i0);
      transpose_tile(c.data() + i0 * c.outerStride() + j0, c.outerStride(), jn, in, mirror);  // the tile c(j0.., i0..)
      if (single != nullptr)
        for (Index i = 0; i < in; ++i) {
          const double* lower = c.data() + (i0 + i) * c.outerStride() + j0;  // c(j0.., i0 + i)
          float* to = single->data() + (i0 + i) * d + j0;
          for (Index j = 0; j < jn; ++j) to[j] = static_cast<float>(lower[j]);
        }
      double tile_sq = 0;
      for (Index j = 0; j < jn; ++j) {
        const double* upper = c.data() + (j0 + j) * c.outerStride() + i0;  // c(i0.., j0 + j)
        const double* lower_t = &mirror[j * kTile];
        if (single != nullptr)
          for (Index i = 0; i < in; ++i) (*single)(i0 + i, j0 + j) = static_cast<float>(upper[i]);
        // 0·x is 0 for every finite x and NaN otherwise, so `zeros` stays 0 exactly while every
        // entry is finite (a NaN also defeats the comparisons).
        const ColumnSums sums = column_sums<true>(upper, lower_t, in);
        max_abs = std::max(max_abs, sums.max_abs);
        max_asym = std::max(max_asym, sums.max_mismatch);
        tile_sq += sums.sum_sq;
        zeros += sums.zeros;
      }
      sum_sq += (i0 == j0 ? 1.0 : 2.0) * tile_sq;  // an off-diagonal tile stands for its mirror too
    }
  const bool finite = std::isfinite(zeros);
  if (!finite)
    for (Index j = 0; j < d; ++j)
      for (Index i = 0; i < d; ++i)
        if (!std::isfinite(c(i, j)))
          throw InvalidParameter(std::string(fn) + ": matrix(" + std::to_string(i) + "," + std::to_string(j) +
                                 ") is not finite, got " + format_value(c(i, j)));
  if (max_asym > kSymmetryTolerance * max_abs) {
    Index ai = 0, aj = 0;  // where the largest mismatch is, for the message
    (c - c.transpose()).cwiseAbs().maxCoeff(&ai, &aj);
    throw InvalidParameter(std::string(fn) + ": matrix is not symmetric: |C(" + std::to_string(ai) + "," +
                           std::to_string(aj) + ") - C(" + std::to_string(aj) + "," + std::to_string(ai) +
                           ")| = " + format_value(max_asym) + " exceeds 1e-10 * max|C_ij| = " +
                           format_value(kSymmetryTolerance * max_abs));
  }
  // Within the tolerance the two triangles agree, so the upper one stands for the matrix in the norms.
  return {max_abs, std::sqrt(sum_sq)};
}

namespace {

// What an expansion's pass sums besides the summary: Σ 0·C_ij, 0 while every entry is finite and
// NaN otherwise (as in check_symmetric).
struct ExpandedSums {
  MatrixSummary summary;
  double zeros = 0;
};

// The pass of expand_upper (kFromLower false: `source` holds the upper triangle) or
// expand_lower_in_place (true: the lower one), from the d × d `source` (columns `stride` apart) into
// `full` (columns `full_stride` apart; it may be `source` itself: each tile's mirror is read into
// the tile buffer before either is written, and the rest is copied onto itself); kSingle: also
// write the float copy into `single` (already d × d). Templates, so that the inner loops carry no
// tests. Tile by tile above the diagonal, each with its mirror: the upper tile's columns come from
// `source` (upper) or from its transposed mirror tile (lower), and the statistics are summed over
// them column by column in check_symmetric's order either way. kFull false (expand_upper_single):
// `full` is not written, only the float copy; the statistics are summed over the same values.
template <bool kSingle, bool kFromLower, bool kFull = true>
ExpandedSums expand_tiles(const double* source, Index stride, Index d, double* full, Index full_stride,
                          Eigen::MatrixXf& single) {
  static_assert(kFull || (kSingle && !kFromLower), "without the double copy, only the float copy of an upper triangle");
  // A tile's mirror, transposed: from the lower triangle, tile[i + j·kTile] = source(j0 + j, i0 + i)
  // (the upper tile's column j); from the upper one, tile[j + i·kTile] = source(i0 + i, j0 + j).
  alignas(64) double tile[kTile * kTile];
  alignas(64) double column[kTile];  // !kFull: a diagonal tile's column, put together here
  double max_abs = 0, sum_sq = 0, zeros = 0;
  for (Index j0 = 0; j0 < d; j0 += kTile)
    for (Index i0 = 0; i0 <= j0; i0 += kTile) {
      const Index jn = std::min(kTile, d - j0), in = std::min(kTile, d - i0);
      const bool diagonal = i0 == j0;
      if constexpr (kFromLower) transpose_tile(source + i0 * stride + j0, stride, jn, in, tile);
      // The upper tile, column by column; in a diagonal tile the entries on the other side of the
      // diagonal from the source's are read from their mirrors.
      double tile_sq = 0;
      for (Index j = 0; j < jn; ++j) {
        double* to = kFull ? full + (j0 + j) * full_stride + i0 : column;
        // source(j0 + j, i0..) from the lower triangle, source(i0.., j0 + j) from the upper one
        const double* from = kFromLower ? tile + j * kTile : source + (j0 + j) * stride + i0;
        const double* values = to;  // the upper tile's column j, as `full` holds it (or would)
        if (!diagonal) {
          if constexpr (kFull)
            for (Index i = 0; i < in; ++i) to[i] = from[i];
          else
            values = from;
        } else if constexpr (kFromLower) {
          for (Index i = 0; i < in; ++i) to[i] = i <= j ? from[i] : source[(j0 + j) * stride + i0 + i];
        } else {
          for (Index i = 0; i < in; ++i) to[i] = i <= j ? from[i] : source[(i0 + i) * stride + j0 + j];
        }
        if constexpr (kSingle) {
          float* to_single = single.data() + (j0 + j) * d + i0;
          for (Index i = 0; i < in; ++i) to_single[i] = static_cast<float>(values[i]);
        }
        const ColumnSums sums = column_sums<false>(values, nullptr, in);
        max_abs = std::max(max_abs, sums.max_abs);
        tile_sq += sums.sum_sq;
        zeros += sums.zeros;
      }
      if (!diagonal) {  // the tile below the diagonal, column by column
        if constexpr (!kFromLower) transpose_tile(source + j0 * stride + i0, stride, in, jn, tile);
        for (Index i = 0; i < in; ++i) {
          // source(j0.., i0 + i): read in place from the lower triangle, from the tile from the upper one
          const double* from = kFromLower ? source + (i0 + i) * stride + j0 : tile + i * kTile;
          if constexpr (kFull) {
            double* to = full + (i0 + i) * full_stride + j0;
            for (Index j = 0; j < jn; ++j) to[j] = from[j];
          }
          if constexpr (kSingle) {
            float* to_single = single.data() + (i0 + i) * d + j0;
            for (Index j = 0; j < jn; ++j) to_single[j] = static_cast<float>(from[j]);
          }
        }
      }
      sum_sq += (diagonal ? 1.0 : 2.0) * tile_sq;
    }
  return {{max_abs, std::sqrt(sum_sq)}, zeros};
}

// `triangle` expanded into `full` (d × d, columns full_stride apart; may be triangle's own storage;
// nullptr: the float copy only, from the upper triangle).
template <bool kFromLower>
MatrixSummary expand(const char* fn, const Eigen::Ref<const MatrixXd>& triangle, double* full, Index full_stride,
                     Eigen::MatrixXf* single) {
  const Index d = triangle.rows();
  Eigen::MatrixXf none;  // expand_tiles<false, ·> never writes to it
  if (single != nullptr) single->resize(d, d);
  const double* source = triangle.data();
  const Index stride = triangle.outerStride();
  ExpandedSums sums;
  if (full == nullptr) {  // the float copy only (expand_upper_single: an upper triangle, single given)
    if constexpr (!kFromLower) sums = expand_tiles<true, false, false>(source, stride, d, nullptr, 0, *single);
  } else if (single != nullptr) {
    sums = expand_tiles<true, kFromLower>(source, stride, d, full, full_stride, *single);
  } else {
    sums = expand_tiles<false, kFromLower>(source, stride, d, full, full_stride, none);
  }
  if (!std::isfinite(sums.zeros)) name_non_finite(fn, triangle, kFromLower);
  return sums.summary;
}

}  // namespace

// Both: the symmetric matrix from one triangle into `full`, or into c itself (and rounded to float
// into `single`, if given), in one tiled pass that reads that triangle only; the summary and the finiteness check as
// check_symmetric's. The squares are summed in check_symmetric's order over the upper triangle, so
// the summary is the one check_symmetric gives for `full`, bit for bit, and a refresh from it is the
// refresh from `full`.
MatrixSummary expand_upper(const char* fn, const Eigen::Ref<const MatrixXd>& upper, MatrixXd& full,
                           Eigen::MatrixXf* single) {
  require_square(fn, upper.rows(), upper.cols());
  full.resize(upper.rows(), upper.rows());
  return expand<false>(fn, upper, full.data(), full.outerStride(), single);
}

MatrixSummary expand_upper_single(const char* fn, const Eigen::Ref<const MatrixXd>& upper, Eigen::MatrixXf& single) {
  require_square(fn, upper.rows(), upper.cols());
  return expand<false>(fn, upper, nullptr, 0, &single);
}

MatrixSummary expand_lower_in_place(const char* fn, Eigen::Ref<MatrixXd> c, Eigen::MatrixXf* single) {
  require_square(fn, c.rows(), c.cols());
  return expand<true>(fn, c, c.data(), c.outerStride(), single);
}

// A count of entries failing |x| ≤ max (NaN fails it too) vectorises, where a sum of 0·x (the
// passes above, which have other work to hide it behind) is one serial chain of adds: 5× slower at
// d = 784 alone. The search for the entry to name runs only when the count is not 0.
void require_finite_lower(const char* fn, const Eigen::Ref<const MatrixXd>& c) {
  const Index d = c.rows();
  const double largest = std::numeric_limits<double>::max();
  Index bad = 0;
  for (Index j = 0; j < d; ++j) {
    const double* column = c.data() + j * c.outerStride();
    for (Index i = j; i < d; ++i) bad += !(std::abs(column[i]) <= largest);
  }
  if (bad != 0) name_non_finite(fn, c, true);
}

}  // namespace dpstream::pca::detail
