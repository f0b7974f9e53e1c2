// BufferedToeplitz (stream/blt.hpp): C·C⁻¹ = I, the closed forms against brute force, the strategy
// guard, and the optimiser against jax_privacy's golden and near-optimality cases (its
// tests/matrix_factorization/buffered_toeplitz_test.py).
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/stream/blt.hpp"
#include "dpstream/stream/blt_optimizer.hpp"

namespace test_blt {

using namespace dpstream;
using namespace dpstream::stream;
using Catch::Matchers::Contains;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// The n × n lower-triangular Toeplitz matrix of coefficients c.
MatrixXd toeplitz(const VectorXd& c) {
  const Index n = c.size();
  MatrixXd m = MatrixXd::Zero(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j <= i; ++j) m(i, j) = c(i - j);
  return m;
}

// jax_privacy's golden BLT: optimize(n = 100000, 2 buffers) (buffered_toeplitz_test.py).
BufferedToeplitz golden() {
  return BufferedToeplitz(VectorXd{{0.9999528892, 0.9857068667}}, VectorXd{{0.0122853238, 0.1878393665}});
}

double mathias_bound(double n) { return 1 + std::log(n) / M_PI; }

}  // namespace

TEST_CASE("C times C^-1 is the identity, and the BLT recurrence multiplies by C", "[blt]") {
  for (const BufferedToeplitz& c : {golden(), rational_approximation_blt(3), rational_approximation_blt(6)}) {
    INFO(c.buffers() << " buffers");
    const std::uint64_t n = 80;
    const MatrixXd product = toeplitz(c.coefficients(n)) * toeplitz(c.inverse_coefficients(n));
    // Entries of C and C⁻¹ are ≤ 1 in magnitude and rows have ≤ 80 terms: rounding ≤ 80·2⁻⁵² ≈ 2e-14.
    CHECK((product - MatrixXd::Identity(n, n)).cwiseAbs().maxCoeff() <= 1e-12);
    // inverse() is the same pair seen from the other side.
    const BufferedToeplitz inv = c.inverse();
    CHECK((inv.coefficients(n) - c.inverse_coefficients(n)).cwiseAbs().maxCoeff() <= 1e-14);
    CHECK((inv.inverse_coefficients(n) - c.coefficients(n)).cwiseAbs().maxCoeff() <= 1e-12);
    // The streaming form y_t = x_t + Σ ω_j buf_j, buf_j ← θ_j buf_j + x_t is C·x.
    const VectorXd x = VectorXd::LinSpaced(static_cast<Index>(n), -1.0, 2.0).array().sin();
    VectorXd buf = VectorXd::Zero(c.buffers()), y(static_cast<Index>(n));
    for (Index t = 0; t < static_cast<Index>(n); ++t) {
      y(t) = x(t) + c.output_scale().dot(buf);
      buf = c.buf_decay().cwiseProduct(buf) + VectorXd::Constant(c.buffers(), x(t));
    }
    CHECK((y - toeplitz(c.coefficients(n)) * x).cwiseAbs().maxCoeff() <= 1e-12);
  }
}

TEST_CASE("closed-form sensitivity and errors equal brute force over the materialised matrices", "[blt]") {
  for (const BufferedToeplitz& c : {BufferedToeplitz::identity(), golden(), rational_approximation_blt(4)}) {
    for (std::uint64_t n : {1u, 2u, 7u, 100u, 1000u}) {
      INFO(c.buffers() << " buffers, n = " << n);
      // Sensitivity: the largest column norm of C, by brute force over all n columns.
      const MatrixXd cm = toeplitz(c.coefficients(n));
      const double true_sensitivity_sq = cm.colwise().squaredNorm().maxCoeff();
      CHECK(c.sensitivity_squared(n) == Approx(true_sensitivity_sq).epsilon(1e-12));
      CHECK(c.sensitivity_squared(n) >= true_sensitivity_sq * (1 - 1e-12));  // never below the truth
      // Errors: B = A·C⁻¹; error(t) = ‖row t of B‖².
      const MatrixXd a = toeplitz(VectorXd::Ones(static_cast<Index>(n)));
      const MatrixXd b = a * toeplitz(c.inverse_coefficients(n));
      const VectorXd per_step = b.rowwise().squaredNorm();
      CHECK(c.max_error(n) == Approx(per_step.maxCoeff()).epsilon(1e-10));
      CHECK(c.prefix_error(n) == Approx(per_step(static_cast<Index>(n) - 1)).epsilon(1e-10));
      CHECK(c.mean_error(n) == Approx(per_step.mean()).epsilon(1e-10));
      // B's coefficients are the prefix sums of C⁻¹'s.
      CHECK((toeplitz(c.noise_coefficients(n)) - b).cwiseAbs().maxCoeff() <= 1e-10);
    }
  }
  // C = I: sensitivity 1, error(t) = t.
  CHECK(BufferedToeplitz::identity().max_loss(1000) == Approx(1000.0));
}

