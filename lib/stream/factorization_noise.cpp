#include "dpstream/stream/factorization_noise.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>

#include "continual_sum.pb.h"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/stream/blt_optimizer.hpp"
#include "dpstream/stream/separable_noise.hpp"

namespace dpstream::stream {

using Eigen::Index;
using Eigen::VectorXd;
using base::format_value;
using base::require_positive;

namespace {

void require_horizon(const char* what, std::uint64_t horizon) {
  if (horizon == 0) throw InvalidParameter(std::string(what) + ": horizon must be >= 1 release, got 0");
}

void require_size(const char* what, Index size) {
  if (size < 1) throw InvalidParameter(std::string(what) + ": size must be >= 1, got " + std::to_string(size));
}

void require_step(const char* what, std::uint64_t t, std::uint64_t horizon) {
  if (t == 0 || t > horizon)
    throw InvalidParameter(std::string(what) + ": step must be in [1, " + std::to_string(horizon) + "], got " +
                           std::to_string(t));
}

void require_advance(const char* what, std::uint64_t steps, std::uint64_t horizon, Index got, Index size) {
  if (steps >= horizon)
    throw InvalidParameter(std::string(what) + ": all " + std::to_string(horizon) + " releases were made");
  if (got != size)
    throw InvalidParameter(std::string(what) + ": release noise has " + std::to_string(got) + " entries, expected " +
                           std::to_string(size));
}

// Checks the parts of a factorization state every strategy shares; returns it.
const proto::FactorizationNoiseState& checked_state(const proto::ContinualNoiseState& in, const std::string& name,
                                                    std::uint64_t horizon, double sigma) {
  if (in.strategy() != name)
    throw CorruptInput("noise state: strategy is '" + in.strategy() + "', this stream has '" + name + "'");
  if (!in.has_factorization()) throw CorruptInput("noise state: no " + name + " state");
  const proto::FactorizationNoiseState& f = in.factorization();
  if (f.kind() != name) throw CorruptInput("noise state: kind is '" + f.kind() + "', this stream has '" + name + "'");
  if (f.horizon() != horizon)
    throw CorruptInput("noise state: horizon is " + std::to_string(f.horizon()) + ", this stream has " +
                       std::to_string(horizon));
  if (f.sigma() != sigma)
    throw CorruptInput("noise state: sigma is " + format_value(f.sigma()) + ", this stream has " + format_value(sigma));
  if (in.steps() > horizon)
    throw CorruptInput("noise state: " + std::to_string(in.steps()) + " steps exceed the horizon " +
                       std::to_string(horizon));
  return f;
}

// The fields every factorization state starts with.
proto::FactorizationNoiseState& start_state(proto::ContinualNoiseState& out, const std::string& name, std::uint64_t steps,
                                            std::uint64_t horizon, double sigma) {
  out.set_strategy(name);
  out.set_steps(steps);
  proto::FactorizationNoiseState& f = *out.mutable_factorization();
  f.set_kind(name);
  f.set_horizon(horizon);
  f.set_sigma(sigma);
  return f;
}

// Whether stored strategy parameters are exactly this stream's (a restore with another C is refused).
bool same_values(const google::protobuf::RepeatedField<double>& stored, const VectorXd& mine) {
  return stored.size() == mine.size() && std::equal(stored.begin(), stored.end(), mine.data());
}

// N_t = Σ_{i≤t} σ·b_{t−i}·z_i as node weights: the draw of step i is node (0, 0, i).
std::vector<NodeWeight> step_weights(double sigma, const VectorXd& b, std::uint64_t t) {
  std::vector<NodeWeight> weights;
  for (std::uint64_t i = 1; i <= t; ++i) weights.push_back({0, 0, i, sigma * b(static_cast<Index>(t - i))});
  return weights;
}

}  // namespace

// ---- square-root Toeplitz -------------------------------------------------------------------------

VectorXd sqrt_toeplitz_coefficients(std::uint64_t n) {
  VectorXd f(static_cast<Index>(n));
  double c = 1;
  for (std::uint64_t k = 0; k < n; ++k) {
    if (k > 0) c *= (2.0 * static_cast<double>(k) - 1) / (2.0 * static_cast<double>(k));
    f(static_cast<Index>(k)) = c;
  }
  return f;
}

SqrtToeplitzNoise::SqrtToeplitzNoise(std::uint64_t horizon, double sigma, double l2_sensitivity, Index size)
    : horizon_((require_horizon("SqrtToeplitzNoise", horizon), horizon)),
      sigma_((require_positive("SqrtToeplitzNoise sigma", sigma), sigma)),
      l2_sensitivity_((require_positive("SqrtToeplitzNoise l2_sensitivity", l2_sensitivity), l2_sensitivity)),
      size_((require_size("SqrtToeplitzNoise", size), size)),
      f_(sqrt_toeplitz_coefficients(horizon)) {
  prefix_squares_.assign(1, 0.0);
  for (Index k = 0; k < f_.size(); ++k) prefix_squares_.push_back(prefix_squares_.back() + f_(k) * f_(k));
}

void SqrtToeplitzNoise::advance(privacy::NoiseSource& source, Eigen::Ref<VectorXd> release_noise) {
  require_advance("SqrtToeplitzNoise::advance", steps_, horizon_, release_noise.size(), size_);
  const auto t = static_cast<Index>(steps_);  // 0-based column of z_{t+1}
  if (draws_.cols() <= t) draws_.conservativeResize(size_, std::min<Index>(static_cast<Index>(horizon_), std::max<Index>(4, 2 * (t + 1))));
  source.fill_gaussian(std::span<double>(draws_.col(t).data(), static_cast<std::size_t>(size_)), sigma_);
  ++steps_;
  // N_t = Σ_{i≤t} f_{t−i} z_i: z_1 … z_t are the first t columns, weights reversed.
  release_noise.noalias() = draws_.leftCols(t + 1) * f_.head(t + 1).reverse();
}

double SqrtToeplitzNoise::release_variance(std::uint64_t t) const {
  require_step("SqrtToeplitzNoise::release_variance", t, horizon_);
  return sigma_ * sigma_ * prefix_squares_[t];
}

std::vector<NodeWeight> SqrtToeplitzNoise::release_weights(std::uint64_t t) const {
  require_step("SqrtToeplitzNoise::release_weights", t, horizon_);
  return step_weights(sigma_, f_, t);
}

double SqrtToeplitzNoise::mu() const { return l2_sensitivity_ * std::sqrt(sensitivity_squared()) / sigma_; }

void SqrtToeplitzNoise::save(proto::ContinualNoiseState& out) const {
  proto::FactorizationNoiseState& f = start_state(out, name(), steps_, horizon_, sigma_);
  for (Index t = 0; t < static_cast<Index>(steps_); ++t) f.mutable_state()->Add(draws_.col(t).data(), draws_.col(t).data() + size_);
}

void SqrtToeplitzNoise::load(const proto::ContinualNoiseState& in) {
  const proto::FactorizationNoiseState& f = checked_state(in, name(), horizon_, sigma_);
  const auto steps = static_cast<Index>(in.steps());
  if (f.state_size() != steps * size_)
    throw CorruptInput("noise state: " + std::to_string(f.state_size()) + " stored draws, expected " +
                       std::to_string(steps) + " steps x " + std::to_string(size_));
  Eigen::MatrixXd draws(size_, std::max<Index>(steps, 1));
  if (steps > 0) draws.leftCols(steps) = Eigen::Map<const Eigen::MatrixXd>(f.state().data(), size_, steps);
  draws_ = std::move(draws);
  steps_ = in.steps();
}

// ---- BLT --------------------------------------------------------------------------------------------

BltNoise::BltNoise(const BufferedToeplitz& blt, std::uint64_t horizon, double sigma, double l2_sensitivity, Index size)
    : blt_(blt),
      horizon_((require_horizon("BltNoise", horizon), horizon)),
      sigma_((require_positive("BltNoise sigma", sigma), sigma)),
      l2_sensitivity_((require_positive("BltNoise l2_sensitivity", l2_sensitivity), l2_sensitivity)),
      size_((require_size("BltNoise", size), size)),
      buffers_(Eigen::MatrixXd::Zero(size, blt.buffers())),
      draw_(size) {
  blt_.check_strategy(horizon_);
}

void BltNoise::advance(privacy::NoiseSource& source, Eigen::Ref<VectorXd> release_noise) {
  require_advance("BltNoise::advance", steps_, horizon_, release_noise.size(), size_);
  source.fill_gaussian(std::span<double>(draw_.data(), static_cast<std::size_t>(size_)), sigma_);
  const VectorXd& theta_hat = blt_.inverse_buf_decay();
  const VectorXd& omega_hat = blt_.inverse_output_scale();
  // w_t = z_t + Σ_j ω̂_j buf_j (C⁻¹ applied to the draws), buf_j ← θ̂_j buf_j + z_t, N_t = N_{t−1} + w_t.
  // In chunks that stay in L1 across the buffers, instead of one pass over memory per buffer.
  constexpr Index kChunk = 512;
  for (Index first = 0; first < size_; first += kChunk) {
    const Index n = std::min(kChunk, size_ - first);
    auto z = draw_.segment(first, n);
    auto noise = release_noise.segment(first, n);
    noise += z;
    for (Index j = 0; j < blt_.buffers(); ++j) {
      auto buf = buffers_.col(j).segment(first, n);
      noise += omega_hat(j) * buf;
      buf = theta_hat(j) * buf + z;
    }
  }
  ++steps_;
}

double BltNoise::release_variance(std::uint64_t t) const {
  require_step("BltNoise::release_variance", t, horizon_);
  return sigma_ * sigma_ * blt_.prefix_error(t);
}

std::vector<NodeWeight> BltNoise::release_weights(std::uint64_t t) const {
  require_step("BltNoise::release_weights", t, horizon_);
  return step_weights(sigma_, blt_.noise_coefficients(t), t);
}

std::string BltNoise::describe() const { return "BLT (" + std::to_string(blt_.buffers()) + " buffers)"; }

double BltNoise::mu() const { return l2_sensitivity_ * std::sqrt(blt_.sensitivity_squared(horizon_)) / sigma_; }

void BltNoise::save(proto::ContinualNoiseState& out) const {
  proto::FactorizationNoiseState& f = start_state(out, name(), steps_, horizon_, sigma_);
  f.mutable_buf_decay()->Add(blt_.buf_decay().data(), blt_.buf_decay().data() + blt_.buffers());
  f.mutable_output_scale()->Add(blt_.output_scale().data(), blt_.output_scale().data() + blt_.buffers());
  f.mutable_state()->Add(buffers_.data(), buffers_.data() + buffers_.size());
}

void BltNoise::load(const proto::ContinualNoiseState& in) {
  const proto::FactorizationNoiseState& f = checked_state(in, name(), horizon_, sigma_);
  const Index b = blt_.buffers();
  if (!same_values(f.buf_decay(), blt_.buf_decay()) || !same_values(f.output_scale(), blt_.output_scale()))
    throw CorruptInput("noise state: the BLT parameters differ from this stream's");
  if (f.state_size() != b * size_)
    throw CorruptInput("noise state: " + std::to_string(f.state_size()) + " buffer values, expected " +
                       std::to_string(b) + " buffers x " + std::to_string(size_));
  if (b > 0) buffers_ = Eigen::Map<const Eigen::MatrixXd>(f.state().data(), size_, b);
  steps_ = in.steps();
}

// ---- separable (separable_noise.hpp) -------------------------------------------------------------

SeparableNoise::SeparableNoise(SeparableStrategy strategy, double sigma, double l2_sensitivity, Index size)
    : strategy_(std::move(strategy)),
      sigma_((require_positive("SeparableNoise sigma", sigma), sigma)),
      l2_sensitivity_((require_positive("SeparableNoise l2_sensitivity", l2_sensitivity), l2_sensitivity)),
      size_((require_size("SeparableNoise", size), size)),
      previous_draw_(VectorXd::Zero(size)),
      draw_(size) {}

void SeparableNoise::advance(privacy::NoiseSource& source, Eigen::Ref<VectorXd> release_noise) {
  require_advance("SeparableNoise::advance", steps_, horizon(), release_noise.size(), size_);
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
  // g_j is the weight of z_j in N_t (noise_coefficients is indexed by j, step_weights by t − j).
  return step_weights(sigma_, strategy_.noise_coefficients(t).reverse(), t);
}

double SeparableNoise::mu() const { return l2_sensitivity_ * std::sqrt(strategy_.sensitivity_squared()) / sigma_; }

void SeparableNoise::save(proto::ContinualNoiseState& out) const {
  proto::FactorizationNoiseState& f = start_state(out, name(), steps_, horizon(), sigma_);
  f.mutable_output_scale()->Add(strategy_.alpha().data(), strategy_.alpha().data() + strategy_.alpha().size());
  if (steps_ > 0) f.mutable_state()->Add(previous_draw_.data(), previous_draw_.data() + size_);
}

void SeparableNoise::load(const proto::ContinualNoiseState& in) {
  const proto::FactorizationNoiseState& f = checked_state(in, name(), horizon(), sigma_);
  if (!same_values(f.output_scale(), strategy_.alpha()))
    throw CorruptInput("noise state: the separable strategy (alpha) differs from this stream's");
  const Index expected = in.steps() > 0 ? size_ : 0;
  if (f.state_size() != expected)
    throw CorruptInput("noise state: " + std::to_string(f.state_size()) + " stored draw values, expected " +
                       std::to_string(expected));
  previous_draw_.setZero();
  if (expected > 0) previous_draw_ = Eigen::Map<const VectorXd>(f.state().data(), size_);
  steps_ = in.steps();
}

// ---- construction -------------------------------------------------------------------------------------

std::unique_ptr<ContinualNoise> make_factorization_noise(const FactorizationNoiseOptions& options, Index size) {
  require_horizon("make_factorization_noise", options.horizon);
  require_positive("make_factorization_noise l2_sensitivity", options.l2_sensitivity);
  check_participation(options.participation);
  const double delta = options.l2_sensitivity;
  // Each strategy is first built with σ = 1 to read its unit factor (σ does not enter it), then
  // rebuilt with the calibrated σ.
  const auto calibrated = [&](const ContinualNoise& probe, double single_sensitivity) {
    const double factor = probe.participation_bound(options.participation).factor;
    return privacy::gaussian_sigma(delta * single_sensitivity * factor, options.target, options.calibration);
  };
  if (options.kind == FactorizationKind::sqrt_toeplitz) {
    const SqrtToeplitzNoise probe(options.horizon, 1.0, delta, 1);
    const double sigma = calibrated(probe, sqrt_toeplitz_coefficients(options.horizon).norm());
    return std::make_unique<SqrtToeplitzNoise>(options.horizon, sigma, delta, size);
  }
  if (options.kind == FactorizationKind::separable) {
    SeparableStrategy strategy = SeparableStrategy::optimize(options.horizon);
    const SeparableNoise probe(strategy, 1.0, delta, 1);
    const double sigma = calibrated(probe, std::sqrt(strategy.sensitivity_squared()));
    return std::make_unique<SeparableNoise>(std::move(strategy), sigma, delta, size);
  }
  BufferedToeplitz blt = options.blt ? *options.blt : [&] {
    BltOptimizeOptions o;
    o.horizon = options.horizon;
    o.error = options.error;
    o.participation = options.participation;
    return optimize_blt(o).blt;
  }();
  const BltNoise probe(blt, options.horizon, 1.0, delta, 1);
  const double sigma = calibrated(probe, std::sqrt(blt.sensitivity_squared(options.horizon)));
  return std::make_unique<BltNoise>(blt, options.horizon, sigma, delta, size);
}

}  // namespace dpstream::stream
