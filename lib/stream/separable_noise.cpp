#include "dpstream/stream/separable_noise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>

#include <LBFGS.h>

#include "continual_sum.pb.h"
#include "dpstream/errors.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::stream {

using Eigen::Index;
using Eigen::VectorXd;
using privacy::format_value;
using privacy::require_positive;

// ---- the strategy -----------------------------------------------------------------------------------

SeparableStrategy::SeparableStrategy(const Eigen::Ref<const VectorXd>& alpha) {
  if (alpha.size() < 1) throw InvalidParameter("SeparableStrategy: alpha is empty (horizon must be >= 1)");
  for (Index t = 0; t < alpha.size(); ++t)
    if (!(std::isfinite(alpha(t)) && alpha(t) > 0))
      throw InvalidParameter("SeparableStrategy: alpha_" + std::to_string(t + 1) + " must be finite and > 0, got " +
                             format_value(alpha(t)));
  alpha_ = alpha / alpha(0);
  const Index n = alpha_.size();
  tail_.resize(n);
  double tail = 0;
  for (Index j = n - 1; j >= 0; --j) tail_(j) = (tail += alpha_(j) * alpha_(j));
  beta_ = tail_.cwiseSqrt().cwiseInverse();
  // Column j of C is α_s β_j for s ≥ j: its squared norm β_j²·A_j is 1 up to rounding.
  sensitivity_squared_ = (beta_.array().square() * tail_.array()).maxCoeff();
  information_.assign(1, 0.0);
  interior_error_.assign(1, 0.0);
  double beta_sum = 0;
  for (Index s = 0; s < n; ++s) {
    beta_sum += beta_(s);
    const double r = alpha_(s) * beta_sum;
    information_.push_back(information_.back() + r * r);
    // g_j for j < t: (√A_j − √A_{j+1})/α_j, the weight of z_j once a later step exists.
    const double next = s + 1 < n ? std::sqrt(tail_(s + 1)) : 0.0;
    const double g = (std::sqrt(tail_(s)) - next) / alpha_(s);
    interior_error_.push_back(interior_error_.back() + g * g);
  }
}

void SeparableStrategy::require_step(const char* what, std::uint64_t t) const {
  if (t == 0 || t > horizon())
    throw InvalidParameter(std::string("SeparableStrategy::") + what + ": step must be in [1, " +
                           std::to_string(horizon()) + "], got " + std::to_string(t));
}

double SeparableStrategy::row_sum(std::uint64_t t) const {
  require_step("row_sum", t);
  return alpha_(static_cast<Index>(t - 1)) * beta_.head(static_cast<Index>(t)).sum();
}

double SeparableStrategy::information(std::uint64_t t) const {
  require_step("information", t);
  return information_[t];
}

VectorXd SeparableStrategy::noise_coefficients(std::uint64_t t) const {
  require_step("noise_coefficients", t);
  const auto n = static_cast<Index>(t);
  VectorXd g(n);
  for (Index j = 0; j + 1 < n; ++j) g(j) = (std::sqrt(tail_(j)) - std::sqrt(tail_(j + 1))) / alpha_(j);
  g(n - 1) = std::sqrt(tail_(n - 1)) / alpha_(n - 1);
  return g;
}

double SeparableStrategy::prefix_error(std::uint64_t t) const {
  require_step("prefix_error", t);
  const auto last = static_cast<Index>(t - 1);
  return interior_error_[t - 1] + tail_(last) / (alpha_(last) * alpha_(last));
}

namespace {

// Σ_{t<T} info_t^(−p) as a function of x = log α, and its exact gradient (reverse accumulation
// through A_j = Σ_{s≥j} α_s², β_j = A_j^(−1/2), B_s = Σ_{j≤s} β_j, r_s² = α_s² B_s², info_t).
class SeparableObjective {
 public:
  SeparableObjective(Index horizon, double exponent) : n_(horizon), p_(exponent) {}

