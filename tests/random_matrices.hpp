// Random test matrices drawn from a NoiseSource (column-major order, so a seeded source gives the same
// matrix on every platform).
#pragma once

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

}  // namespace dpstream::testing
