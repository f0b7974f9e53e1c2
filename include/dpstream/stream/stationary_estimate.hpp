// StationaryEstimate: the best linear unbiased estimate of one step's sum from the releases of a
// separable-strategy continual sum (separable_noise.hpp), for streams whose steps share a mean.
//
// Post-processing only: it reads the released prefixes R_1, R_2, … and nothing else, so it costs
// no privacy. It undoes the prefix map, y_t = α_t·Σ_{j≤t} β_j (R_j − R_{j−1}) = (C·x)_t + z_t, and
// fits y_s = r_s·m + z_s by least squares (the z_s are i.i.d.): m̂_t = Σ_{s≤t} r_s y_s / Σ r_s²,
// r = C·1, with per-entry variance σ²/info_t (SeparableStrategy::information). t·m̂_t then stands in
// for the prefix sum S_t: at ε = 1 on Fashion-MNIST it is far closer than any strategy's released
// prefix (README, replay).
//
// The assumption, stated: if the steps' sums x_j have a common mean m, m̂_t is unbiased for m. If
// not, m̂_t is unbiased for Σ_j ω_j x_j, a weighted mean with positive weights summing to 1 that
// favour early steps (weights()); a drifting stream is then followed late. The released prefixes
// themselves stay unbiased for any stream.
//
// Cost per release: O(p) (p entries of a Value), three Values of memory. The estimate works entry by
// entry, so a symmetric release can be given as its packed lower triangle (linalg::pack_lower) and the
// estimate unpacked after: bit for bit the same, in half the memory (the replay does).
#pragma once

#include <cstdint>
#include <string>

#include <Eigen/Core>

#include "dpstream/base/errors.hpp"
#include "dpstream/stream/separable_noise.hpp"

namespace dpstream::proto {
class StationaryEstimate;
}  // namespace dpstream::proto

namespace dpstream::stream {

template <class Value>  // Eigen::VectorXd (vector sums, packed covariances) or Eigen::MatrixXd (covariances)
class StationaryEstimate {
 public:
  // Everything add() has accumulated: enough to continue after a restart (checkpoints).
  struct State {
    std::uint64_t steps = 0;
    Value weighted_increments;  // Σ_{j≤t} β_j (R_j − R_{j−1})
    Value previous_release;     // R_t
    Value numerator;            // Σ_{s≤t} r_s y_s
    double denominator = 0;     // Σ_{s≤t} r_s²

    // Its checkpoint message (lib/proto/learner_states.proto; the pattern: base/message_seal.hpp),
    // for an estimate run on packed lower triangles (linalg::pack_lower; the replay's), Value =
    // Eigen::VectorXd only: the sums go packed, as they are. load takes them, or the full matrices
    // an earlier version wrote, packed (CorruptInput naming the field if one is not exactly
    // symmetric: its upper triangle would be lost, or if values do not fit their shape); restore()
    // checks the rest.
    void save(proto::StationaryEstimate& out) const;
    static State load(const proto::StationaryEstimate& in, const std::string& field);
  };

  explicit StationaryEstimate(SeparableStrategy strategy) : strategy_(std::move(strategy)) {}

  // The released prefix of step `step` (1-based, in order, every step once; InvalidParameter
  // otherwise, or for a release of another shape than the first).
  void add(std::uint64_t step, const Value& noisy_prefix) {
    if (step != state_.steps + 1 || step > strategy_.horizon())
      throw InvalidParameter("StationaryEstimate::add: release " + std::to_string(step) + " after " +
                             std::to_string(state_.steps) + " (releases 1 … " + std::to_string(strategy_.horizon()) +
                             " in order)");
    if (state_.steps == 0) {
      state_.weighted_increments = Value::Zero(noisy_prefix.rows(), noisy_prefix.cols());
      state_.previous_release = Value::Zero(noisy_prefix.rows(), noisy_prefix.cols());
      state_.numerator = Value::Zero(noisy_prefix.rows(), noisy_prefix.cols());
    } else if (noisy_prefix.rows() != state_.numerator.rows() || noisy_prefix.cols() != state_.numerator.cols()) {
      throw InvalidParameter("StationaryEstimate::add: release " + std::to_string(step) + " is " +
                             std::to_string(noisy_prefix.rows()) + " x " + std::to_string(noisy_prefix.cols()) +
                             ", the first was " + std::to_string(state_.numerator.rows()) + " x " +
                             std::to_string(state_.numerator.cols()));
    }
    const auto t = static_cast<Eigen::Index>(step - 1);
    state_.weighted_increments += strategy_.beta()(t) * (noisy_prefix - state_.previous_release);
    state_.previous_release = noisy_prefix;
    const double r = strategy_.row_sum(step);
    state_.numerator += (r * strategy_.alpha()(t)) * state_.weighted_increments;  // r_t·y_t
    state_.denominator += r * r;
    state_.steps = step;
  }

