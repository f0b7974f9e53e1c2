// Random test matrices drawn from a NoiseSource (column-major order, so a seeded source gives the same
// matrix on every platform).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include <Eigen/Core>

#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::testing {

// rows × cols with i.i.d. N(0, 1) entries (fill_gaussian: the values gaussian() would give in turn).
inline Eigen::MatrixXd gaussian_matrix(Eigen::Index rows, Eigen::Index cols, privacy::NoiseSource& source) {
  Eigen::MatrixXd g(rows, cols);
  source.fill_gaussian(std::span<double>(g.data(), static_cast<std::size_t>(g.size())), 1.0);
  return g;
}

// The Q factor of g: orthonormal columns spanning g's (Haar-distributed when g is Gaussian).
inline Eigen::MatrixXd orthonormal_columns(const Eigen::MatrixXd& g) {
  linalg::HouseholderQr qr(g);
  return qr.q(g.cols());
}

// n rows x = √s·z·e_1 + √(iso/d)·ξ (z, ξ standard normal, from a SeededNoiseSource), scaled into
// the unit ball: top eigenvector e_1, gap ≈ s − iso/d.
inline Eigen::MatrixXd spiked_rows(Eigen::Index n, Eigen::Index d, double spike, double iso, std::uint64_t seed) {
  privacy::SeededNoiseSource source(seed);
  Eigen::MatrixXd rows(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) rows(i, j) = std::sqrt(iso / double(d)) * source.gaussian();
    rows(i, 0) += std::sqrt(spike) * source.gaussian();
    const double norm = rows.row(i).norm();
    if (norm > 0.999) rows.row(i) *= 0.999 / norm;
  }
  return rows;
}

}  // namespace dpstream::testing
