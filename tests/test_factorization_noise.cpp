// Matrix-factorization noise (stream/factorization_noise.hpp): the square-root Toeplitz and BLT
// strategies against figures computed from their exact variance formulas, their streaming noise
// against the explicit B·z, Monte Carlo variance and covariance against the closed forms, calibration, state round trips, and a
// ContinualSum running them.
#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "continual_sum.pb.h"
#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/stream/blt_optimizer.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/factorization_noise.hpp"
#include "dpstream/stream/separable_noise.hpp"
#include "dpstream/stream/tree_noise.hpp"
#include "stat_helpers.hpp"
#include "unaccounted.hpp"

namespace test_factorization_noise {

using namespace dpstream;
using namespace dpstream::stream;
using Catch::Matchers::Contains;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using privacy::Calibration;
using privacy::EpsDelta;

namespace {

// jax_privacy's golden 2-buffer BLT for n = 1e5 (its buffered_toeplitz_test.py).
BufferedToeplitz golden() {
  return BufferedToeplitz(VectorXd{{0.9999528892, 0.9857068667}}, VectorXd{{0.0122853238, 0.1878393665}});
}

// Per step t, the release noise of `trials` independent runs concatenated (each entry one sample of N_t).
template <class MakeNoise>
std::vector<std::vector<double>> sample_release_noise(MakeNoise make, std::uint64_t horizon, Index size, int trials,
                                                      std::uint64_t seed) {
  std::vector<std::vector<double>> samples(horizon + 1);
  privacy::SeededNoiseSource source(seed);
  for (int trial = 0; trial < trials; ++trial) {
    auto noise = make();
    VectorXd release = VectorXd::Zero(size);
    for (std::uint64_t t = 1; t <= horizon; ++t) {
      noise->advance(source, release);
      samples[t].insert(samples[t].end(), release.data(), release.data() + size);
    }
  }
  return samples;
}

}  // namespace

TEST_CASE("square-root Toeplitz: coefficients and the exact variances", "[factorization][sqrt]") {
  const VectorXd f = sqrt_toeplitz_coefficients(4);
  CHECK(f(0) == 1.0);
  CHECK(f(1) == 0.5);
  CHECK(f(2) == 0.375);
  CHECK(f(3) == 0.3125);
  // Max-error variance per unit noise multiplier = S_T² (B = C: sensitivity² S_T times error S_T).
  // Exact formulas: 10.71 at T = 2^10, 21.13 at 2^16, 30.02 at 2^20; S_T = 3.273 at 2^10.
  for (const auto& [t, variance] : std::vector<std::pair<std::uint64_t, double>>{{1024, 10.71}, {65536, 21.13}, {1 << 20, 30.02}}) {
    SqrtToeplitzNoise noise(t, 1.0, 1.0, 1);
    CHECK(noise.sensitivity_squared() * noise.release_variance(t) == Approx(variance).margin(0.005));
  }
  CHECK(SqrtToeplitzNoise(1024, 1.0, 1.0, 1).sensitivity_squared() == Approx(3.273).margin(0.0005));
  // The sensitivity is C's largest column norm, by brute force over the materialised matrix.
  for (std::uint64_t t : {1u, 2u, 5u, 64u}) {
    const VectorXd c = sqrt_toeplitz_coefficients(t);
    MatrixXd m = MatrixXd::Zero(static_cast<Index>(t), static_cast<Index>(t));
    for (Index i = 0; i < m.rows(); ++i)
      for (Index j = 0; j <= i; ++j) m(i, j) = c(i - j);
    const double true_sensitivity_sq = m.colwise().squaredNorm().maxCoeff();
    CHECK(SqrtToeplitzNoise(t, 1.0, 1.0, 1).sensitivity_squared() >= true_sensitivity_sq * (1 - 1e-14));
    CHECK(SqrtToeplitzNoise(t, 1.0, 1.0, 1).sensitivity_squared() == Approx(true_sensitivity_sq).epsilon(1e-14));
    // B = C: C·C = A (the prefix-sum matrix), the factorization's defining identity.
    const MatrixXd a = MatrixXd::Ones(m.rows(), m.cols()).triangularView<Eigen::Lower>();
    CHECK((m * m - a).cwiseAbs().maxCoeff() <= 1e-12);
  }
  // √(max loss) at n = 10⁵: 4.731 (exact), the BLT golden 5.297.
  CHECK(SqrtToeplitzNoise(100000, 1.0, 1.0, 1).sensitivity_squared() == Approx(4.731).margin(0.0005));
  CHECK(std::sqrt(golden().max_loss(100000)) == Approx(5.297).margin(0.0005));
}

TEST_CASE("the streamed noise is B times the draws: N_t = sum_i b_(t-i) z_i", "[factorization]") {
  // The same seeded source regenerates the draws z_1 … z_T (σ = 1, one fill per step).
  const std::uint64_t horizon = 40;
  const Index size = 6;
  auto check = [&](ContinualNoise& noise, const VectorXd& b) {
    privacy::SeededNoiseSource source(5), replay(5);
    VectorXd release = VectorXd::Zero(size);
    MatrixXd z(size, static_cast<Index>(horizon));
    for (std::uint64_t t = 1; t <= horizon; ++t) {
      noise.advance(source, release);
      replay.fill_gaussian(std::span<double>(z.col(static_cast<Index>(t - 1)).data(), static_cast<std::size_t>(size)), 1.0);
      VectorXd expected = VectorXd::Zero(size);
      for (std::uint64_t i = 1; i <= t; ++i) expected += b(static_cast<Index>(t - i)) * z.col(static_cast<Index>(i - 1));
      INFO("step " << t);
      REQUIRE((release - expected).cwiseAbs().maxCoeff() <= 1e-12 * std::max(1.0, expected.cwiseAbs().maxCoeff()));
    }
  };
  SqrtToeplitzNoise sqrt_noise(horizon, 1.0, 1.0, size);
  check(sqrt_noise, sqrt_toeplitz_coefficients(horizon));
  for (const BufferedToeplitz& c : {golden(), rational_approximation_blt(4), optimize_blt_buffers(horizon, BltError::max, 3).blt}) {
    BltNoise blt_noise(c, horizon, 1.0, 1.0, size);
    check(blt_noise, c.noise_coefficients(horizon));
  }
}

TEST_CASE("release variance and covariance match the closed form (seeded Monte Carlo)", "[factorization][statistical]") {
  // As for the trees (test_tree_noise.cpp): 4096 coordinates × 32 trials = 131072 i.i.d. samples of
  // each N_t; Σx²/Var ~ χ²_N, checked with the Laurent–Massart interval at α = 1e-7 (about ±2.3%).
  // Covariances: standard error ≤ √(2 Var_s Var_t / N), checked within chernoff_z(1e-7) of it.
  // 2 strategies × (16 + 4) checks at 1e-7: false-alarm probability < 5e-6.
  const double alpha = 1e-7;
  const Index size = 4096;
  const int trials = 32;
  const std::uint64_t horizon = 16;
  const double n = static_cast<double>(size) * trials;
  const BufferedToeplitz blt = optimize_blt_buffers(horizon, BltError::max, 2).blt;
  std::vector<std::pair<std::string, std::function<std::unique_ptr<ContinualNoise>()>>> strategies = {
      {"sqrt_toeplitz", [&] { return std::make_unique<SqrtToeplitzNoise>(horizon, 1.5, 1.0, size); }},
      {"blt", [&] { return std::make_unique<BltNoise>(blt, horizon, 1.5, 1.0, size); }},
  };
  std::uint64_t seed = 31;
  for (const auto& [name, make] : strategies) {
    INFO("strategy " << name);
    const auto samples = sample_release_noise(make, horizon, size, trials, seed++);
    const auto closed = make();
    const auto [lo, hi] = dpstream::testing::chi_square_interval(n, alpha);
    for (std::uint64_t t = 1; t <= horizon; ++t) {
      double sum_sq = 0;
      for (double x : samples[t]) sum_sq += x * x;
      const double expected = closed->release_variance(t);
      INFO("t = " << t << ", empirical " << sum_sq / n << ", closed form " << expected);
      CHECK(sum_sq / expected >= lo);
      CHECK(sum_sq / expected <= hi);
      double from_weights = 0;
      for (const NodeWeight& w : closed->release_weights(t)) from_weights += w.weight * w.weight;
      CHECK(from_weights == Approx(expected).epsilon(1e-12));
    }
    for (const auto& [s, t] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 2}, {3, 4}, {5, 12}, {15, 16}}) {
      double cross = 0;
      for (std::size_t i = 0; i < samples[s].size(); ++i) cross += samples[s][i] * samples[t][i];
      const double expected = closed->release_covariance(s, t);
      const double se = std::sqrt(2.0 * closed->release_variance(s) * closed->release_variance(t) / n);
      INFO("Cov(" << s << ", " << t << ") empirical " << cross / n << ", closed form " << expected);
      CHECK(std::fabs(cross / n - expected) <= dpstream::testing::chernoff_z(alpha) * se);
    }
  }
}