  std::uint64_t steps() const noexcept { return state_.steps; }
  // m̂_t, the estimated sum of one step, as an Eigen expression over this object's state (evaluate
  // it before the next add()). Throws before the first release.
  auto step_sum() const {
    require_estimate("step_sum");
    return state_.numerator / state_.denominator;
  }
  // t·m̂_t: the estimate of the prefix sum S_t under the stationarity assumption (an expression too).
  auto prefix() const {
    require_estimate("prefix");
    return static_cast<double>(state_.steps) * (state_.numerator / state_.denominator);
  }
  // Per-entry variance of m̂_t for z_t ~ N(0, σ²) (diagonal entries of a covariance).
  double step_sum_variance(double sigma) const {
    require_estimate("step_sum_variance");
    return sigma * sigma / strategy_.information(state_.steps);
  }
  // Per-entry variance of prefix() = t·m̂_t: t²·step_sum_variance(σ).
  double prefix_variance(double sigma) const {
    const double t = static_cast<double>(state_.steps);
    return t * t * step_sum_variance(sigma);
  }
  // ω_1 … ω_t: m̂_t = Σ_j ω_j x_j + noise for any stream (positive, Σ ω_j = 1).
  Eigen::VectorXd weights() const {
    require_estimate("weights");
    const auto t = static_cast<Eigen::Index>(state_.steps);
    Eigen::VectorXd omega(t);
    double later = 0;  // Σ_{s=j}^{t} r_s α_s
    for (Eigen::Index j = t - 1; j >= 0; --j) {
      later += strategy_.row_sum(static_cast<std::uint64_t>(j + 1)) * strategy_.alpha()(j);
      omega(j) = strategy_.beta()(j) * later / state_.denominator;
    }
    return omega;
  }
  const SeparableStrategy& strategy() const noexcept { return strategy_; }

  const State& state() const noexcept { return state_; }
  // The estimate's save / load pair (Value = Eigen::VectorXd): state() and restore() through State's.
  void save(proto::StationaryEstimate& out) const { state_.save(out); }
  void load(const proto::StationaryEstimate& in, const std::string& field) { restore(State::load(in, field)); }
  // InvalidParameter if the state does not fit this strategy (more steps than its horizon, shapes
  // that differ, a denominator that is not the strategy's Σ r_s²).
  void restore(State state) {
    if (state.steps > strategy_.horizon())
      throw InvalidParameter("StationaryEstimate::restore: " + std::to_string(state.steps) +
                             " steps exceed the horizon " + std::to_string(strategy_.horizon()));
    if (state.steps > 0) {
      const auto same_shape = [&](const Value& v) {
        return v.rows() == state.numerator.rows() && v.cols() == state.numerator.cols() && v.size() > 0;
      };
      if (!same_shape(state.weighted_increments) || !same_shape(state.previous_release) || !same_shape(state.numerator))
        throw InvalidParameter("StationaryEstimate::restore: the state's matrices differ in shape");
      const double expected = strategy_.information(state.steps);
      if (!(std::abs(state.denominator - expected) <= 1e-9 * expected))
        throw InvalidParameter("StationaryEstimate::restore: denominator " + std::to_string(state.denominator) +
                               " is not the strategy's " + std::to_string(expected) + " after " +
                               std::to_string(state.steps) + " steps (another strategy?)");
    }
    state_ = std::move(state);
  }

 private:
  void require_estimate(const char* what) const {
    if (state_.steps == 0) throw InvalidParameter(std::string("StationaryEstimate::") + what + ": no release yet");
  }

  SeparableStrategy strategy_;
  State state_;
};

template <>
void StationaryEstimate<Eigen::VectorXd>::State::save(proto::StationaryEstimate& out) const;
template <>
StationaryEstimate<Eigen::VectorXd>::State StationaryEstimate<Eigen::VectorXd>::State::load(
    const proto::StationaryEstimate& in, const std::string& field);

}  // namespace dpstream::stream