TEST_CASE("the closed forms stay accurate with a pole within 1e-7 of 1 at n = 1e7", "[blt]") {
  // Against a direct summation in long double over the materialised coefficients (n = 10⁷ terms).
  const BufferedToeplitz c(VectorXd{{1 - 1e-7, 0.99}}, VectorXd{{0.004, 0.3}});
  const std::uint64_t n = 10'000'000;
  long double sens = 1, error = 0, mean = 0, b = 0;
  const VectorXd theta = c.buf_decay(), omega = c.output_scale();
  const VectorXd theta_hat = c.inverse_buf_decay(), omega_hat = c.inverse_output_scale();
  long double p0 = 1, p1 = 1, q0 = 1, q1 = 1;
  for (std::uint64_t k = 0; k < n; ++k) {
    if (k > 0) {
      const long double ck = omega(0) * p0 + omega(1) * p1;
      sens += ck * ck;
      p0 *= theta(0);
      p1 *= theta(1);
      b += omega_hat(0) * q0 + omega_hat(1) * q1;
      q0 *= theta_hat(0);
      q1 *= theta_hat(1);
    } else {
      b = 1;
    }
    error += b * b;
    mean += error;
  }
  mean /= static_cast<long double>(n);
  CHECK(c.sensitivity_squared(n) == Approx(static_cast<double>(sens)).epsilon(1e-9));
  CHECK(c.max_error(n) == Approx(static_cast<double>(error)).epsilon(1e-8));
  CHECK(c.mean_error(n) == Approx(static_cast<double>(mean)).epsilon(1e-8));
}

TEST_CASE("check_strategy refuses negative or increasing Toeplitz coefficients", "[blt]") {
  golden().check_strategy(100000);  // ω > 0, Σω ≤ 1: monotone by construction
  // A negative ω lets the coefficients rise: c_1 = 0.2 − 0.1 = 0.1, c_2 = 0.19 − 0.01 = 0.18.
  const BufferedToeplitz rising(VectorXd{{0.95, 0.1}}, VectorXd{{0.2, -0.1}});
  CHECK_THROWS_NAMING(rising.check_strategy(10), InvalidParameter, Contains("c_2 = 0.18") && Contains("after c_1 = 0.1"));
  // ... or turn one negative (jax_privacy PR #218's trap: an unconstrained optimiser can produce
  // such coefficients, and the Toeplitz sensitivity formulas for repeated participation then fail).
  const BufferedToeplitz negative(VectorXd{{0.95, 0.1}}, VectorXd{{0.05, -0.3}});
  CHECK_THROWS_NAMING(negative.check_strategy(10), InvalidParameter, Contains("c_1 = -0.25"));
  // C⁻¹'s poles must be real and in [0, 1) as well: Σω > 1 (c_1 > c_0) puts one below 0.
  CHECK_THROWS_NAMING(BufferedToeplitz(VectorXd{{0.5}}, VectorXd{{1.2}}), InvalidParameter, Contains("inverse buf_decay[0]"));
  // Bad parameters are named.
  CHECK_THROWS_NAMING(BufferedToeplitz(VectorXd{{1.0}}, VectorXd{{0.1}}), InvalidParameter, Contains("buf_decay[0]"));
  CHECK_THROWS_NAMING(BufferedToeplitz(VectorXd{{0.5, 0.5}}, VectorXd{{0.1, 0.2}}), InvalidParameter, Contains("closer than 1e-9"));
  CHECK_THROWS_NAMING(BufferedToeplitz(VectorXd{{0.5}}, VectorXd{{0.1, 0.2}}), InvalidParameter, Contains("output_scale 2"));
  CHECK_THROWS_NAMING(BufferedToeplitz(VectorXd{{0.5}}, VectorXd{{NAN}}), InvalidParameter, Contains("output_scale[0]"));
}

