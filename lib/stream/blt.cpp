#include "dpstream/stream/blt.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include <Eigen/Eigenvalues>

#include "blt_closed_form.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/text.hpp"

namespace dpstream::stream {

using Eigen::Index;
using Eigen::VectorXd;
using base::format_value;

namespace {

constexpr Index kMaxBuffers = 15;
constexpr double kMinValidPoleGap = 1e-9;  // the inverse divides by pole gaps

std::vector<double> as_vector(const VectorXd& v) { return {v.data(), v.data() + v.size()}; }

// Reorders the pairs by decreasing θ (ties impossible after validation).
void sort_pairs(VectorXd& theta, VectorXd& omega) {
  std::vector<Index> order(static_cast<std::size_t>(theta.size()));
  std::iota(order.begin(), order.end(), Index{0});
  std::sort(order.begin(), order.end(), [&](Index a, Index b) { return theta(a) > theta(b); });
  VectorXd t(theta.size()), o(omega.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    t(static_cast<Index>(i)) = theta(order[i]);
    o(static_cast<Index>(i)) = omega(order[i]);
  }
  theta = t;
  omega = o;
}

void validate_poles(const char* what, const VectorXd& theta) {
  for (Index j = 0; j < theta.size(); ++j) {
    if (!(theta(j) >= 0 && theta(j) < 1))
      throw InvalidParameter(std::string("BufferedToeplitz: ") + what + "[" + std::to_string(j) +
                             "] must be in [0, 1), got " + format_value(theta(j)));
    for (Index l = 0; l < j; ++l)
      if (std::abs(theta(j) - theta(l)) < kMinValidPoleGap)
        throw InvalidParameter(std::string("BufferedToeplitz: ") + what + " values " + format_value(theta(l)) +
                               " and " + format_value(theta(j)) + " are closer than 1e-9 (the inverse divides by their gap)");
  }
}

// Poles θ̂ of C⁻¹: C(x) = 1 + Σ ω_j x/(1 − θ_j x) is the transfer function of the state recurrence
// buf ← Θ buf + 1·x, y = x + ωᵀbuf; its inverse runs buf ← (Θ − 1ωᵀ) buf + 1·y, so θ̂ = eig(Θ − 1ωᵀ).
// Not validated (the rational approximation scales them afterwards).
VectorXd inverse_poles(const VectorXd& theta, const VectorXd& omega) {
  const Index b = theta.size();
  if (b == 0) return {};
  Eigen::MatrixXd m = theta.asDiagonal();
  m -= VectorXd::Ones(b) * omega.transpose();
  const Eigen::EigenSolver<Eigen::MatrixXd> es(m, false);
  const Eigen::VectorXcd lambda = es.eigenvalues();
  VectorXd poles(b);
  for (Index j = 0; j < b; ++j) {
    if (std::abs(lambda(j).imag()) > 1e-12 * std::max(1.0, std::abs(lambda(j))))
      throw InvalidParameter("BufferedToeplitz: C^-1 has a complex pole (" + format_value(lambda(j).real()) + " + " +
                             format_value(lambda(j).imag()) + "i); only real poles are supported");
    poles(j) = lambda(j).real();
  }
  std::sort(poles.data(), poles.data() + b, std::greater<>());
  return poles;
}

VectorXd omega_from_poles(const VectorXd& u, const VectorXd& u_hat) {
  const std::vector<double> omega = detail::output_scale_from_poles(as_vector(u), as_vector(u_hat));
  return Eigen::Map<const VectorXd>(omega.data(), static_cast<Index>(omega.size()));
}

}  // namespace

BufferedToeplitz::BufferedToeplitz(const Eigen::Ref<const VectorXd>& buf_decay,
                                   const Eigen::Ref<const VectorXd>& output_scale)
    : theta_(buf_decay), omega_(output_scale) {
  if (theta_.size() != omega_.size())
    throw InvalidParameter("BufferedToeplitz: buf_decay has " + std::to_string(theta_.size()) +
                           " entries, output_scale " + std::to_string(omega_.size()));
  if (theta_.size() > kMaxBuffers)
    throw InvalidParameter("BufferedToeplitz: at most 15 buffers, got " + std::to_string(theta_.size()));
  for (Index j = 0; j < omega_.size(); ++j)
    if (!std::isfinite(omega_(j)))
      throw InvalidParameter("BufferedToeplitz: output_scale[" + std::to_string(j) + "] is not finite");
  validate_poles("buf_decay", theta_);
  sort_pairs(theta_, omega_);
  u_ = 1.0 - theta_.array();
  set_inverse_from_poles();
}

BufferedToeplitz BufferedToeplitz::identity() { return BufferedToeplitz(VectorXd(), VectorXd()); }

BufferedToeplitz BufferedToeplitz::from_pole_pair(const Eigen::Ref<const VectorXd>& one_minus_buf_decay,
                                                  const Eigen::Ref<const VectorXd>& one_minus_inverse_buf_decay) {
  if (one_minus_buf_decay.size() != one_minus_inverse_buf_decay.size())
    throw InvalidParameter("BufferedToeplitz::from_pole_pair: " + std::to_string(one_minus_buf_decay.size()) +
                           " poles for C, " + std::to_string(one_minus_inverse_buf_decay.size()) + " for C^-1");
  BufferedToeplitz c;
  c.u_ = one_minus_buf_decay;
  c.u_hat_ = one_minus_inverse_buf_decay;
  c.theta_ = 1.0 - c.u_.array();
  c.theta_hat_ = 1.0 - c.u_hat_.array();
  validate_poles("buf_decay", c.theta_);
  validate_poles("inverse buf_decay", c.theta_hat_);
  c.omega_ = omega_from_poles(c.u_, c.u_hat_);
  c.omega_hat_ = omega_from_poles(c.u_hat_, c.u_);
  sort_pairs(c.theta_, c.omega_);
  sort_pairs(c.theta_hat_, c.omega_hat_);
  // Re-derive u in the sorted order (sort_pairs moved θ; u follows θ one to one).
  VectorXd u_sorted = c.u_, u_hat_sorted = c.u_hat_;
  std::sort(u_sorted.data(), u_sorted.data() + u_sorted.size());
  std::sort(u_hat_sorted.data(), u_hat_sorted.data() + u_hat_sorted.size());
  c.u_ = u_sorted;
  c.u_hat_ = u_hat_sorted;
  return c;
}

void BufferedToeplitz::set_inverse_from_poles() {
  theta_hat_ = inverse_poles(theta_, omega_);
  validate_poles("inverse buf_decay", theta_hat_);
  u_hat_ = 1.0 - theta_hat_.array();
  omega_hat_ = omega_from_poles(u_hat_, u_);
}

BufferedToeplitz BufferedToeplitz::inverse() const {
  BufferedToeplitz inv;
  inv.theta_ = theta_hat_;
  inv.omega_ = omega_hat_;
  inv.u_ = u_hat_;
  inv.theta_hat_ = theta_;
  inv.omega_hat_ = omega_;
  inv.u_hat_ = u_;
  return inv;
}

namespace {

VectorXd toeplitz_coefficients(const VectorXd& theta, const VectorXd& omega, std::uint64_t n) {
  VectorXd c(static_cast<Index>(n));
  if (n == 0) return c;
  c(0) = 1;
  VectorXd power = VectorXd::Ones(theta.size());  // θ^{k−1}
  for (std::uint64_t k = 1; k < n; ++k) {
    c(static_cast<Index>(k)) = omega.dot(power);
    power.array() *= theta.array();
  }
  return c;
}

void check_length(const char* fn, std::uint64_t n) {
  if (n == 0) throw InvalidParameter(std::string("BufferedToeplitz::") + fn + ": n must be >= 1");
}

}  // namespace

VectorXd BufferedToeplitz::coefficients(std::uint64_t n) const { return toeplitz_coefficients(theta_, omega_, n); }
VectorXd BufferedToeplitz::inverse_coefficients(std::uint64_t n) const {
  return toeplitz_coefficients(theta_hat_, omega_hat_, n);
}
VectorXd BufferedToeplitz::noise_coefficients(std::uint64_t n) const {
  VectorXd b = inverse_coefficients(n);
  for (Index m = 1; m < b.size(); ++m) b(m) += b(m - 1);
  return b;
}

double BufferedToeplitz::sensitivity_squared(std::uint64_t n) const {
  check_length("sensitivity_squared", n);
  return detail::sensitivity_squared(as_vector(u_), as_vector(omega_), static_cast<double>(n), 1.0);
}

double BufferedToeplitz::sensitivity_squared(std::uint64_t n, const Participation& participation) const {
  check_length("sensitivity_squared", n);
  const std::uint64_t k = feasible_steps(n, participation);
  if (k == 1) return sensitivity_squared(n);
  // b = 0: all k rows in one step (participation.hpp).
  if (participation.min_separation == 0) return static_cast<double>(k * k) * sensitivity_squared(n);
  return detail::participation_sensitivity_squared(as_vector(u_), as_vector(omega_), static_cast<double>(n),
                                                   static_cast<double>(k),
                                                   static_cast<double>(participation.min_separation), 1.0);
}

double BufferedToeplitz::prefix_error(std::uint64_t t) const {
  check_length("prefix_error", t);
  return detail::prefix_error(as_vector(u_hat_), as_vector(omega_hat_), static_cast<double>(t), 1.0);
}

double BufferedToeplitz::mean_error(std::uint64_t n) const {
  check_length("mean_error", n);
  return detail::mean_error(as_vector(u_hat_), as_vector(omega_hat_), static_cast<double>(n), 1.0);
}

void BufferedToeplitz::check_strategy(std::uint64_t n) const {
  // Positive ω and Σω ≤ 1 = c_0 make c_1 ≤ c_0 and every later c_k a sum of positive, non-increasing
  // terms ω_j θ_j^{k−1}: no need to look at the coefficients.
  if ((omega_.array() > 0).all() && omega_.sum() <= 1) return;
  double previous = 1;
  VectorXd power = VectorXd::Ones(theta_.size());
  for (std::uint64_t k = 1; k < n; ++k) {
    const double c = omega_.dot(power);
    if (c < 0 || c > previous)
      throw InvalidParameter("BufferedToeplitz: the Toeplitz coefficients must be non-negative and non-increasing, but c_" +
                             std::to_string(k) + " = " + format_value(c) + " after c_" + std::to_string(k - 1) + " = " +
                             format_value(previous));
    previous = c;
    power.array() *= theta_.array();
  }
}

const char* to_string(BltError error) noexcept { return error == BltError::max ? "max" : "mean"; }

BltError parse_blt_error(const std::string& text) {
  for (const BltError error : {BltError::max, BltError::mean})
    if (text == to_string(error)) return error;
  throw InvalidParameter("BLT error '" + base::printable(text) + "': expected max or mean");
}

BufferedToeplitz rational_approximation_blt(int buffers) {
  if (buffers < 1 || buffers > kMaxBuffers)
    throw InvalidParameter("rational_approximation_blt: buffers must be in [1, 15], got " + std::to_string(buffers));
  // arXiv 2404.16706 Prop 4.5: a BLT for C⁻¹ from a sinc-quadrature rational approximation of
  // √(1 − x), with step h and nodes k (spread 1.6, shifted by −1 towards θ = 1, as jax_privacy's
  // from_rational_approx_to_sqrt_x), normalised to leading coefficient 1; C is its inverse.
  const int d1 = (buffers + 1) / 2;
  const double h = 1.6 * M_PI / std::sqrt(2.0 * (d1 + 1));
  VectorXd inv_theta(buffers), inv_omega(buffers);
  double constant_term = 0;
  for (int i = 0; i < buffers; ++i) {
    const double k = -d1 + 1 + i - 1;
    inv_theta(i) = 1 / (1 + std::exp(2 * h * k));
    inv_omega(i) = -inv_theta(i) * inv_theta(i) * std::exp(3 * h * k);
    constant_term += std::exp(h * k) * inv_theta(i);
  }
  inv_omega /= constant_term;
  // C's poles are the inverse's inverse poles; ω from the partial fractions of the pair.
  VectorXd theta = inverse_poles(inv_theta, inv_omega);
  VectorXd u = 1.0 - theta.array(), u_hat = 1.0 - inv_theta.array();
  VectorXd omega = omega_from_poles(u, u_hat);
  // Inside the optimiser's domain: θ_max ≤ 1 − 1e-6, then the Pillutla score Σω/θ ≤ 1 − 1e-6.
  const double cap = 1 - 1e-6;
  theta *= std::min(1.0, cap / theta.maxCoeff());
  const double score = (omega.array() / theta.array()).sum();
  omega *= std::min(1.0, cap / score);
  return BufferedToeplitz(theta, omega);
}

}  // namespace dpstream::stream
