#include "dpstream/pca/gaussian_pca.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/memory_limit.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;

namespace {

Index checked_dimension(Index d, Index k) {
  if (d < 1) throw InvalidParameter("GaussianPca: dimension must be >= 1, got " + std::to_string(d));
  base::require_rank("GaussianPca", k, d);
  return d;
}

// Unit level: the mechanism of row bound √k·L has the sensitivity (√k·L)² = k·L² of k rows of norm L.
privacy::SymmetricGaussianMechanism::Options calibrated(const GaussianPcaOptions& options) {
  privacy::SymmetricGaussianMechanism::Options o = options.mechanism;
  if (options.max_rows_per_unit > 0) o.privacy.row_norm_bound *= std::sqrt(static_cast<double>(options.max_rows_per_unit));
  return o;
}

std::string charge_label(const GaussianPcaOptions& options) {
  std::string label = "Gaussian PCA covariance (Analyze Gauss Alg. 1)";
  if (options.max_rows_per_unit > 0)
    label += "; neighbouring: all rows of one unit, at most " + std::to_string(options.max_rows_per_unit);
  return label;
}

}  // namespace

GaussianPca::GaussianPca(Index dimension, const GaussianPcaOptions& options)
    : dimension_(checked_dimension(dimension, options.k)),
      k_(options.k),
      row_norm_bound_(options.mechanism.privacy.row_norm_bound),
      label_(charge_label(options)),
      mechanism_(calibrated(options)),
      noise_(options.mechanism.privacy.noise.make_source()) {
  // A release holds five d × d matrices: the exact sum and its full copy, the noisy covariance, the
  // eigensolver's workspace and vectors. Refused now rather than at the first release.
  const double d = static_cast<double>(dimension_);
  require_memory("Gaussian PCA of dimension " + std::to_string(dimension_), 8.0 * 5.0 * d * d);
}

GaussianPcaRelease GaussianPca::release(const Eigen::Ref<const MatrixXd>& rows, const privacy::Budget& budget) {
  if (rows.cols() != dimension_)
    throw InvalidParameter("GaussianPca::release: rows have " + std::to_string(rows.cols()) +
                           " columns, the dimension is " + std::to_string(dimension_));
  for (Index i = 0; i < rows.rows(); ++i)
    stream::require_bounded_row(rows.row(i).transpose(), static_cast<std::uint64_t>(i), dimension_,
                                row_norm_bound_);
  stream::CovarianceAccumulator exact(dimension_);
  exact.update_block(rows);
  return release_covariance(exact.matrix(), budget);
}

GaussianPcaRelease GaussianPca::release(const stream::CovarianceAccumulator& exact, const privacy::Budget& budget) {
  if (exact.dimension() != dimension_)
    throw InvalidParameter("GaussianPca::release: the accumulator's dimension is " + std::to_string(exact.dimension()) +
                           ", this GaussianPca's is " + std::to_string(dimension_));
  return release_covariance(exact.matrix(), budget);
}

GaussianPcaRelease GaussianPca::release_covariance(const Eigen::Ref<const MatrixXd>& covariance,
                                                   const privacy::Budget& budget) {
  GaussianPcaRelease out;
  out.noisy_covariance = mechanism_.release(covariance, *noise_, budget, label_);
  const TopEigen top = top_k_eigen(out.noisy_covariance, k_);  // algebraic: Ĉ is indefinite
  out.subspace.vectors = top.vectors;
  out.subspace.values = top.values;
  out.subspace.method = "gauss";
  return out;
}

}  // namespace dpstream::pca
