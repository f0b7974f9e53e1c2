#include "dpstream/io/synthetic_rows.hpp"

#include <cmath>
#include <span>
#include <string>


#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::io {

namespace {

const SyntheticRowsOptions& validated(const SyntheticRowsOptions& o) {
  using base::format_value;
  if (o.dimension < 1)
    throw InvalidParameter("synthetic rows: dimension must be >= 1, got " + std::to_string(o.dimension));
  if (o.rows < 1) throw InvalidParameter("synthetic rows: rows must be >= 1, got 0");
  if (static_cast<Eigen::Index>(o.shares.size()) > o.dimension)
    throw InvalidParameter("synthetic rows: " + std::to_string(o.shares.size()) + " spikes do not fit in dimension " +
                           std::to_string(o.dimension));
  for (std::size_t j = 0; j < o.shares.size(); ++j)
    if (!std::isfinite(o.shares[j]) || o.shares[j] < 0)
      throw InvalidParameter("synthetic rows: shares[" + std::to_string(j) + "] must be finite and >= 0, got " +
                             format_value(o.shares[j]));
  if (!std::isfinite(o.isotropic) || o.isotropic < 0)
    throw InvalidParameter("synthetic rows: isotropic must be finite and >= 0, got " + format_value(o.isotropic));
  return o;
}

std::string describe(const SyntheticRowsOptions& o) {
  return "synthetic(d=" + std::to_string(o.dimension) + ", rows=" + std::to_string(o.rows) +
         ", seed=" + std::to_string(o.seed) + ")";
}

}  // namespace

SyntheticRowSource::SyntheticRowSource(const SyntheticRowsOptions& options)
    : RowSource(describe(validated(options)), false), options_(options), noise_(options.seed) {
  const Eigen::Index d = options_.dimension;
  const auto r = static_cast<Eigen::Index>(options_.shares.size());
  // The spikes: Q of a d × r Gaussian matrix, drawn first, so they depend on the seed only.
  Eigen::MatrixXd g(d, r);
  noise_.fill_gaussian(std::span<double>(g.data(), static_cast<std::size_t>(g.size())));
  spikes_ = linalg::HouseholderQr(g).q(r);
  spike_scale_.resize(r);
  for (Eigen::Index j = 0; j < r; ++j) spike_scale_(j) = std::sqrt(options_.shares[static_cast<std::size_t>(j)]);
  coefficients_.resize(r);
}

bool SyntheticRowSource::next(RowRecord& out) {
  if (returned_ == options_.rows) return false;
  const Eigen::Index d = options_.dimension;
  out.dense.resize(d);
  // Isotropic part, then the spikes: a = √(iso/d)·g + U·(√share ⊙ g_spikes).
  noise_.fill_gaussian(std::span<double>(out.dense.data(), static_cast<std::size_t>(d)),
                       std::sqrt(options_.isotropic / static_cast<double>(d)));
  for (Eigen::Index j = 0; j < coefficients_.size(); ++j) coefficients_(j) = spike_scale_(j) * noise_.gaussian();
  out.dense.noalias() += spikes_ * coefficients_;
  out.set_dense_position(returned_, 0);
  ++returned_;
  return true;
}

Eigen::MatrixXd SyntheticRowSource::expected_covariance() const {
  const Eigen::Index d = options_.dimension;
  Eigen::MatrixXd c = (options_.isotropic / static_cast<double>(d)) * Eigen::MatrixXd::Identity(d, d);
  c.noalias() += spikes_ * spike_scale_.array().square().matrix().asDiagonal() * spikes_.transpose();
  return c;
}

}  // namespace dpstream::io