TEST_CASE("calibration: mu is the target's, sensitivity from the strategy's first column", "[factorization][privacy]") {
  const EpsDelta target(1.0, 1e-6);
  for (FactorizationKind kind : {FactorizationKind::sqrt_toeplitz, FactorizationKind::blt}) {
    FactorizationNoiseOptions o;
    o.kind = kind;
    o.horizon = 469;
    o.l2_sensitivity = 1.0;
    o.target = target;
    const auto noise = make_factorization_noise(o, 3);
    INFO(noise->name());
    // The Gaussian mechanism with sensitivity μ and σ = 1 is exactly (1, 1e-6)-DP.
    CHECK(privacy::analytic_gaussian_delta(noise->mu(), 1.0, 1.0) == Approx(1e-6).epsilon(1e-6));
    // Against the tree of the same horizon (10 levels, ε = 1, δ = 1e-6): the largest release
    // variance is several times smaller. Exact formulas (T = 2^10): tree max 110 vs sqrt 10.71.
    TreeNoiseOptions t;
    t.horizon = 469;
    const auto tree = make_tree_noise(t, 3);
    double tree_max = 0;
    for (std::uint64_t s = 1; s <= 469; ++s) tree_max = std::max(tree_max, tree->release_variance(s));
    CHECK(noise->release_variance(469) < tree_max / 4);
  }
  // σ scales with Δ; the paper calibration refuses ε ≥ 1.
  FactorizationNoiseOptions o;
  o.horizon = 64;
  o.blt = golden();
  o.target = EpsDelta(2.0, 1e-6);
  o.calibration = Calibration::paper;
  CHECK_THROWS_AS(make_factorization_noise(o, 3), InvalidParameter);
  o.horizon = 0;
  o.calibration = Calibration::tight;
  CHECK_THROWS_NAMING(make_factorization_noise(o, 3), InvalidParameter, Contains("horizon must be >= 1"));
}

