#include "dpstream/pca/noisy_power_method.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <string>


#include "dpstream/base/errors.hpp"
#include "dpstream/base/memory_limit.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "privacy/noise_source_state.hpp"
#include "streaming_pca.pb.h"

namespace dpstream::pca {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

const NoisyPowerMethodOptions& validated(Index d, const NoisyPowerMethodOptions& o) {
  if (d < 1) throw InvalidParameter("NoisyPowerMethod: dimension must be >= 1, got " + std::to_string(d));
  base::require_rank("NoisyPowerMethod", o.k, d);
  if (o.iterations < 1)
    throw InvalidParameter("NoisyPowerMethod: iterations must be >= 1, got " + std::to_string(o.iterations));
  if (o.runs < 1) throw InvalidParameter("NoisyPowerMethod: runs must be >= 1, got " + std::to_string(o.runs));
  o.privacy.validate("NoisyPowerMethod");
  return o;
}

// Gaussian releases in one run, and in all the runs the calibration covers.
int releases(const NoisyPowerMethodOptions& o) { return o.iterations + (o.release_values ? 1 : 0); }
int calibrated_releases(const NoisyPowerMethodOptions& o) { return o.runs * releases(o); }

// The thin Q of a d × k matrix (Householder QR: orthonormal to rounding even for ill-conditioned Y).
MatrixXd orthonormal_basis(const MatrixXd& y) {
  const linalg::HouseholderQr qr(y);
  return qr.q(y.cols());
}

}  // namespace

double noisy_power_sigma(double sensitivity, int releases, const privacy::EpsDelta& target,
                         privacy::Calibration calibration) {
  base::require_positive("noisy_power_sigma sensitivity", sensitivity);
  if (releases < 1) throw InvalidParameter("noisy_power_sigma: releases must be >= 1, got " + std::to_string(releases));
  // Both calibrations are Gaussian: δ = 0 would give σ = ∞ on the paper path (ln 1/δ) — refused there
  // as analytic_gaussian_sigma refuses it on the tight one (bad-input finding).
  if (!(target.delta() > 0.0))
    throw InvalidParameter("noisy_power_sigma: target.delta must be > 0 (Gaussian noise is never pure DP), got " +
                           base::format_value(target.delta()));
  const double rounds = static_cast<double>(releases);
  if (calibration == privacy::Calibration::paper)
    return sensitivity * 2.0 / target.epsilon() * std::sqrt(4.0 * rounds * std::log(1.0 / target.delta()));
  return privacy::analytic_gaussian_sigma(sensitivity * std::sqrt(rounds), target);
}

NoisyPowerMethod::NoisyPowerMethod(Index dimension, const NoisyPowerMethodOptions& options)
    : dimension_(dimension),
      options_(validated(dimension, options)),
      sensitivity_(privacy::covariance_sensitivity(options.privacy.relation, options.privacy.row_norm_bound) *
                   std::max<double>(1, options.max_rows_per_unit)),
      sigma_(noisy_power_sigma(sensitivity_, calibrated_releases(options), options.privacy.target, options.privacy.calibration)) {
  // A run holds the exact sum and its full copy (d × d each) beside O(d·k) iterates.
  const double d = static_cast<double>(dimension_);
  require_memory("the noisy power method in dimension " + std::to_string(dimension_), 8.0 * (3.0 * d * d + 4.0 * d * options_.k));
  noise_ = options_.privacy.noise.make_source();
}

double NoisyPowerMethod::mu() const {
  return sensitivity_ * std::sqrt(static_cast<double>(calibrated_releases(options_))) / sigma_;
}

PrivateSubspace NoisyPowerMethod::run(const Eigen::Ref<const MatrixXd>& rows, const privacy::Budget& budget,
                                      const MatrixXd* start) {
  if (rows.cols() != dimension_)
    throw InvalidParameter("NoisyPowerMethod::run: rows have " + std::to_string(rows.cols()) +
                           " columns, the dimension is " + std::to_string(dimension_));
  for (Index i = 0; i < rows.rows(); ++i)
    stream::require_bounded_row(rows.row(i).transpose(), static_cast<std::uint64_t>(i), dimension_,
                                options_.privacy.row_norm_bound);
  stream::CovarianceAccumulator exact(dimension_);
  exact.update_block(rows);
  return iterate(exact.matrix(), budget, start);
}

PrivateSubspace NoisyPowerMethod::run(const stream::CovarianceAccumulator& exact, const privacy::Budget& budget,
                                      const MatrixXd* start) {
  if (exact.dimension() != dimension_)
    throw InvalidParameter("NoisyPowerMethod::run: the accumulator's dimension is " + std::to_string(exact.dimension()) +
                           ", the method's is " + std::to_string(dimension_));
  return iterate(exact.matrix(), budget, start);
}

