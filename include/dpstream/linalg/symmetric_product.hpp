// W = C·Q for a symmetric d × d matrix C and a thin block Q (d × b, b ≪ d): the product a Krylov
// eigen-refresh repeats (pca/subspace.hpp), without copying C.
//
// Why not Eigen's GEMM: it packs C into its own panel layout on every call, so for b ≈ 10–40 the
// packing moves as many bytes as the product reads. Here C's column-major layout already is a
// packed panel: W's rows i0 .. i0 + 47 (float, AVX-512) are C(i0 .. i0 + 47, j)·Q(j, ·) summed over
// j, and C(i0 .., j) is contiguous in column j. 24 vector accumulators hold a 48 × 8 tile of W while
// C's columns stream past, Q's entries broadcast (no copy of Q either), and the columns are taken
// 256 at a time so that the panel read from memory is reused from cache for Q's other columns.
// It is faster than Eigen's product at the replay's sizes (figures: docs/performance.md, Kernels). The
// sums run in another order than Eigen's, so results differ from
// C·Q by rounding only (≤ d·ε·|C||Q| entrywise, the usual bound of a dot product).
#pragma once

#include <Eigen/Core>

namespace dpstream::linalg {

// w = c·q for the symmetric c this is meant for: both triangles of c are read (the last
// d mod vector-width rows of w come from c's columns, i.e. as cᵀ·q), so the caller guarantees
// symmetry. c: d × d, q and w: d × b (w may not overlap c or q); std::invalid_argument for other
// shapes. No allocation (a 48 KB panel on the stack).
void symmetric_product(const Eigen::Ref<const Eigen::MatrixXf>& c, const Eigen::Ref<const Eigen::MatrixXf>& q,
                       Eigen::Ref<Eigen::MatrixXf> w);
void symmetric_product(const Eigen::Ref<const Eigen::MatrixXd>& c, const Eigen::Ref<const Eigen::MatrixXd>& q,
                       Eigen::Ref<Eigen::MatrixXd> w);

// w = C·q for the symmetric C of which `upper` holds the upper triangle: C's strict lower triangle
// is never read, so a caller holding one triangle (an exact sum kept as U) needs no d × d copy of
// both. Bit for bit symmetric_product of the full C: each tile reads the same values in the same
// order, those below the diagonal gathered from their mirrors first (one pass over the upper
// triangle's columns, d²/2 entries, on top of the product's own reads). Same shapes and errors.
void symmetric_product_upper(const Eigen::Ref<const Eigen::MatrixXd>& upper, const Eigen::Ref<const Eigen::MatrixXd>& q,
                             Eigen::Ref<Eigen::MatrixXd> w);

}  // namespace dpstream::linalg