TEST_CASE("factorization state round trip continues the same noise; bad states are refused", "[factorization][checkpoint]") {
  const std::uint64_t horizon = 50;
  const Index size = 5;
  auto round_trip = [&](auto make) {
    auto original = make();
    privacy::SeededNoiseSource source(9);
    VectorXd noise = VectorXd::Zero(size);
    for (int t = 0; t < 23; ++t) original.advance(source, noise);
    proto::ContinualNoiseState state;
    original.save(state);
    auto restored = make();
    restored.load(state);
    CHECK(restored.steps() == 23);
    VectorXd noise_restored = noise;
    privacy::SeededNoiseSource a(77), b(77);
    for (int t = 23; t < static_cast<int>(horizon); ++t) {
      original.advance(a, noise);
      restored.advance(b, noise_restored);
      REQUIRE(noise == noise_restored);  // bitwise: no draw repeated or re-drawn
    }
    CHECK_THROWS_AS(original.advance(a, noise), InvalidParameter);  // past the horizon
    return state;
  };
  const proto::ContinualNoiseState sqrt_state = round_trip([&] { return SqrtToeplitzNoise(horizon, 2.0, 1.0, size); });
  CHECK(sqrt_state.factorization().state_size() == 23 * size);  // every draw so far
  const proto::ContinualNoiseState blt_state = round_trip([&] { return BltNoise(golden(), horizon, 2.0, 1.0, size); });
  CHECK(blt_state.factorization().state_size() == 2 * size);  // the buffers only

  CHECK_THROWS_NAMING(BltNoise(golden(), horizon, 3.0, 1.0, size).load(blt_state), CorruptInput, Contains("sigma"));
  CHECK_THROWS_NAMING(BltNoise(golden(), horizon + 1, 2.0, 1.0, size).load(blt_state), CorruptInput, Contains("horizon"));
  CHECK_THROWS_NAMING(BltNoise(rational_approximation_blt(2), horizon, 2.0, 1.0, size).load(blt_state), CorruptInput,
                      Contains("BLT parameters differ"));
  CHECK_THROWS_NAMING(SqrtToeplitzNoise(horizon, 2.0, 1.0, size).load(blt_state), CorruptInput, Contains("strategy"));
  proto::ContinualNoiseState short_state = blt_state;
  short_state.mutable_factorization()->mutable_state()->RemoveLast();
  CHECK_THROWS_NAMING(BltNoise(golden(), horizon, 2.0, 1.0, size).load(short_state), CorruptInput, Contains("expected 2 buffers"));
  proto::ContinualNoiseState lost_draw = sqrt_state;
  lost_draw.mutable_factorization()->mutable_state()->RemoveLast();  // a released draw lost: never re-drawn
  CHECK_THROWS_NAMING(SqrtToeplitzNoise(horizon, 2.0, 1.0, size).load(lost_draw), CorruptInput, Contains("stored draws"));
}

