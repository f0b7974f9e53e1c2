// The BLT optimiser under (k, b)-participation (stream/blt_optimizer.hpp) against jax_privacy's
// reference BLTs, optimised by jax_privacy for n = 1,000, k = 2, b = 5 (its
// tests/matrix_factorization/buffered_toeplitz_test.py, test_optimize_better_than_baseline, which
// uses them as baselines at n = 500 that its optimiser must beat within 1.001×). Here the optimiser
// must reach within 1.001× of their loss at their own n, k and b. The references' loss is
// computed here with this library's sensitivity code, as their test defines it:
// minsep sensitivity² × max per-query error of the prefix workload.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "dpstream/stream/blt.hpp"
#include "dpstream/stream/blt_optimizer.hpp"
#include "dpstream/stream/participation.hpp"

namespace test_blt_participation {

using namespace dpstream::stream;
using Eigen::VectorXd;

namespace {

constexpr std::uint64_t kHorizon = 1000;
const Participation kParticipation{2, 5};

// jax_privacy's hard-coded BLTs "optimized for n=1000, max_participations = 2, min_sep = 5".
BufferedToeplitz reference(int buffers) {
  if (buffers == 1) return BufferedToeplitz(VectorXd{{0.9877027559462715}}, VectorXd{{0.10595704738115597}});
  return BufferedToeplitz(VectorXd{{0.993433070819512, 0.6342644427247973}},
                          VectorXd{{0.07538320617916519, 0.5144060910151949}});
}

}  // namespace

TEST_CASE("reference BLTs: the closed-form loss equals the one over materialised coefficients",
          "[blt][participation]") {
  for (int buffers : {1, 2}) {
    INFO(buffers << " buffers");
    const BufferedToeplitz blt = reference(buffers);
    blt.check_strategy(kHorizon);  // non-negative, non-increasing: the closed form is exact
    const double sensitivity = toeplitz_participation_squared(blt.coefficients(kHorizon), kParticipation);
    const double max_error = blt.noise_coefficients(kHorizon).squaredNorm();  // the last step's, the largest
    CHECK(blt.max_loss(kHorizon, kParticipation) == Approx(sensitivity * max_error).epsilon(1e-11));
    // Two participations 5 apart cost more than one, less than group privacy's 4×.
    CHECK(blt.sensitivity_squared(kHorizon, kParticipation) > 1.9 * blt.sensitivity_squared(kHorizon));
    CHECK(blt.sensitivity_squared(kHorizon, kParticipation) < 4.0 * blt.sensitivity_squared(kHorizon));
  }
}

TEST_CASE("optimiser for k = 2, b = 5 at n = 1000: within 1.001x of jax_privacy's reference loss",
          "[blt][participation][optimizer]") {
  for (int buffers : {1, 2}) {
    INFO(buffers << " buffers");
    const double reference_loss = reference(buffers).max_loss(kHorizon, kParticipation);
    const BltOptimizeResult result = optimize_blt_buffers(kHorizon, BltError::max, buffers, 600, kParticipation);
    CHECK(result.blt.buffers() == buffers);
    CHECK(result.loss == Approx(result.blt.max_loss(kHorizon, kParticipation)).epsilon(1e-14));
    CHECK(result.loss <= 1.001 * reference_loss);
    // Optimised for one participation instead, the BLT is worse for two (the objective matters).
    const BltOptimizeResult single = optimize_blt_buffers(kHorizon, BltError::max, buffers);
    CHECK(single.blt.max_loss(kHorizon, kParticipation) > result.loss);
  }
}

}  // namespace test_blt_participation
