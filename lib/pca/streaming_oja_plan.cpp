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

std::uint64_t OjaBatchPlan::rows_through(std::uint64_t step) const noexcept {
  if (steps_ > 0 && step <= steps_) return boundary(step);
  std::uint64_t total = 0;
  for (std::uint64_t s = 1; s <= step; ++s) total += rows_of(s);
  return total;
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

bool take_rest_next(const OjaBatchPlan& plan, std::uint64_t step, Eigen::Index k, Eigen::Index dimension,
                    const StepReading& r) noexcept {
  const std::uint64_t last = plan.planned_steps();
  const Eigen::Index p = r.ritz.size();
  if (last == 0 || step < 2 || step + 1 >= last || p <= k || r.rows == 0 || r.previous_rows == 0) return false;
  const double rows = static_cast<double>(r.rows), n = static_cast<double>(plan.horizon());
  // The header's derivation: Ritz noise, conservative gap and contraction.
  const double nu = std::sqrt(2.0 * static_cast<double>(p)) * r.sigma / rows;
  const double top = r.ritz(k - 1), next = r.ritz(k), bottom = r.ritz(p - 1);
  const double gap = top - next - 2.0 * nu;
  if (!(gap > 0.0) || !(top - nu > 0.0)) return false;
  const double spread = std::sqrt(static_cast<double>(dimension)) + std::sqrt(static_cast<double>(p));
  const double floor_now = r.sigma * spread / (rows * gap);
  const double floor_before = r.previous_sigma * spread / (static_cast<double>(r.previous_rows) * gap);
  if (!(floor_now + floor_before < 1.0 && r.change <= floor_now + floor_before)) return false;
  const double c = std::clamp((bottom + nu) / (top - nu), 0.0, 1.0);
  // E(s) in units of τ_t: W_s at its floor τ_t·B_t/B_s, contracted once, plus one step on n − n_s rows.
  auto predicted = [&](std::uint64_t s) {
    const double left = n - static_cast<double>(plan.rows_through(s));
    return c * rows / static_cast<double>(plan.rows_of(s)) + (left > 0.0 ? rows / left : std::numeric_limits<double>::infinity());
  };
  const double now = predicted(step);
  for (std::uint64_t s = step + 1; s < last; ++s)
    if (!(now < predicted(s))) return false;
  return true;
}

}  // namespace dpstream::pca