PrivateSubspace NoisyPowerMethod::iterate(const Eigen::Ref<const MatrixXd>& covariance,
                                          const privacy::Budget& budget, const MatrixXd* start) {
  const Index d = dimension_, k = options_.k;
  if (start != nullptr && (start->rows() != d || start->cols() < 1 || !start->allFinite()))
    throw InvalidParameter("NoisyPowerMethod: the start must be finite, " + std::to_string(d) + " x k' with k' >= 1");
  if (options_.runs > 1 && runs_done_ >= options_.runs)
    throw BudgetExhausted("NoisyPowerMethod: the calibration covers " + std::to_string(options_.runs) +
                          " run(s), all made");
  if (budget.accounted() && options_.runs > 1)
    throw InvalidParameter("NoisyPowerMethod: with runs > 1 the accountant is charged once for all runs by the "
                           "caller (StreamingPrivatePca does), not run by run");
  // One charge for all R rounds, before the data is touched (BudgetExhausted: nothing is released).
  if (budget.accounted())
    budget.accountant()->charge_gaussian("noisy power method (" + std::to_string(releases(options_)) + " rounds, k = " +
                                    std::to_string(k) +
                                    (options_.max_rows_per_unit > 0
                                         ? "; neighbouring: all rows of one unit, at most " +
                                               std::to_string(options_.max_rows_per_unit)
                                         : std::string()) +
                                    ")",
                                sensitivity_ * std::sqrt(static_cast<double>(releases(options_))), sigma_,
                                options_.privacy.target);  // both calibrations meet it (paper: with slack)
  // X_0: the start's columns (already private, or data-independent), padded with Gaussian columns.
  MatrixXd x(d, k);
  const Index used = start ? std::min(k, start->cols()) : 0;
  if (used > 0) x.leftCols(used) = start->leftCols(used);
  if (used < k) noise_->fill_gaussian(std::span<double>(x.col(used).data(), static_cast<std::size_t>(d * (k - used))), 1.0);
  x = orthonormal_basis(x);

  ++runs_done_;
  MatrixXd draws(d, k);
  for (int t = 0; t < options_.iterations; ++t) {
    noise_->fill_gaussian(std::span<double>(draws.data(), static_cast<std::size_t>(draws.size())), sigma_);
    x = orthonormal_basis(covariance * x + draws);
  }
  PrivateSubspace out;
  out.method = "power";
  if (!options_.release_values) {
    out.vectors = x;
    return out;
  }
  // λ̂ᵢ = x_iᵀ C x_i + N(0, σ²); columns ordered by λ̂ (post-processing).
  VectorXd values = (x.array() * (covariance * x).array()).colwise().sum().transpose();
  VectorXd value_noise(k);
  noise_->fill_gaussian(std::span<double>(value_noise.data(), static_cast<std::size_t>(k)), sigma_);
  values += value_noise;
  std::vector<Index> order(static_cast<std::size_t>(k));
  std::iota(order.begin(), order.end(), Index{0});
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) { return values(a) > values(b); });
  out.vectors.resize(d, k);
  out.values.resize(k);
  for (Index i = 0; i < k; ++i) {
    out.vectors.col(i) = x.col(order[static_cast<std::size_t>(i)]);
    out.values(i) = values(order[static_cast<std::size_t>(i)]);
  }
  return out;
}

void NoisyPowerMethod::save(proto::NoisyPowerProgress& out) const {
  out.set_runs_done(runs_done_);
  privacy::put_noise_source(*noise_, out);
}

void NoisyPowerMethod::load(const proto::NoisyPowerProgress& in, const std::string& what) {
  if (in.runs_done() < 0 || in.runs_done() > options_.runs)
    throw CorruptInput(what + ": " + std::to_string(in.runs_done()) + " runs done, the calibration covers " +
                       std::to_string(options_.runs));
  const bool seeded = options_.privacy.noise.seed.has_value();
  if (in.seeded() != seeded)
    throw CorruptInput(what + ": noise source is " + (in.seeded() ? "seeded" : "secure") +
                       ", the method being restored has " + (seeded ? "seeded" : "secure"));
  if (seeded && in.source().seed() != *options_.privacy.noise.seed)
    throw CorruptInput(what + ": seed is " + std::to_string(in.source().seed()) + ", the method being restored has " +
                       std::to_string(*options_.privacy.noise.seed));
  std::unique_ptr<privacy::NoiseSource> source = privacy::get_noise_source(in, what);
  runs_done_ = in.runs_done();
  noise_ = std::move(source);
}

}  // namespace dpstream::pca
