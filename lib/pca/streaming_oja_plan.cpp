#include "dpstream/pca/streaming_oja_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dpstream::pca {

namespace {

constexpr double kMaxRows = 4.0e18;  // below 2^63: a minibatch size that still fits a uint64

std::uint64_t to_rows(double rows) noexcept {
  return static_cast<std::uint64_t>(std::clamp(std::round(rows), 1.0, kMaxRows));
}

}  // namespace

OjaBatchPlan::OjaBatchPlan(std::uint64_t first, double growth, std::uint64_t horizon)
    : first_(std::max<std::uint64_t>(1, first)), growth_(growth), horizon_(horizon) {
  if (horizon_ == 0 || growth_ <= 1.0) return;
  // The most minibatches whose first still holds `first` rows: n·(r−1)/(r^T − 1) ≥ first.
  const double r = growth_, n = static_cast<double>(horizon_);
  const double t = std::floor(std::log1p(n * (r - 1.0) / static_cast<double>(first_)) / std::log(r));
  steps_ = static_cast<std::uint64_t>(std::clamp(t, 1.0, 60.0));
}

std::uint64_t OjaBatchPlan::boundary(std::uint64_t step) const noexcept {
  // b_t = round(n·(r^t − 1)/(r^T − 1)); b_T = n exactly.
  if (step >= steps_) return horizon_;
  const double r = growth_, t = static_cast<double>(step), big_t = static_cast<double>(steps_);
  return static_cast<std::uint64_t>(
      std::round(static_cast<double>(horizon_) * std::expm1(t * std::log(r)) / std::expm1(big_t * std::log(r))));
}

std::uint64_t OjaBatchPlan::rows_of(std::uint64_t step) const noexcept {
  if (growth_ <= 1.0) return first_;
  if (steps_ > 0) {
    const std::uint64_t t = std::min(step, steps_);  // past the horizon: the last size again
    return std::max<std::uint64_t>(1, boundary(t) - boundary(t - 1));
  }
  return to_rows(static_cast<double>(first_) * std::pow(growth_, static_cast<double>(step - 1)));
}

std::uint64_t derived_first_batch(Eigen::Index dimension, Eigen::Index k, double unit_sigma) noexcept {
  return to_rows(std::ceil(unit_sigma * std::sqrt(static_cast<double>(dimension) * static_cast<double>(k))));
}

double derived_scale_share(Eigen::Index dimension, double clip_quantile) noexcept {
  constexpr double kMaxShare = 0.25;  // the gradient noise rises at most 1/√(3/4) (header)
  const double tail = 1.0 - clip_quantile;
  return std::min(kMaxShare, 1.0 / (tail * tail * static_cast<double>(std::max<Eigen::Index>(1, dimension))));
}

ResolvableGap resolvable_gap(std::uint64_t rows, Eigen::Index dimension, double unit_sigma, double growth,
                             double tolerance, double scale_share) noexcept {
  const double floor = unit_sigma * std::sqrt(static_cast<double>(dimension)) /
                       (std::max(1.0, static_cast<double>(rows)) * tolerance);
  // Fixed minibatches (growth 1) have no single floor (it grows with the step count): +inf says so.
  // The worst case of a private clip: C stays at L², the noise σ₁L²/√(1 − f).
  const double one_pass = growth > 1.0 ? floor * growth / (growth - 1.0) / std::sqrt(1.0 - scale_share)
                                       : std::numeric_limits<double>::infinity();
  return {one_pass, floor};
}

}  // namespace dpstream::pca