TEST_CASE("optimiser: jax_privacy's golden case, n = 1e5 with 2 buffers", "[blt][optimizer]") {
  const BltOptimizeResult r = optimize_blt_buffers(100000, BltError::max, 2);
  INFO("buf_decay " << r.blt.buf_decay().transpose() << ", output_scale " << r.blt.output_scale().transpose());
  // rtol 1e-5, as the reference test.
  CHECK(r.blt.buf_decay()(0) == Approx(0.9999528892).epsilon(1e-5));
  CHECK(r.blt.buf_decay()(1) == Approx(0.9857068667).epsilon(1e-5));
  CHECK(r.blt.output_scale()(0) == Approx(0.0122853238).epsilon(1e-5));
  CHECK(r.blt.output_scale()(1) == Approx(0.1878393665).epsilon(1e-5));
  // √(max loss) = 1.136 × the Mathias bound (exact: 5.297 against 4.665).
  CHECK(std::sqrt(r.loss) / mathias_bound(1e5) == Approx(1.136).margin(0.0005));
  CHECK(r.loss == Approx(golden().max_loss(100000)).epsilon(1e-6));
}

TEST_CASE("optimiser: near-optimal max loss with a few buffers (jax_privacy's tolerances)", "[blt][optimizer]") {
  struct Case {
    double n;
    int buffers;
    double rtol;
  };
  for (const Case& c : {Case{1e4, 3, 1.03}, Case{1e5, 4, 1.03}, Case{1e6, 5, 1.05}, Case{1e7, 4, 1.05}}) {
    const auto n = static_cast<std::uint64_t>(c.n);
    const BltOptimizeResult r = optimize_blt_buffers(n, BltError::max, c.buffers);
    const double ratio = std::sqrt(r.loss) / mathias_bound(c.n);
    INFO("n = " << c.n << ", " << c.buffers << " buffers: sqrt(max loss)/(1 + ln n/pi) = " << ratio);
    CHECK(ratio <= c.rtol);
    r.blt.check_strategy(n);
    // The reported loss is the closed form of the returned BLT.
    CHECK(r.loss == Approx(r.blt.max_loss(n)).epsilon(1e-12));
  }
}

TEST_CASE("optimiser: buffers grow until the loss improves by less than 1%", "[blt][optimizer]") {
  BltOptimizeOptions o;
  o.horizon = 65536;
  const BltOptimizeResult r = optimize_blt(o);
  INFO("losses by buffers from 0: " << [&] {
    std::string s;
    for (double l : r.loss_by_buffers) s += std::to_string(l) + " ";
    return s;
  }());
  REQUIRE(r.loss_by_buffers.size() >= 2);
  // Every accepted step improved by > 1%; the last one tried did not (or the limit was reached).
  const auto kept = static_cast<std::size_t>(r.blt.buffers());
  for (std::size_t b = 1; b <= kept; ++b) CHECK(1.01 * r.loss_by_buffers[b] < r.loss_by_buffers[b - 1]);
  if (kept + 1 < r.loss_by_buffers.size()) CHECK(!(1.01 * r.loss_by_buffers[kept + 1] < r.loss_by_buffers[kept]));
  CHECK(r.loss == Approx(r.loss_by_buffers[kept]));
  CHECK(std::sqrt(r.loss) / mathias_bound(65536) <= 1.05);
}

TEST_CASE("optimiser: the mean-error objective is the one optimised", "[blt][optimizer]") {
  const std::uint64_t n = 10000;
  const BltOptimizeResult by_mean = optimize_blt_buffers(n, BltError::mean, 3);
  const BltOptimizeResult by_max = optimize_blt_buffers(n, BltError::max, 3);
  INFO("mean loss: mean-optimised " << by_mean.blt.mean_loss(n) << ", max-optimised " << by_max.blt.mean_loss(n));
  CHECK(by_mean.loss == Approx(by_mean.blt.mean_loss(n)).epsilon(1e-12));
  CHECK(by_mean.blt.mean_loss(n) <= by_max.blt.mean_loss(n));
  CHECK(by_max.blt.max_loss(n) <= by_mean.blt.max_loss(n));
  CHECK_THROWS_AS(optimize_blt_buffers(0, BltError::max, 2), InvalidParameter);
  CHECK_THROWS_AS(optimize_blt_buffers(100, BltError::max, 16), InvalidParameter);
}

TEST_CASE("parse_blt_error: the inverse of to_string; other names refused", "[blt]") {
  for (const BltError error : {BltError::max, BltError::mean}) CHECK(parse_blt_error(to_string(error)) == error);
  CHECK_THROWS_NAMING(parse_blt_error("average"), InvalidParameter, Contains("BLT error 'average': expected max or mean"));
}

}  // namespace test_blt
