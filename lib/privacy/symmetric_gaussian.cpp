#include "dpstream/privacy/symmetric_gaussian.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/linalg/mirror.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/snap.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::privacy {

using base::format_value;
using base::require_positive;

const char* to_string(SymmetricNoiseShape shape) noexcept {
  return shape == SymmetricNoiseShape::goe ? "goe" : "paper";
}

SymmetricNoiseShape parse_symmetric_noise_shape(const std::string& text) {
  if (text == "paper" || text == "paper_symmetric") return SymmetricNoiseShape::paper_symmetric;
  if (text == "goe") return SymmetricNoiseShape::goe;
  throw InvalidParameter("noise shape '" + base::printable(text) + "': expected paper or goe");
}

double covariance_sensitivity(Neighbours relation, double row_norm_bound) {
  require_positive("row_norm_bound", row_norm_bound);
  const double l2 = row_norm_bound * row_norm_bound;  // ‖aaᵀ‖ ≤ ‖a‖₂² (see header)
  return relation == Neighbours::replace_row ? std::sqrt(2.0) * l2 : l2;
}

SymmetricGaussianMechanism::SymmetricGaussianMechanism(const Options& options)
    : options_(options),
      sensitivity_(covariance_sensitivity(options.privacy.relation, options.privacy.row_norm_bound)),
      sigma_(gaussian_sigma(sensitivity_, options.privacy.target, options.privacy.calibration)) {}

double SymmetricGaussianMechanism::entry_variance(Eigen::Index i, Eigen::Index j) const noexcept {
  const double var = sigma_ * sigma_;
  return (i == j || options_.shape == SymmetricNoiseShape::paper_symmetric) ? var : 0.5 * var;
}

Eigen::MatrixXd SymmetricGaussianMechanism::sample_noise(Eigen::Index n, NoiseSource& noise) const {
  if (n <= 0) throw InvalidParameter("symmetric gaussian: dimension n must be > 0, got " + std::to_string(n));
  const double off_sigma =
      options_.shape == SymmetricNoiseShape::goe ? sigma_ / std::sqrt(2.0) : sigma_;
  Eigen::MatrixXd e(n, n);
  // Column-major: fill the upper triangle of column j (rows 0..j) in one pass, then mirror.
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < j; ++i) e(i, j) = off_sigma * noise.gaussian();
    e(j, j) = sigma_ * noise.gaussian();
  }
  linalg::mirror_upper(e);
  return e;
}

Eigen::MatrixXd SymmetricGaussianMechanism::release(const Eigen::Ref<const Eigen::MatrixXd>& covariance,
                                                    NoiseSource& noise, const Budget& budget,
                                                    const std::string& label) const {
  if (covariance.rows() != covariance.cols())
    throw InvalidParameter("symmetric gaussian: covariance must be square, got " +
                           std::to_string(covariance.rows()) + "x" + std::to_string(covariance.cols()));
  const Eigen::Index n = covariance.rows();
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) {
      if (!std::isfinite(covariance(i, j)))
        throw InvalidParameter("symmetric gaussian: covariance(" + std::to_string(i) + "," +
                               std::to_string(j) + ") is not finite, got " + format_value(covariance(i, j)));
      if (covariance(i, j) != covariance(j, i))
        throw InvalidParameter("symmetric gaussian: covariance is not symmetric at (" +
                               std::to_string(i) + "," + std::to_string(j) + ")");
    }
  if (budget.accounted())
    budget.accountant()->charge_gaussian(label, sensitivity_, sigma_, options_.privacy.target);
  Eigen::MatrixXd released = covariance + sample_noise(n, noise);
  const double grid = snap_granularity(sigma_);
  // Snapping each entry is deterministic, so the result stays bitwise symmetric.
  released = released.unaryExpr([grid](double x) { return snap_to_grid(x, grid); });
  return released;
}

}  // namespace dpstream::privacy