  double operator()(const VectorXd& x, VectorXd& grad) {
    const VectorXd a2 = (2 * x).array().exp();
    VectorXd tail(n_), beta(n_), beta_sum(n_), info(n_);
    double acc = 0;
    for (Index j = n_ - 1; j >= 0; --j) tail(j) = (acc += a2(j));
    beta = tail.cwiseSqrt().cwiseInverse();
    acc = 0;
    for (Index s = 0; s < n_; ++s) beta_sum(s) = (acc += beta(s));
    acc = 0;
    for (Index s = 0; s < n_; ++s) info(s) = (acc += a2(s) * beta_sum(s) * beta_sum(s));
    double value = 0;
    VectorXd d_info = VectorXd::Zero(n_);
    for (Index t = 0; t + 1 < n_; ++t) {
      value += std::pow(info(t), -p_);
      d_info(t) = -p_ * std::pow(info(t), -p_ - 1);
    }
    // dL/dr_s² = Σ_{t≥s} dL/dinfo_t.
    VectorXd d_r2(n_);
    acc = 0;
    for (Index s = n_ - 1; s >= 0; --s) d_r2(s) = (acc += d_info(s));
    VectorXd d_a2 = d_r2.cwiseProduct(beta_sum.cwiseAbs2());
    VectorXd d_beta(n_);
    acc = 0;
    for (Index j = n_ - 1; j >= 0; --j) d_beta(j) = (acc += 2 * d_r2(j) * a2(j) * beta_sum(j));
    acc = 0;
    for (Index s = 0; s < n_; ++s) {
      acc += d_beta(s) * -0.5 * std::pow(tail(s), -1.5);  // dA_j/dα_s² = 1 for j ≤ s
      d_a2(s) += acc;
    }
    grad = 2 * d_a2.cwiseProduct(a2);
    if (!std::isfinite(value) || !grad.allFinite()) {
      grad.setZero();
      return std::numeric_limits<double>::infinity();
    }
    if (value < best_value_) {
      best_value_ = value;
      best_x_ = x;
    }
    return value;
  }

  double best_value() const { return best_value_; }
  const VectorXd& best_x() const { return best_x_; }

 private:
  Index n_;
  double p_;
  double best_value_ = std::numeric_limits<double>::infinity();
  VectorXd best_x_;
};

}  // namespace

double SeparableStrategy::loss(double exponent) const {
  require_positive("SeparableStrategy::loss exponent", exponent);
  double value = 0;
  for (std::uint64_t t = 1; t < horizon(); ++t) value += std::pow(information_[t], -exponent);
  return value;
}

SeparableStrategy SeparableStrategy::optimize(std::uint64_t horizon, double exponent) {
  if (horizon == 0) throw InvalidParameter("SeparableStrategy::optimize: horizon must be >= 1 release, got 0");
  require_positive("SeparableStrategy::optimize exponent", exponent);
  if (horizon > (std::uint64_t{1} << 26))
    throw InvalidParameter("SeparableStrategy::optimize: horizon " + std::to_string(horizon) + " exceeds 2^26 releases");
  const auto n = static_cast<Index>(horizon);
  // Start from α_t = 1/t (the optimum decays a little faster, ~t^−1.15, and drops near the end).
  VectorXd x = -VectorXd::LinSpaced(n, 1.0, static_cast<double>(n)).array().log();
  if (n <= 2) return SeparableStrategy(x.array().exp());  // one row sum enters the loss at most: any α is optimal
  SeparableObjective objective(n, exponent);
  LBFGSpp::LBFGSParam<double> param;
  param.m = 10;
  param.epsilon = 1e-10;
  param.epsilon_rel = 1e-10;
  param.past = 10;
  param.delta = 1e-13;
  param.max_iterations = 20000;
  param.max_linesearch = 100;
  LBFGSpp::LBFGSSolver<double> solver(param);
  double value = 0;
  try {
    solver.minimize(objective, x, value);
  } catch (const std::runtime_error&) {
    // The line search gives up at the precision limit; the best point seen is the answer.
  }
  if (!std::isfinite(objective.best_value()))
    throw std::runtime_error("SeparableStrategy::optimize: no finite loss reached for horizon " + std::to_string(horizon));
  return SeparableStrategy(objective.best_x().array().exp());
}

// ---- the noise --------------------------------------------------------------------------------------

