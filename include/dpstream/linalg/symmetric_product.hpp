// W = C·Q for a symmetric d × d matrix C and a thin block Q (d × b, b ≪ d): the product a Krylov
// eigen-refresh repeats (pca/subspace.hpp), without copying C.
//
// Why not Eigen's GEMM: it packs C into its own panel layout on every call, so for b ≈ 10–40 the
// packing moves as many bytes as the product reads, and under load from the other replay threads
// it is most of the time. Here C = Cᵀ is used instead: (CQ)_ic = C(:,i)·Q(:,c), dot products down
// C's contiguous columns, four columns of C against three of Q at a time (twelve vector
// accumulators), so each column of C is read once from memory and three of Q's columns stay in
// cache. Measured against Eigen's product on the 2-core VM (idle, float, d = 784 / 2048 / 4096,
// b = 15 / 37): 1.2–1.8× faster. The sums run in another order than Eigen's, so results differ from
// C·Q by rounding only (≤ d·ε·|C||Q| entrywise, the usual bound of a dot product).
#pragma once

#include <Eigen/Core>

namespace dpstream::linalg {

// w = cᵀ·q, which is c·q for the symmetric c this is meant for (both triangles of c are read; the
// caller guarantees symmetry). c: d × d, q and w: d × b (w may not overlap c or q);
// std::invalid_argument for other shapes.
void symmetric_product(const Eigen::Ref<const Eigen::MatrixXf>& c, const Eigen::Ref<const Eigen::MatrixXf>& q,
                       Eigen::Ref<Eigen::MatrixXf> w);
void symmetric_product(const Eigen::Ref<const Eigen::MatrixXd>& c, const Eigen::Ref<const Eigen::MatrixXd>& q,
                       Eigen::Ref<Eigen::MatrixXd> w);

}  // namespace dpstream::linalg