TEST_CASE("a ContinualCovariance on a BLT, sqrt or separable strategy: exact prefix plus the strategy's noise, one charge", "[factorization][continual]") {
  const Index d = 4;
  MatrixXd rows = MatrixXd::Random(30, d);
  rows = rows.array() / 4;  // norms ≤ 1
  for (NoiseStrategy strategy : {NoiseStrategy::sqrt_toeplitz, NoiseStrategy::blt, NoiseStrategy::separable}) {
    INFO(to_string(strategy));
    ContinualSumOptions o;
    o.horizon = 10;
    o.block_rows = 3;
    o.strategy = strategy;
    o.privacy.noise.seed = 3;
    privacy::PrivacyAccountant accountant(EpsDelta(1.0, 1e-6));
    ContinualCovariance sum(d, o, accountant);
    CHECK(accountant.ledger().size() == 1);
    CHECK(sum.noise().name() == to_string(strategy));
    sum.update_block(rows);
    CHECK(sum.steps() == 10);
    // The release minus the exact prefix is the noise: its size is that of the closed form (loose:
    // 10 upper-triangle entries of N(0, Var), |x| ≤ 6σ with probability 1 − 2e-8 each).
    const MatrixXd exact = rows.transpose() * rows;
    const double sd = std::sqrt(sum.latest().noise_variance);
    CHECK((sum.noisy_prefix() - exact).cwiseAbs().maxCoeff() <= 6 * sd);
    CHECK(sum.noisy_prefix() != exact);
    CHECK_THROWS_AS(sum.update(rows.row(0).transpose()), BudgetExhausted);  // past T·B rows
  }
  ContinualSumOptions unbounded;
  unbounded.strategy = NoiseStrategy::blt;
  CHECK_THROWS_NAMING(ContinualCovariance(d, unbounded, test_budget::unaccounted()), InvalidParameter, Contains("fixed horizon"));
  CHECK(parse_noise_strategy("sqrt") == NoiseStrategy::sqrt_toeplitz);
  CHECK(parse_noise_strategy("tree") == NoiseStrategy::plain_tree);
  CHECK(parse_noise_strategy("separable") == NoiseStrategy::separable);
  CHECK_THROWS_NAMING(parse_noise_strategy("bltx"), InvalidParameter, Contains("expected tree, honaker, sqrt, blt or separable"));
}