SeparableNoise::SeparableNoise(SeparableStrategy strategy, double sigma, double l2_sensitivity, Index size)
    : strategy_(std::move(strategy)),
      sigma_((require_positive("SeparableNoise sigma", sigma), sigma)),
      l2_sensitivity_((require_positive("SeparableNoise l2_sensitivity", l2_sensitivity), l2_sensitivity)),
      size_(size),
      previous_draw_(VectorXd::Zero(std::max<Index>(size, 0))),
      draw_(std::max<Index>(size, 0)) {
  if (size < 1) throw InvalidParameter("SeparableNoise: size must be >= 1, got " + std::to_string(size));
}

void SeparableNoise::advance(privacy::NoiseSource& source, Eigen::Ref<VectorXd> release_noise) {
  if (steps_ >= horizon())
    throw InvalidParameter("SeparableNoise::advance: all " + std::to_string(horizon()) + " releases were made");
  if (release_noise.size() != size_)
    throw InvalidParameter("SeparableNoise::advance: release noise has " + std::to_string(release_noise.size()) +
                           " entries, expected " + std::to_string(size_));
  source.fill_gaussian(std::span<double>(draw_.data(), static_cast<std::size_t>(size_)), sigma_);
  const auto t = static_cast<Index>(steps_);  // 0-based index of z_{t+1}
  const VectorXd& alpha = strategy_.alpha();
  const double scale = 1.0 / strategy_.beta()(t);  // √A_t
  if (t == 0)
    release_noise = (scale / alpha(0)) * draw_;
  else
    release_noise += scale * (draw_ / alpha(t) - previous_draw_ / alpha(t - 1));
  previous_draw_.swap(draw_);
  ++steps_;
}

double SeparableNoise::release_variance(std::uint64_t t) const { return sigma_ * sigma_ * strategy_.prefix_error(t); }

std::vector<NodeWeight> SeparableNoise::release_weights(std::uint64_t t) const {
  const VectorXd g = strategy_.noise_coefficients(t);
  std::vector<NodeWeight> weights;
  for (std::uint64_t i = 1; i <= t; ++i) weights.push_back({0, 0, i, sigma_ * g(static_cast<Index>(i - 1))});
  return weights;
}

double SeparableNoise::mu() const { return l2_sensitivity_ * std::sqrt(strategy_.sensitivity_squared()) / sigma_; }

void SeparableNoise::save(proto::ContinualNoiseState& out) const {
  out.set_strategy(name());
  out.set_steps(steps_);
  proto::FactorizationNoiseState& f = *out.mutable_factorization();
  f.set_kind(name());
  f.set_horizon(horizon());
  f.set_sigma(sigma_);
  f.mutable_output_scale()->Add(strategy_.alpha().data(), strategy_.alpha().data() + strategy_.alpha().size());
  if (steps_ > 0) f.mutable_state()->Add(previous_draw_.data(), previous_draw_.data() + size_);
}

void SeparableNoise::load(const proto::ContinualNoiseState& in) {
  if (in.strategy() != name())
    throw CorruptInput("noise state: strategy is '" + in.strategy() + "', this stream has '" + name() + "'");
  if (!in.has_factorization()) throw CorruptInput("noise state: no separable state");
  const proto::FactorizationNoiseState& f = in.factorization();
  if (f.kind() != name()) throw CorruptInput("noise state: kind is '" + f.kind() + "', this stream has 'separable'");
  if (f.horizon() != horizon() || in.steps() > horizon())
    throw CorruptInput("noise state: horizon " + std::to_string(f.horizon()) + " and " + std::to_string(in.steps()) +
                       " steps, this stream has horizon " + std::to_string(horizon()));
  if (f.sigma() != sigma_)
    throw CorruptInput("noise state: sigma is " + format_value(f.sigma()) + ", this stream has " + format_value(sigma_));
  const VectorXd& alpha = strategy_.alpha();
  if (f.output_scale_size() != alpha.size() || !std::equal(f.output_scale().begin(), f.output_scale().end(), alpha.data()))
    throw CorruptInput("noise state: the separable strategy (alpha) differs from this stream's");
  const Index expected = in.steps() > 0 ? size_ : 0;
  if (f.state_size() != expected)
    throw CorruptInput("noise state: " + std::to_string(f.state_size()) + " stored draw values, expected " +
                       std::to_string(expected));
  previous_draw_.setZero();
  if (expected > 0) previous_draw_ = Eigen::Map<const VectorXd>(f.state().data(), size_);
  steps_ = in.steps();
}

}  // namespace dpstream::stream
