// optimize_blt (stream/blt.hpp): L-BFGS on the pole pair of a BLT with exact gradients.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <LBFGS.h>

#include "blt_closed_form.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/stream/blt_optimizer.hpp"
#include "dual.hpp"

namespace dpstream::stream {

using Eigen::Index;
using Eigen::VectorXd;

namespace {

constexpr double kPenaltyStrength = 1e-8;
constexpr double kMinPoleGap = 1e-12;  // the barrier's floor on |θ_i − θ_j|
constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int kMaxRounds = 50;  // L-BFGS restarts from the best point (see optimize_blt_buffers)

// The penalised loss as a function of x = (log u, log û), u = 1 − θ: log coordinates put poles at
// 1 − 5e-5 and at 0.98 on comparable scales, and keep θ < 1 without a barrier of their own (the
// barrier on θ < 1 is still added, as in the reference objective, so that the optimum is the same).
class Objective {
 public:
  // k: participations (feasible in n steps), b: their least separation (participation.hpp).
  Objective(double n, BltError error, Index buffers, double k, double b)
      : n_(n), error_(error), b_(buffers), k_(k), separation_(b),
        normaliser_(1 + std::pow(1 + std::log(n) / M_PI, 2)) {}

  // LBFGS++'s interface: the value at x, the gradient into `grad`. +∞ outside the domain (the line
  // search then shortens its step).
  double operator()(const VectorXd& x, VectorXd& grad) {
    const Index p = 2 * b_;
    std::vector<detail::Dual> u, u_hat;
    for (Index i = 0; i < b_; ++i) {
      u.push_back(exp(detail::Dual::variable(x(i), i, p)));
      u_hat.push_back(exp(detail::Dual::variable(x(b_ + i), b_ + i, p)));
    }
    const detail::Dual f = penalised_loss(u, u_hat);
    grad = f.d;
    if (!std::isfinite(f.v) || !grad.allFinite()) {
      grad.setZero();
      return kInfinity;
    }
    if (f.v < best_value_) {
      best_value_ = f.v;
      best_x_ = x;
    }
    return f.v;
  }

  double best_value() const { return best_value_; }
  const VectorXd& best_x() const { return best_x_; }

 private:
  template <class T>
  T penalised_loss(const std::vector<T>& u, const std::vector<T>& u_hat) const {
    const T one = detail::constant(1.0, u[0]);
    const T infinite = detail::constant(kInfinity, u[0]);
    const std::vector<T> omega = detail::output_scale_from_poles(u, u_hat);
    const std::vector<T> omega_hat = detail::output_scale_from_poles(u_hat, u);
    // The barrier's domain (arXiv 2504.21413 Thm 1 a): 0 < θ, θ̂ < 1, ω > 0 > ω̂, Σω < 1, Σω/θ < 1,
    // distinct poles.
    T second_coefficient = detail::constant(0.0, u[0]), pillutla = detail::constant(0.0, u[0]);
    double gap = kInfinity, gap_hat = kInfinity;
    for (Index j = 0; j < b_; ++j) {
      const auto i = static_cast<std::size_t>(j);
      if (!(detail::value(u[i]) < 1 && detail::value(u_hat[i]) < 1 && detail::value(omega[i]) > 0 &&
            detail::value(omega_hat[i]) < 0))
        return infinite;
      second_coefficient += omega[i];
      pillutla += omega[i] / (1.0 - u[i]);
      for (std::size_t l = 0; l < i; ++l) {
        gap = std::min(gap, std::abs(detail::value(u[i]) - detail::value(u[l])));
        gap_hat = std::min(gap_hat, std::abs(detail::value(u_hat[i]) - detail::value(u_hat[l])));
      }
    }
    if (!(detail::value(second_coefficient) < 1 && detail::value(pillutla) < 1 && gap > kMinPoleGap &&
          gap_hat > kMinPoleGap))
      return infinite;

    const T error = error_ == BltError::max ? detail::prefix_error(u_hat, omega_hat, n_, one)
                                            : detail::mean_error(u_hat, omega_hat, n_, one);
    const T sensitivity = k_ == 1 ? detail::sensitivity_squared(u, omega, n_, one)
                                  : detail::participation_sensitivity_squared(u, omega, n_, k_, separation_, one);
    const T loss = error * sensitivity / normaliser_;

    using std::log;
    using std::log1p;
    T penalty = -log(1.0 - second_coefficient) - log(1.0 - pillutla);
    for (Index j = 0; j < b_; ++j) {
      const auto i = static_cast<std::size_t>(j);
      penalty -= log1p(-u[i]) + log(u[i]) + log(omega[i]);                // θ > 0, θ < 1, ω > 0
      penalty -= log1p(-u_hat[i]) + log(u_hat[i]) + log(-omega_hat[i]);  // the same for C⁻¹, ω̂ < 0
    }
    if (b_ > 1) {
      // −log(min gap − floor): the minimum picks one pair; its gradient flows through that pair.
      T gap_pair = one, gap_hat_pair = one;
      bool first = true, first_hat = true;
      for (std::size_t i = 0; i < u.size(); ++i)
        for (std::size_t l = 0; l < i; ++l) {
          const double g = std::abs(detail::value(u[i]) - detail::value(u[l]));
          if (first || g < std::abs(detail::value(gap_pair))) {
            gap_pair = detail::value(u[i]) > detail::value(u[l]) ? u[i] - u[l] : u[l] - u[i];
            first = false;
          }
          const double gh = std::abs(detail::value(u_hat[i]) - detail::value(u_hat[l]));
          if (first_hat || gh < std::abs(detail::value(gap_hat_pair))) {
            gap_hat_pair = detail::value(u_hat[i]) > detail::value(u_hat[l]) ? u_hat[i] - u_hat[l] : u_hat[l] - u_hat[i];
            first_hat = false;
          }
        }
      penalty -= log(gap_pair - kMinPoleGap) + log(gap_hat_pair - kMinPoleGap);
    }
    return loss + kPenaltyStrength * penalty;
  }