TEST_CASE("draw_sigma and describe: what dpstream-replay worked out by the concrete class, for every strategy", "[factorization][continual]") {
  // examples/replay.cpp's node_sigma and mechanism_label as they were (the separable label without
  // the tool's own tail), which these two functions replace.
  auto tool_sigma = [](const ContinualCovariance& sum) {
    if (const auto* tree = dynamic_cast<const TreeNoise*>(&sum.noise())) return tree->node_sigma();
    if (const auto* blt = dynamic_cast<const BltNoise*>(&sum.noise())) return blt->sigma();
    if (const auto* sqrt = dynamic_cast<const SqrtToeplitzNoise*>(&sum.noise())) return sqrt->sigma();
    if (const auto* separable = dynamic_cast<const SeparableNoise*>(&sum.noise())) return separable->sigma();
    if (const auto* epochs = dynamic_cast<const EpochTreeNoise*>(&sum.noise())) {
      const std::uint64_t steps = std::max<std::uint64_t>(1, sum.steps());
      return epochs->epoch_sigma(static_cast<std::uint32_t>(std::bit_width(steps) - 1));
    }
    return std::nan("");
  };
  auto tool_label = [](const ContinualCovariance& sum) -> std::string {
    if (const auto* blt = dynamic_cast<const BltNoise*>(&sum.noise()))
      return "BLT (" + std::to_string(blt->blt().buffers()) + " buffers)";
    if (dynamic_cast<const SqrtToeplitzNoise*>(&sum.noise())) return "square-root Toeplitz factorization";
    if (dynamic_cast<const SeparableNoise*>(&sum.noise())) return "separable factorization";
    return sum.options().strategy == NoiseStrategy::honaker_tree ? "Honaker tree" : "binary tree";
  };
  const Index d = 3;
  for (const std::uint64_t horizon : {std::uint64_t{0}, std::uint64_t{12}}) {
    for (NoiseStrategy strategy : {NoiseStrategy::plain_tree, NoiseStrategy::honaker_tree, NoiseStrategy::sqrt_toeplitz,
                                   NoiseStrategy::blt, NoiseStrategy::separable}) {
      if (horizon == 0 && needs_fixed_horizon(strategy)) continue;
      INFO(to_string(strategy) << ", horizon " << horizon);
      ContinualSumOptions o;
      o.horizon = horizon;
      o.strategy = strategy;
      o.privacy.noise.seed = 9;
      ContinualCovariance sum(d, o, test_budget::unaccounted());
      CHECK(sum.noise().describe() == tool_label(sum));
      CHECK(sum.noise().draw_sigma() == tool_sigma(sum));
      for (int t = 0; t < 12; ++t) {
        sum.update(VectorXd::Constant(d, 0.05 * t));
        CHECK(sum.noise().draw_sigma() == tool_sigma(sum));
      }
    }
  }
  // The texts themselves (a BLT with the golden strategy's 2 buffers).
  CHECK(BltNoise(golden(), 8, 1.5, 1.0, 2).describe() == "BLT (2 buffers)");
  CHECK(BltNoise(golden(), 8, 1.5, 1.0, 2).draw_sigma() == 1.5);
  CHECK(SqrtToeplitzNoise(8, 2.5, 1.0, 2).describe() == "square-root Toeplitz factorization");
  CHECK(SqrtToeplitzNoise(8, 2.5, 1.0, 2).draw_sigma() == 2.5);
}

}  // namespace test_factorization_noise
