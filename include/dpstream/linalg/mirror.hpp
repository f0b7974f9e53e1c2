// Making a square matrix exactly symmetric from one of its triangles, in 32 × 32 tiles. Why tiles:
// a column-major mirror row by row (Eigen's triangularView<…>() = transpose()) writes or reads one
// cache line per entry; tiles, each transposed in packets before it is written, took a fifth of its
// time (figures: docs/performance.md, Kernels). The library mirrors a d × d matrix at every release (accumulators, noise, checkpoints, projections).
#pragma once

#include <Eigen/Core>

namespace dpstream::linalg {

// Copies the lower triangle of the square c onto its upper one.
void mirror_lower(Eigen::Ref<Eigen::MatrixXd> c);
// Copies the upper triangle of the square c onto its lower one.
void mirror_upper(Eigen::Ref<Eigen::MatrixXd> c);

}  // namespace dpstream::linalg