  double n_;
  BltError error_;
  Index b_;
  double k_, separation_;
  double normaliser_;
  double best_value_ = kInfinity;
  VectorXd best_x_;
};

double loss_of(const BufferedToeplitz& blt, std::uint64_t n, BltError error, const Participation& participation) {
  return error == BltError::max ? blt.max_loss(n, participation) : blt.mean_loss(n, participation);
}

void check_horizon(const char* fn, std::uint64_t n) {
  if (n == 0) throw InvalidParameter(std::string(fn) + ": horizon must be >= 1");
}

}  // namespace

BltOptimizeResult optimize_blt_buffers(std::uint64_t horizon, BltError error, int buffers, int max_iterations,
                                       const Participation& participation) {
  check_horizon("optimize_blt_buffers", horizon);
  // b = 0 scales every strategy's sensitivity by k (participation.hpp): the single participation's
  // optimum is optimal.
  const std::uint64_t k = participation.min_separation == 0 ? 1 : feasible_steps(horizon, participation);
  if (buffers < 0 || buffers > 15)
    throw InvalidParameter("optimize_blt_buffers: buffers must be in [0, 15], got " + std::to_string(buffers));
  if (max_iterations < 1)
    throw InvalidParameter("optimize_blt_buffers: max_iterations must be >= 1, got " + std::to_string(max_iterations));
  BltOptimizeResult result;
  if (buffers == 0) {
    result.loss = loss_of(result.blt, horizon, error, participation);
    result.loss_by_buffers.push_back(result.loss);
    return result;
  }
  const BufferedToeplitz start = rational_approximation_blt(buffers);
  VectorXd x(2 * buffers);
  for (Index j = 0; j < buffers; ++j) {
    x(j) = std::log(1 - start.buf_decay()(j));
    x(buffers + j) = std::log(1 - start.inverse_buf_decay()(j));
  }
  Objective objective(static_cast<double>(horizon), error, buffers, static_cast<double>(k),
                      static_cast<double>(participation.min_separation));

  LBFGSpp::LBFGSParam<double> param;
  param.m = 15;                // memory, as the reference optimiser
  param.epsilon = 1e-14;       // run to the precision limit: the line search then ends the run
  param.epsilon_rel = 1e-14;
  param.max_iterations = max_iterations;
  param.max_linesearch = 100;
  param.min_step = 1e-30;
  param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  LBFGSpp::LBFGSSolver<double> solver(param);
  // The line search gives up when the barrier walls or rounding stop progress along the current
  // quasi-Newton direction; a fresh L-BFGS run from the best point (memory cleared, steepest descent
  // first) then usually goes on. Rounds stop when one no longer improves the loss.
  double previous = kInfinity;
  for (int round = 0; round < kMaxRounds; ++round) {
    double fx = 0;
    try {
      solver.minimize(objective, x, fx);
    } catch (const std::exception&) {
      // x may hold a rejected trial point: continue from the best point evaluated.
    }
    if (!(objective.best_value() < previous)) break;
    previous = objective.best_value();
    x = objective.best_x();
  }
  if (!std::isfinite(objective.best_value()))
    throw std::runtime_error("optimize_blt_buffers: no finite loss reached with " + std::to_string(buffers) +
                             " buffers for horizon " + std::to_string(horizon));
  const VectorXd& best = objective.best_x();
  result.blt = BufferedToeplitz::from_pole_pair(best.head(buffers).array().exp().matrix(),
                                                best.tail(buffers).array().exp().matrix());
  result.loss = loss_of(result.blt, horizon, error, participation);
  result.loss_by_buffers.push_back(result.loss);
  return result;
}

BltOptimizeResult optimize_blt(const BltOptimizeOptions& options) {
  check_horizon("optimize_blt", options.horizon);
  if (options.min_buffers < 0 || options.max_buffers > 15 || options.min_buffers > options.max_buffers)
    throw InvalidParameter("optimize_blt: need 0 <= min_buffers <= max_buffers <= 15, got " +
                           std::to_string(options.min_buffers) + " and " + std::to_string(options.max_buffers));
  if (!(options.rtol >= 1))
    throw InvalidParameter("optimize_blt: rtol must be >= 1, got " + std::to_string(options.rtol));
  BltOptimizeResult best =
      optimize_blt_buffers(options.horizon, options.error, options.min_buffers, options.max_iterations,
                           options.participation);
  std::vector<double> losses = best.loss_by_buffers;
  for (int b = options.min_buffers + 1; b <= options.max_buffers; ++b) {
    double loss = kInfinity;
    BltOptimizeResult next;
    try {
      next = optimize_blt_buffers(options.horizon, options.error, b, options.max_iterations, options.participation);
      loss = next.loss;
    } catch (const std::runtime_error&) {
      // No finite loss with b buffers: treated as no improvement.
    }
    losses.push_back(loss);
    if (!(options.rtol * loss < best.loss)) break;
    best = next;
  }
  best.loss_by_buffers = losses;
  return best;
}

}  // namespace dpstream::stream
