// Private power iteration, rank-k deflation and coherence (pca/private_power_iteration.hpp,
// pca/coherence.hpp) against Hardt & Roth, "Beyond worst-case analysis in private singular vector
// computation" (STOC 2013, HR13): calibration pins, noise variance and sensitivity, behaviour (quadratic
// error law, fail vs coherence, sign symmetry, deflation, the
// dilation pitfall, accounting) and the coherence measures. Every random input is seeded; tolerances
// are derived where they are used.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/coherence.hpp"
#include "dpstream/pca/private_power_iteration.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "random_matrices.hpp"
#include "stat_helpers.hpp"
#include "unaccounted.hpp"

namespace test_private_power_iteration {

using namespace dpstream;
using namespace dpstream::pca;
using Catch::Matchers::Contains;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using privacy::Calibration;
using privacy::EpsDelta;
using privacy::PrivacyAccountant;
using privacy::SeededNoiseSource;

namespace {

using testing::orthonormal_columns;

MatrixXd gaussian(Index rows, Index cols, privacy::NoiseSource& source) {
  return testing::gaussian_matrix(rows, cols, source);
}

// The behaviour tests' matrix: A = Σ_{i≤5} λ_i u_i u_iᵀ + GOE bulk of radius bulk·L, λ = L(1, .5, .45, .4, .35).
// spread = 0: u random (incoherent); spread = s: u_1 = ±1/√s on s evenly spaced coordinates (μ ≈ n/s).
struct Spiked {
  MatrixXd a;
  MatrixXd u;  // the planted u_1 … u_5 (A's eigenvectors up to the bulk's perturbation)
};
Spiked spiked(Index n, double scale, Index spread, std::uint64_t seed, double bulk = 0.1) {
  SeededNoiseSource source(seed);
  const VectorXd lambda = scale * VectorXd{{1.0, 0.5, 0.45, 0.4, 0.35}};
  MatrixXd g = gaussian(n, 5, source);
  if (spread > 0) {
    g.col(0).setZero();
    for (Index i = 0; i < spread; ++i) g(i * (n / spread), 0) = i % 2 ? -1.0 : 1.0;
  }
  const MatrixXd u = orthonormal_columns(g);  // Householder keeps u_1 ∝ g_1
  const MatrixXd w = gaussian(n, n, source);
  // Off-diagonal entries N(0, s²) with s = bulk·L/(2√n): semicircle radius 2s√n = bulk·L.
  const double s = bulk * scale / (2.0 * std::sqrt(static_cast<double>(n)));
  MatrixXd a = u * lambda.asDiagonal() * u.transpose() + (w + w.transpose()) * (s / std::sqrt(2.0));
  a = (0.5 * (a + a.transpose())).eval();
  return {a, u};
}

// The n = 1000 matrices of the fail-vs-coherence test and the search, built once (≈ 0.2 s each).
const Spiked& incoherent_1000() {
  static const Spiked m = spiked(1000, 1e4, 0, 7);
  return m;
}
const Spiked& coherent_1000(Index spread) {
  static const Spiked m8 = spiked(1000, 1e4, 8, 7);
  static const Spiked m11 = spiked(1000, 1e4, 11, 7);
  return spread == 8 ? m8 : m11;
}

double largest_abs_eigenvalue(const MatrixXd& a) {
  return linalg::SymmetricEigenSolver(a, Eigen::EigenvaluesOnly).eigenvalues().cwiseAbs().maxCoeff();
}

// σ₁ of a symmetric A with a clear gap, by plain (non-private) power iteration: for n = 2000, where a
// full eigendecomposition would cost seconds.
double top_singular_value(const MatrixXd& a, int iterations = 200) {
  VectorXd x = VectorXd::Ones(a.rows()).normalized();
  for (int i = 0; i < iterations; ++i) x = (a * x).normalized();
  return (a * x).norm();
}

PpiOptions options(Calibration calibration, long iterations, double c) {
  PpiOptions o;
  o.calibration = calibration;
  o.iterations = iterations;
  o.coherence_bound = c;
  return o;
}

// A symmetric operator that records every vector it is applied to.
struct Recorder {
  const MatrixXd* a;
  std::vector<VectorXd> inputs;
  SymmetricOperator op() {
    return {a->rows(), [this](const VectorXd& x, VectorXd& y) {
              inputs.push_back(x);
              y = *a * x;
            }};
  }
};

}  // namespace

// ---- Calibration pins and validation -------------------------------------------------------------

TEST_CASE("PPI calibration pins: sigma = 90.4 at T = 37, eps = 1, delta = 1e-6; exact delta of both calibrations",
          "[ppi][calibration]") {
  const EpsDelta target(1.0, 1e-6);
  const double paper = ppi_sigma(37, target, Calibration::paper);
  CHECK(paper == Approx(2.0 * std::sqrt(4.0 * 37.0 * std::log(1e6))).epsilon(1e-14));
  CHECK(paper == Approx(90.44).margin(0.005));
  // T rounds of ratio 1/σ compose to μ = √T/σ = ε/(4√ln(1/δ)) GDP (Dong, Roth & Su 2019).
  const double mu_paper = std::sqrt(37.0) / paper;
  CHECK(mu_paper == Approx(1.0 / (4.0 * std::sqrt(std::log(1e6)))).epsilon(1e-12));
  // Exact δ (Balle–Wang profile of the composed Gaussian): far below δ at the nominal ε = 1 (the paper
  // calibration is valid), and exactly δ at ε ≈ 0.26.
  CHECK(privacy::analytic_gaussian_delta(std::sqrt(37.0), paper, 1.0) < 1e-20);
  const double exact_eps = gaussian_dp_epsilon(mu_paper, 1e-6);
  CHECK(exact_eps == Approx(0.26).margin(0.005));
  CHECK(privacy::analytic_gaussian_delta(std::sqrt(37.0), paper, exact_eps) <= 1e-6);
  CHECK(privacy::analytic_gaussian_delta(std::sqrt(37.0), paper, exact_eps * (1 - 1e-6)) > 1e-6);
  // The rest of the table of exact ε (printed to 2 decimals).
  const std::array<std::array<double, 3>, 2> table{{{0.22, 0.26, 0.29}, {0.10, 0.12, 0.14}}};
  const std::array<double, 3> deltas{1e-4, 1e-6, 1e-9};
  const std::array<double, 2> epsilons{1.0, 0.5};
  for (std::size_t e = 0; e < 2; ++e)
    for (std::size_t d = 0; d < 3; ++d) {
      INFO("eps " << epsilons[e] << " delta " << deltas[d]);
      CHECK(gaussian_dp_epsilon(epsilons[e] / (4.0 * std::sqrt(std::log(1.0 / deltas[d]))), deltas[d]) ==
            Approx(table[e][d]).margin(0.005 + 1e-9));
    }
  // tight: the composed mechanism is exactly (ε, δ): σ = √T·σ_analytic(1; 1, 1e-6) = √37·4.2247 = 25.70.
  const double tight = ppi_sigma(37, target, Calibration::tight);
  CHECK(tight == Approx(std::sqrt(37.0) * privacy::analytic_gaussian_sigma(1.0, target)).epsilon(1e-14));
  CHECK(tight == Approx(25.70).margin(0.005));
  CHECK(privacy::analytic_gaussian_delta(std::sqrt(37.0), tight, 1.0) == Approx(1e-6).epsilon(1e-6));
  // Rank k (Fig 3): ε' = ε/√(4k ln(1/δ)); at k = 5, E|Lap(1/ε')| = 1/ε' = 16.6.
  const Spiked small = spiked(40, 100.0, 0, 1);
  PpiOptions o = options(Calibration::paper, 3, 40.0);
  o.k = 5;
  SeededNoiseSource noise(1);
  const PpiResult r = private_rank_k(small.a, o, noise, test_budget::unaccounted());
  CHECK(1.0 / r.value_epsilon == Approx(std::sqrt(20.0 * std::log(1e6))).epsilon(1e-14));
  CHECK(1.0 / r.value_epsilon == Approx(16.6).margin(0.05));
  CHECK(r.sigma == Approx(ppi_sigma(3, EpsDelta(r.value_epsilon, 1e-6 / 5), Calibration::paper)).epsilon(1e-14));
  // Iteration counts: HR13's T = ⌈4 ln σ₁⌉ = 37 at σ₁ = 10⁴; Cor 3.2's proof needs (16k/γ) ln σ₁.
  CHECK(paper_iteration_count(10004.0) == 37);
  CHECK(paper_iteration_count(0.5) == 1);
  CHECK(proof_iteration_count(10004.0, 1, 0.5) == static_cast<long>(std::ceil(32.0 * std::log(10004.0))));
}

TEST_CASE("per-round sensitivity and noise: sqrt(C/n), x sqrt(2) for the dilation and mirrored pairs",
          "[ppi][calibration]") {
  const Spiked s = spiked(50, 100.0, 0, 2);
  const double c = 30.0;
  SeededNoiseSource noise(2);
  const PpiResult single = private_power_iteration(s.a, options(Calibration::paper, 5, c), noise, test_budget::unaccounted());
  CHECK(single.round_sensitivity == Approx(std::sqrt(c / 50.0)).epsilon(1e-14));
  CHECK(single.noise_std == Approx(std::sqrt(c / 50.0) * ppi_sigma(5, EpsDelta(1, 1e-6), Calibration::paper)).epsilon(1e-14));
  CHECK(single.gdp_mu == Approx(std::sqrt(5.0) * single.round_sensitivity / single.noise_std).epsilon(1e-14));
  PpiOptions pair = options(Calibration::paper, 5, c);
  pair.unit = EntryChange::mirrored_pair;
  const PpiResult mirrored = private_power_iteration(s.a, pair, noise, test_budget::unaccounted());
  CHECK(mirrored.noise_std == Approx(std::sqrt(2.0) * single.noise_std).epsilon(1e-14));
  CHECK(mirrored.gdp_mu == Approx(single.gdp_mu).epsilon(1e-14));  // same privacy, more noise
  const MatrixXd rect = gaussian(20, 30, noise);
  const PpiResult dilated = private_power_iteration_rectangular(rect, options(Calibration::paper, 5, c), noise, test_budget::unaccounted());
  CHECK(dilated.round_sensitivity == Approx(std::sqrt(2.0 * c / 50.0)).epsilon(1e-14));  // N = m + d = 50
  CHECK(dilated.noise_std == Approx(std::sqrt(2.0) * single.noise_std).epsilon(1e-14));
}

TEST_CASE("options and inputs are validated, naming the field", "[ppi][validation]") {
  const Spiked s = spiked(20, 10.0, 0, 3);
  SeededNoiseSource noise(3);
  PpiOptions o = options(Calibration::paper, 5, 10.0);
  o.target = EpsDelta(1.0, 0.5);
  CHECK_THROWS_NAMING(private_power_iteration(s.a, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("target.delta must be in (0, 1/2)"));
  o.calibration = Calibration::tight;
  o.target = EpsDelta(1.0, 0.0);
  CHECK_THROWS_NAMING(private_power_iteration(s.a, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("target.delta must be > 0"));
  o = options(Calibration::tight, 0, 10.0);
  CHECK_THROWS_NAMING(private_power_iteration(s.a, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("iterations must be >= 1, got 0"));
  for (double bad : {0.0, -1.0, std::nan("")}) {
    o = options(Calibration::tight, 5, bad);
    CHECK_THROWS_NAMING(private_power_iteration(s.a, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("coherence_bound must be finite and > 0"));
  }
  o = options(Calibration::tight, 5, 10.0);
  o.k = 0;
  CHECK_THROWS_NAMING(private_rank_k(s.a, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("k must be >= 1, got 0"));
  o.k = 21;
  CHECK_THROWS_NAMING(private_rank_k(s.a, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("k must be in [1, 20], got 21"));
  o.k = 2;
  o.value_share = 1.0;
  CHECK_THROWS_NAMING(private_rank_k(s.a, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("value_share must be in (0, 1)"));
  o = options(Calibration::tight, 5, 10.0);
  o.iterations.reset();
  o.iteration_share = 0.0;
  CHECK_THROWS_NAMING(private_power_iteration(s.a, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("iteration_share must be in (0, 1)"));
  o.iteration_share = 0.05;
  Recorder rec{&s.a, {}};
  CHECK_THROWS_NAMING(private_power_iteration(rec.op(), o, noise, test_budget::unaccounted()), InvalidParameter, Contains("iterations must be set for a linear operator"));
  // Inputs: symmetric, finite, square for the symmetric entry points.
  o = options(Calibration::tight, 5, 10.0);
  MatrixXd asym = s.a;
  asym(0, 1) += 1.0;
  CHECK_THROWS_NAMING(private_power_iteration(asym, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("matrix is not symmetric"));
  MatrixXd nan = s.a;
  nan(3, 4) = std::nan("");
  CHECK_THROWS_NAMING(private_power_iteration(nan, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("matrix(3,4) is not finite"));
  CHECK_THROWS_NAMING(private_power_iteration_rectangular(nan, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("matrix(3,4) is not finite"));
  const MatrixXd wide = MatrixXd::Ones(3, 5);
  CHECK_THROWS_NAMING(private_power_iteration(wide, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("must be square"));
  o.k = 4;
  CHECK_THROWS_NAMING(private_rank_k_rectangular(wide, o, noise, test_budget::unaccounted()), InvalidParameter, Contains("k must be in [1, 3], got 4"));
  // A single run releases no σ̂, so it has no B_k.
  const PpiResult single = private_power_iteration(s.a, options(Calibration::tight, 5, 20.0), noise, test_budget::unaccounted());
  CHECK_THROWS_NAMING(single.approximation(), InvalidParameter, Contains("no singular values were released"));
}

// ---- Noise variance, sensitivity, purity of the check --------------------------------------------

TEST_CASE("PPI noise variance C sigma^2/n by chi-square on A = 0", "[ppi][statistical]") {
  // On A = 0, x'_t = g_t exactly, so Σ_{t,runs} ‖x'_t‖² / (Cσ²/n) ~ χ² with n·T·runs degrees of
  // freedom (snapping moves each coordinate by ≤ 2⁻⁴¹σ, negligible). Laurent–Massart interval at
  // α = 1e-7 (about ±1.9% at 200,000 degrees of freedom); 3 configurations: false alarm < 3e-7.
  // C = 50 ≥ n‖x_t‖∞² of a random unit vector (≈ 2 ln n ≈ 12, max over 500 draws < 30): no fails.
  const Index n = 400;
  const long iterations = 25;
  const int runs = 20;
  const MatrixXd zero = MatrixXd::Zero(n, n);
  const auto [lo, hi] = testing::chi_square_interval(static_cast<double>(n * iterations * runs), 1e-7);
  for (Calibration calibration : {Calibration::paper, Calibration::tight})
    for (bool rectangular : {false, true}) {
      if (calibration == Calibration::tight && rectangular) continue;
      INFO(privacy::to_string(calibration) << (rectangular ? " dilation" : " symmetric"));
      SeededNoiseSource noise(rectangular ? 41 : 40);
      double sum_sq = 0, variance = 0;
      for (int r = 0; r < runs; ++r) {
        const PpiResult res = rectangular
                                  ? private_power_iteration_rectangular(MatrixXd::Zero(150, 250), options(calibration, iterations, 50.0), noise, test_budget::unaccounted())
                                  : private_power_iteration(zero, options(calibration, iterations, 50.0), noise, test_budget::unaccounted());
        REQUIRE_FALSE(res.failed);
        for (double norm : res.traces[0].norms) sum_sq += norm * norm;
        variance = res.noise_std * res.noise_std;
        // Cσ²/n, with σ including √2 for the dilation (N = 400 there too).
        CHECK(variance == Approx(50.0 * res.sigma * res.sigma / 400.0).epsilon(1e-12));
      }
      INFO("empirical variance " << sum_sq / (n * iterations * runs) << ", C sigma^2/n = " << variance);
      CHECK(sum_sq / variance >= lo);
      CHECK(sum_sq / variance <= hi);
    }
}

TEST_CASE("PPI: the check runs on x_{t-1} before A x_{t-1}; ||(A - A')x|| <= ||x||_inf <= sqrt(C/n)",
          "[ppi][privacy]") {
  // Coherent spikes (μ ≈ n/4 = 50). C = 25 lies between the start's coherence (≈ 2 ln n ≈ 11) and μ:
  // those runs pass early rounds and fail once x_t aligns with u_1; C = 100 > μ runs pass all T
  // rounds. An instrumented operator sees every vector multiplied by A.
  const Index n = 200;
  const Spiked s = spiked(n, 1e3, 4, 11);
  SeededNoiseSource noise(12), pick(13);
  int failed_runs = 0;
  for (int run = 0; run < 20; ++run) {
    const double c = run % 2 ? 100.0 : 25.0;
    Recorder rec{&s.a, {}};
    const PpiResult r = private_power_iteration(rec.op(), options(Calibration::tight, 15, c), noise, test_budget::unaccounted());
    const PpiTrace& trace = r.traces[0];
    // One product per passed check: T of them, or t − 1 when round t's check failed.
    REQUIRE(static_cast<long>(rec.inputs.size()) == (r.failed ? r.failed_round - 1 : 15));
    failed_runs += r.failed;
    for (std::size_t t = 0; t < rec.inputs.size(); ++t) {
      const VectorXd& x = rec.inputs[t];
      // The check read exactly the vector A was then applied to, and it passed.
      CHECK(trace.coherence[t] == static_cast<double>(n) * x.cwiseAbs2().maxCoeff());
      CHECK(x.cwiseAbs2().maxCoeff() <= c / n);
      if (t > 0) CHECK(x.norm() == Approx(1.0).epsilon(1e-12));  // a normalised release, not raw data
      // Random neighbours: one entry (paper), a mirrored pair, and the dilation's two entries.
      for (int trial = 0; trial < 5; ++trial) {
        const Index i = static_cast<Index>(pick.next_word() % n), j = static_cast<Index>(pick.next_word() % n);
        const double alpha = 2.0 * pick.uniform_open() - 1.0;
        MatrixXd diff = MatrixXd::Zero(n, n);
        diff(i, j) = alpha;
        CHECK((diff * x).norm() <= x.cwiseAbs().maxCoeff() + 1e-15);
        CHECK((diff * x).norm() <= std::sqrt(c / n) + 1e-15);
        diff(j, i) = alpha;
        CHECK((diff * x).norm() <= std::sqrt(2.0) * x.cwiseAbs().maxCoeff() + 1e-15);
      }
    }
    if (r.failed) {
      // The failing iterate is recorded and exceeds C; A never saw it.
      CHECK(trace.coherence.back() > c);
      CHECK(r.vectors.cols() == 0);
    } else {
      CHECK(trace.coherence.size() == 16);  // x_0 … x_T
      CHECK(trace.norms.size() == 15);
    }
  }
  INFO("failed runs " << failed_runs << "/20");
  CHECK(failed_runs == 10);  // every C = 25 run fails (μ = 50), no C = 100 run does
  // x_0 is checked too (t = 1): with C below any n‖x_0‖∞² (n‖x‖∞² ≥ ‖x‖² ≈ 1), A is never touched.
  Recorder rec{&s.a, {}};
  const PpiResult r = private_power_iteration(rec.op(), options(Calibration::tight, 15, 0.5), noise, test_budget::unaccounted());
  CHECK(r.failed);
  CHECK(r.failed_round == 1);
  CHECK(rec.inputs.empty());
  // The dilation: ‖(B − B')x‖ ≤ √2‖x‖∞ for an entry change of A (two entries of B).
  const MatrixXd a = gaussian(30, 40, pick);
  const MatrixXd b = dilation(a);
  for (int trial = 0; trial < 50; ++trial) {
    VectorXd x = gaussian(70, 1, pick).col(0).normalized();
    MatrixXd a2 = a;
    a2(static_cast<Index>(pick.next_word() % 30), static_cast<Index>(pick.next_word() % 40)) += 1.0;
    CHECK(((b - dilation(a2)) * x).norm() <= std::sqrt(2.0) * x.cwiseAbs().maxCoeff() + 1e-15);
  }
}

TEST_CASE("the operator interface gives the dense results bit for bit", "[ppi]") {
  const Spiked s = spiked(80, 100.0, 0, 14);
  PpiOptions o = options(Calibration::tight, 12, 40.0);
  o.k = 3;
  SeededNoiseSource n1(15), n2(15);
  Recorder rec{&s.a, {}};
  const PpiResult dense = private_rank_k(s.a, o, n1, test_budget::unaccounted());
  const PpiResult op = private_rank_k(rec.op(), o, n2, test_budget::unaccounted());
  CHECK(dense.vectors == op.vectors);
  CHECK(dense.values == op.values);
}

// ---- Behaviour -----------------------------------------------------------------------------------

TEST_CASE("PPI quadratic error law E[sigma_1 - ||A x_T||] = C sigma^2 / (2 sigma_1)", "[ppi][statistical]") {
  // A reference prototype's setting: n = 2000, L = 10⁴, T = 37, paper σ = 90.4, ε = 1, δ = 1e-6; C = 6 ln n = 45.6
  // (prototype: 18.6 predicted, 18.65 measured) and C = 107 (43.7 / 43.6). Prediction with the bulk
  // correction: Cσ²/(2σ₁)·(1 − ‖A‖_F²/(nσ₁²)).
  // Tolerance: one run's error is (‖g⊥‖² − g⊥ᵀA²g⊥/σ₁²)/(2σ₁), a scaled χ²_n: relative sd √(2/n) =
  // 3.2%, so the mean of 10 runs has sd ≈ 1% — checked within chernoff_z(1e-6) = 5.4 sample SEs.
  // Plus 2% for the law's neglected terms: O(‖g‖²/σ₁²) ≤ 1% here, and x_{T−1}'s own error.
  const Index n = 2000;
  const Spiked s = spiked(n, 1e4, 0, 21);
  const double sigma1 = top_singular_value(s.a);
  const double bulk_factor = 1.0 - s.a.squaredNorm() / (static_cast<double>(n) * sigma1 * sigma1);
  for (double c : {6.0 * std::log(static_cast<double>(n)), 107.0}) {
    SeededNoiseSource noise(22);
    std::vector<double> errors;
    double sigma = 0;
    for (int run = 0; run < 10; ++run) {
      const PpiResult r = private_power_iteration(s.a, options(Calibration::paper, 37, c), noise, test_budget::unaccounted());
      REQUIRE_FALSE(r.failed);
      errors.push_back(sigma1 - (s.a * r.vectors.col(0)).norm());
      sigma = r.sigma;
    }
    const testing::Moments m = testing::moments(errors);
    const double predicted = c * sigma * sigma / (2.0 * sigma1) * bulk_factor;
    const double tolerance = testing::chernoff_z(1e-6) * std::sqrt(m.variance / 10.0) + 0.02 * predicted;
    INFO("C = " << c << ": predicted " << predicted << ", measured " << m.mean << " +- " << tolerance);
    CHECK(sigma == Approx(90.44).margin(0.005));
    CHECK(std::abs(m.mean - predicted) <= tolerance);
  }
}

TEST_CASE("PPI fail behaviour vs coherence (Lemma 4.3), n = 1000", "[ppi][statistical][statistical-regression]") {
  // Incoherent: μ ≈ 25 (≈ 3.6 ln n over the full basis), μ_top ≈ 10; n‖x_t‖∞² stays ≈ 2 ln n + noise,
  // so C = 6 ln n = 41.4 never fails (prototype, n = 2000: 0/10). Coherent s = 8: u_1 on 8 coordinates,
  // μ ≈ n/8 = 125: once x_t aligns with u_1 its coherence is ≈ μ, so C = 41.4 < μ_top fails in every
  // run and C = 4μ ≈ 500 in none (prototype: 10/10 and 0/10). Also the practical threshold
  // 2μ_top + 4 ln n never fails, and C = μ_top/2 always does. 10 runs per setting; the expected
  // counts are 0 or 10 with margins of many noise sds (trace ≈ 125–136 against 41 and 280).
  const double n = 1000, ln_n = std::log(n);
  const Spiked& inc = incoherent_1000();
  const Spiked& coh = coherent_1000(8);
  const double mu_inc = mu_coherence(inc.a), mu_coh = mu_coherence(coh.a);
  const double mu_top_inc = top_k_coherence(inc.a, 1), mu_top_coh = top_k_coherence(coh.a, 1);
  INFO("mu incoherent " << mu_inc << " (top " << mu_top_inc << "), coherent " << mu_coh << " (top " << mu_top_coh << ")");
  CHECK(mu_inc > 2 * ln_n);
  CHECK(mu_inc < 8 * ln_n);
  CHECK(mu_coh == Approx(n / 8).epsilon(0.05));
  const double sigma1_inc = largest_abs_eigenvalue(inc.a), sigma1_coh = largest_abs_eigenvalue(coh.a);
  const auto fails = [&](const Spiked& s, double c, double* mean_error = nullptr, double* max_trace = nullptr) {
    SeededNoiseSource noise(31);
    int count = 0;
    double error = 0, trace = 0;
    const double sigma1 = &s == &inc ? sigma1_inc : sigma1_coh;
    for (int run = 0; run < 10; ++run) {
      const PpiResult r = private_power_iteration(s.a, options(Calibration::paper, 37, c), noise, test_budget::unaccounted());
      trace = std::max(trace, r.max_coherence());
      if (r.failed) {
        ++count;
        continue;
      }
      error += sigma1 - (s.a * r.vectors.col(0)).norm();
    }
    if (mean_error != nullptr) *mean_error = count < 10 ? error / (10 - count) : 0;
    if (max_trace != nullptr) *max_trace = trace;
    return count;
  };
  double err_inc = 0, err_coh = 0, trace_inc = 0, trace_coh = 0;
  CHECK(fails(inc, 6 * ln_n, &err_inc, &trace_inc) == 0);
  CHECK(trace_inc < 6 * ln_n);
  CHECK(fails(coh, 6 * ln_n) == 10);
  CHECK(fails(coh, mu_top_coh / 2) == 10);
  CHECK(fails(coh, 4 * mu_coh, &err_coh, &trace_coh) == 0);
  CHECK(fails(coh, 2 * mu_top_coh + 4 * ln_n) == 0);
  // The price of a coherent input is noise: the quadratic law scales with C (prototype: 415 vs 18.65).
  INFO("error at C = 6 ln n (incoherent) " << err_inc << ", at C = 4 mu (coherent) " << err_coh << "; max trace " << trace_inc << " / " << trace_coh);
  CHECK(err_coh / err_inc == Approx(4 * mu_coh / (6 * ln_n)).epsilon(0.15));
  CHECK(trace_coh > mu_top_coh * 0.9);
}

TEST_CASE("PPI sign symmetry (Lemma 4.1): signs of <u_i, x_T> uniform on {-1,1}^3", "[ppi][statistical]") {
  // 400 runs on a spiked n = 100 matrix; the signs of ⟨u_i, x_T⟩ for the top 3 eigenvectors fall in 8
  // cells, 50 expected each. Uniform on {±1}³ (Bernoulli(½) and independent) ⇒ Pearson's statistic is
  // ≈ χ²_7; checked against the Laurent–Massart bound at α = 1e-4 (41.5).
  const Index n = 100;
  const Spiked s = spiked(n, 100.0, 0, 41);
  linalg::SymmetricEigenSolver eig(s.a);
  const MatrixXd top = eig.eigenvectors().rightCols(3);  // ascending: the top 3 are the last columns
  SeededNoiseSource noise(42);
  std::array<int, 8> cells{};
  const int runs = 400;
  for (int run = 0; run < runs; ++run) {
    const PpiResult r = private_power_iteration(s.a, options(Calibration::tight, 12, static_cast<double>(n)), noise, test_budget::unaccounted());
    REQUIRE_FALSE(r.failed);
    const VectorXd proj = top.transpose() * r.vectors.col(0);
    cells[static_cast<std::size_t>((proj(0) > 0) + 2 * (proj(1) > 0) + 4 * (proj(2) > 0))]++;
  }
  double pearson = 0;
  for (int c : cells) pearson += (c - runs / 8.0) * (c - runs / 8.0) / (runs / 8.0);
  INFO("cells " << cells[0] << " " << cells[1] << " " << cells[2] << " " << cells[3] << " " << cells[4] << " "
                << cells[5] << " " << cells[6] << " " << cells[7] << ", Pearson " << pearson);
  CHECK(pearson <= testing::chi_square_upper(7, 1e-4));
}

TEST_CASE("rank-k deflation on PSD input: B_k has rank k, ||A - B_k|| <= sigma_(k+1) + k beta sigma_1", "[ppi][deflation]") {
  // A = Σ λ_i u_iu_iᵀ + Wishart bulk (PSD, ‖bulk‖ ≤ 0.1L), n = 500, k = 3. tight at L = 10⁴ and paper
  // at L = 10⁵ (Fig 3's ε' = 0.078 makes the paper's noise ‖g‖ ≈ 8,300: too much for L = 10⁴).
  // Weyl bound per run: each component perturbs A by ‖λ_i u_iu_iᵀ − σ̂_i v_iv_iᵀ‖ ≤ |σ̂_i − λ_i| +
  // 2λ_i sin θ_i with λ_i sin θ_i ≈ ‖g‖ = noise_std·√n: βσ₁ := 2‖g‖ + 6/ε' (|Lap| > 6b has prob.
  // e⁻⁶). The median is in fact ≈ σ_{k+1}: the errors are orthogonal to the residual's top direction
  // and enter quadratically (measured excess < 0.01%); checked at 1%.
  const Index n = 500;
  const long k = 3;
  for (Calibration calibration : {Calibration::tight, Calibration::paper}) {
    const double scale = calibration == Calibration::tight ? 1e4 : 1e5;
    SeededNoiseSource source(51);
    const VectorXd lambda = scale * VectorXd{{1.0, 0.5, 0.45, 0.4, 0.35}};
    const MatrixXd u = orthonormal_columns(gaussian(n, 5, source));
    const MatrixXd g = gaussian(n, n, source);
    MatrixXd a = u * lambda.asDiagonal() * u.transpose() + (0.025 * scale / static_cast<double>(n)) * g * g.transpose();
    a = (0.5 * (a + a.transpose())).eval();
    const VectorXd eig = linalg::SymmetricEigenSolver(a, Eigen::EigenvaluesOnly).eigenvalues().reverse();
    REQUIRE(eig(n - 1) > 0);  // PSD
    PpiOptions o = options(calibration, paper_iteration_count(scale), 6 * std::log(static_cast<double>(n)));
    o.k = k;
    SeededNoiseSource noise(52);
    std::vector<double> residuals;
    for (int run = 0; run < 10; ++run) {
      const PpiResult r = private_rank_k(a, o, noise, test_budget::unaccounted());
      REQUIRE_FALSE(r.failed);
      const MatrixXd bk = r.approximation();
      const VectorXd bk_sv = linalg::SymmetricEigenSolver(bk, Eigen::EigenvaluesOnly).eigenvalues().cwiseAbs();
      std::vector<double> sv(bk_sv.data(), bk_sv.data() + n);
      std::sort(sv.rbegin(), sv.rend());
      CHECK(sv[k - 1] > 0.5 * lambda(k - 1));  // rank k …
      CHECK(sv[k] < 1e-9 * sv[0]);             // … exactly
      const double residual = linalg::SymmetricEigenSolver(a - bk, Eigen::EigenvaluesOnly).eigenvalues().cwiseAbs().maxCoeff();
      const double beta_sigma1 = 2.0 * r.noise_std * std::sqrt(static_cast<double>(n)) + 6.0 / r.value_epsilon;
      INFO(privacy::to_string(calibration) << " run " << run << ": residual " << residual << ", sigma_(k+1) " << eig(k)
                                           << ", beta sigma_1 " << beta_sigma1);
      CHECK(residual <= eig(k) + k * beta_sigma1);
      residuals.push_back(residual);
      // The released subspace: orthonormal, ordered by σ̂², method "ppi".
      CHECK((r.subspace.vectors.transpose() * r.subspace.vectors - MatrixXd::Identity(k, k)).cwiseAbs().maxCoeff() < 1e-12);
      CHECK(r.subspace.values.size() == k);
      CHECK(std::is_sorted(r.subspace.values.data(), r.subspace.values.data() + k, std::greater<double>()));
      CHECK(r.subspace.method == "ppi");
    }
    std::nth_element(residuals.begin(), residuals.begin() + 5, residuals.end());
    INFO(privacy::to_string(calibration) << ": median residual " << residuals[5] << ", sigma_(k+1) " << eig(k));
    CHECK(residuals[5] <= 1.01 * eig(k));
  }
}

TEST_CASE("rank-k: sigma_hat tracks ||A_{i-1} v_i|| (or v_i^T A_{i-1} v_i) within Laplace(1/eps')", "[ppi][deflation][statistical]") {
  // σ̂_i − (exact value on the deflated A_{i−1}, recomputed here without privacy) is the Laplace draw
  // (plus snapping to a grid of about 2⁻³⁰ of the noise scale, privacy/snap.hpp). 300 runs × k = 3 on
  // a small PSD matrix; KS against Laplace(1/ε') with the DKW band at α = 1e-4 (0.074); both
  // estimates, both calibrations: false alarm ≤ 4e-4.
  const Index n = 40;
  SeededNoiseSource source(61);
  const MatrixXd u = orthonormal_columns(gaussian(n, 4, source));
  const MatrixXd a = u * VectorXd{{400.0, 200.0, 150.0, 50.0}}.asDiagonal() * u.transpose();
  const auto laplace_cdf = [](double x, double b) { return x <= 0 ? 0.5 * std::exp(x / b) : 1.0 - 0.5 * std::exp(-x / b); };
  for (Calibration calibration : {Calibration::paper, Calibration::tight})
    for (SingularValueEstimate estimate : {SingularValueEstimate::norm, SingularValueEstimate::rayleigh}) {
      PpiOptions o = options(calibration, 10, static_cast<double>(n));
      o.k = 3;
      o.estimate = estimate;
      SeededNoiseSource noise(62);
      std::vector<double> deviations;
      double b = 0;
      for (int run = 0; run < 300; ++run) {
        const PpiResult r = private_rank_k(a, o, noise, test_budget::unaccounted());
        REQUIRE_FALSE(r.failed);
        b = 1.0 / r.value_epsilon;
        MatrixXd deflated = a;
        for (Index i = 0; i < o.k; ++i) {
          const VectorXd v = r.vectors.col(i);
          const VectorXd av = deflated * v;
          deviations.push_back(r.values(i) - (estimate == SingularValueEstimate::norm ? av.norm() : v.dot(av)));
          deflated -= r.values(i) * v * v.transpose();
        }
      }
      const double ks = testing::ks_statistic(deviations, [&](double x) { return laplace_cdf(x, b); });
      double mean_abs = 0;
      for (double d : deviations) mean_abs += std::abs(d);
      INFO(privacy::to_string(calibration) << " estimate " << static_cast<int>(estimate) << ": b = " << b << ", mean |dev| "
                                           << mean_abs / deviations.size() << ", KS " << ks);
      CHECK(ks <= testing::dkw_epsilon(deviations.size(), 1e-4));
    }
}

TEST_CASE("rank-k on general symmetric input: the signed Rayleigh estimate deflates a negative eigenvalue", "[ppi][deflation]") {
  // λ = (−1000, 600, 300, 0, …): PPI finds the −1000 eigenvector (largest |λ|). The paper's σ̂ = ‖Av‖
  // is +1000, so A − σ̂vvᵀ leaves an eigenvalue ≈ −2000; the Rayleigh estimate releases ≈ −1000 and
  // leaves ≈ σ₃ = 300 after k = 2. 5 runs each. Noise: ‖g‖ ≈ 225 (sin θ ≈ 0.2, so σ̂₁ ≈ −950) and
  // Laplace b = 20. The sign is what tells the estimates apart (Rayleigh ≈ −1000, norm ≈ +1000), so
  // σ̂₁ < −500 (halfway from −1000 to 0: 25 Laplace scales, ten times the sin²θ shift); the
  // residuals ≈ 300 vs ≈ 2000 split at 400 and 1500.
  const Index n = 100;
  SeededNoiseSource source(71);
  const MatrixXd u = orthonormal_columns(gaussian(n, 3, source));
  const MatrixXd a = u * VectorXd{{-1000.0, 600.0, 300.0}}.asDiagonal() * u.transpose();
  for (SingularValueEstimate estimate : {SingularValueEstimate::rayleigh, SingularValueEstimate::norm}) {
    PpiOptions o = options(Calibration::tight, 30, 40.0);
    o.k = 2;
    o.estimate = estimate;
    SeededNoiseSource noise(72);
    for (int run = 0; run < 5; ++run) {
      const PpiResult r = private_rank_k(a, o, noise, test_budget::unaccounted());
      REQUIRE_FALSE(r.failed);
      const double residual = largest_abs_eigenvalue(a - r.approximation());
      INFO("estimate " << static_cast<int>(estimate) << ": sigma_hat " << r.values.transpose() << ", residual " << residual);
      if (estimate == SingularValueEstimate::rayleigh) {
        CHECK(r.values(0) < -500);
        CHECK(residual < 400);
      } else {
        CHECK(residual > 1500);
      }
    }
  }
}

TEST_CASE("rank-k dilation pitfall: deflate A with sigma_hat u v^T, never the dilation", "[ppi][deflation][rectangular]") {
  // A reference prototype's setting: A 300 × 900 of rank 3 (σ = 10⁴, 5·10³, 3·10³), T = 30, ε = 1, δ = 1e-6, 40 runs.
  // C = 100, not the prototype's 40: for m ≠ d the dilation is more coherent than A (μ_top(B) =
  // (m + d)/2·max(‖u₁‖∞², ‖v₁‖∞²) ≈ 29: HR13 Fact 2.8's μ(B) = μ(A) needs m = d), and the u-half's
  // amplitude alternates between a and b across rounds, so n‖x_t‖∞² reaches ≈ 58·max(a², b²): C = 40 failed 31/40 runs.
  // tight calibration (Fig 3's paper ε' = 0.13 at k = 1 gives ‖g‖ ≈ 8,600 ≈ σ₁: no signal left).
  //  * Naive (Fig 3 on the dilation B, through the symmetric entry point): B − t·xxᵀ keeps an
  //    eigenvalue of magnitude ≥ σ₁ for EVERY rank-1 update (interlacing: B has both ±σ₁), so the
  //    residual is ≥ σ₁ = 2σ₂ in every run (prototype: 15,745 on average, "≈ 3σ₂").
  //  * Rectangular: A − σ̂ûv̂ᵀ leaves ≈ σ₂. Weyl bound per run: σ₂ + 2‖g‖ + 6/ε' with ‖g‖ the noise
  //    norm √N·noise_std (û, v̂ each within ‖g‖/σ₁ of u, v; |Lap| ≤ 6b but with prob. e⁻⁶).
  // Residual norms are computed exactly in the ≤ 7-dimensional span they live in.
  const Index m = 300, d = 900;
  SeededNoiseSource source(81);
  const MatrixXd u = orthonormal_columns(gaussian(m, 3, source)), v = orthonormal_columns(gaussian(d, 3, source));
  const VectorXd sv{{1e4, 5e3, 3e3}};
  const MatrixXd a = u * sv.asDiagonal() * v.transpose();
  const double mu_top_b = top_k_coherence(dilation(a), 2);
  CHECK(mu_top_b == Approx(0.5 * (m + d) * std::max(u.col(0).cwiseAbs2().maxCoeff(), v.col(0).cwiseAbs2().maxCoeff())).epsilon(1e-6));
  PpiOptions o = options(Calibration::tight, 30, 100.0);
  o.k = 1;
  const auto rectangular_residual = [&](const PpiResult& r) {
    MatrixXd left(m, 4), right(d, 4);
    left << u, r.left_vectors.col(0);
    right << v, r.vectors.col(0);
    const MatrixXd ql = orthonormal_columns(left), qr = orthonormal_columns(right);
    return linalg::singular_values(ql.transpose() * (a - r.approximation()) * qr)(0);
  };
  for (HalfVectors halves : {HalfVectors::last_two_iterates, HalfVectors::last_iterate}) {
    o.halves = halves;
    SeededNoiseSource noise(82);
    std::vector<double> residuals;
    double worst = 0;
    for (int run = 0; run < 40; ++run) {
      const PpiResult r = private_rank_k_rectangular(a, o, noise, test_budget::unaccounted());
      REQUIRE_FALSE(r.failed);
      CHECK(r.values(0) >= 0);
      const double residual = rectangular_residual(r);
      residuals.push_back(residual);
      worst = std::max(worst, residual);
      const double bound = sv(1) + 2.0 * r.noise_std * std::sqrt(static_cast<double>(m + d)) + 6.0 / r.value_epsilon;
      if (halves == HalfVectors::last_two_iterates) CHECK(residual <= bound);
    }
    std::nth_element(residuals.begin(), residuals.begin() + 20, residuals.end());
    INFO((halves == HalfVectors::last_two_iterates ? "last two iterates" : "last iterate") << ": median residual "
         << residuals[20] << ", worst " << worst << ", sigma_2 " << sv(1));
    CHECK(residuals[20] <= 1.01 * sv(1));
    WARN((halves == HalfVectors::last_two_iterates ? "rectangular deflation (last two iterates)" : "rectangular deflation (last iterate)")
         << ": median ||A - B_1|| = " << residuals[20] << ", worst of 40 = " << worst << " (sigma_2 = 5000)");
  }
  // Naive: PPI + Fig 3 on the dilation itself (same noise: mirrored pair = √2), as an operator.
  const SymmetricOperator b_op{m + d, [&](const VectorXd& x, VectorXd& y) {
                                 y.resize(m + d);
                                 y.head(m) = a * x.tail(d);
                                 y.tail(d) = a.transpose() * x.head(m);
                               }};
  MatrixXd b_basis(m + d, 6);
  b_basis << u, u, v, -v;
  b_basis /= std::sqrt(2.0);  // B's eigenvectors (u_i, ±v_i)/√2
  o.unit = EntryChange::mirrored_pair;
  o.estimate = SingularValueEstimate::norm;
  SeededNoiseSource noise(83);
  std::vector<double> naive;
  int negative_rayleigh = 0;
  double smallest_half = 1;
  for (int run = 0; run < 40; ++run) {
    const PpiResult r = private_rank_k(b_op, o, noise, test_budget::unaccounted());
    REQUIRE_FALSE(r.failed);
    const VectorXd x = r.vectors.col(0);
    MatrixXd span(m + d, 7);
    span << b_basis, x;
    const MatrixXd q = orthonormal_columns(span);
    MatrixXd bq(m + d, 7);
    for (Index j = 0; j < 7; ++j) {
      VectorXd col(m + d);
      b_op.apply(q.col(j), col);
      bq.col(j) = col;
    }
    const VectorXd qx = q.transpose() * x;
    const MatrixXd restricted = q.transpose() * bq - r.values(0) * qx * qx.transpose();
    const double residual = largest_abs_eigenvalue(0.5 * (restricted + restricted.transpose()));
    CHECK(residual >= sv(0) * (1 - 1e-9));
    naive.push_back(residual);
    VectorXd bx(m + d);
    b_op.apply(x, bx);
    negative_rayleigh += x.dot(bx) < 0;
    smallest_half = std::min({smallest_half, x.head(m).norm(), x.tail(d).norm()});
  }
  double mean = 0;
  for (double x : naive) mean += x / naive.size();
  WARN("naive dilation deflation: mean ||B - ||Bx|| xx^T|| = " << mean << " (sigma_1 = 10^4), x^T B x < 0 in " << negative_rayleigh
                                                                 << "/40, smallest half-norm " << smallest_half);
  CHECK(mean > 1.2 * sv(0));
}

TEST_CASE("PPI accounting regression: mu_GDP = eps/(4 sqrt(ln(1/delta))) for any T; 0.26 spent", "[ppi][accounting]") {
  const Spiked s = spiked(60, 100.0, 0, 91);
  const double expected_mu = 1.0 / (4.0 * std::sqrt(std::log(1e6)));
  for (long t : {10L, 37L, 100L}) {
    INFO("T = " << t);
    PrivacyAccountant acc(EpsDelta(1.0, 1e-6));
    SeededNoiseSource noise(92);
    const PpiResult r = private_power_iteration(s.a, options(Calibration::paper, t, 60.0), noise, acc);
    CHECK(r.gdp_mu == Approx(expected_mu).epsilon(1e-12));
    REQUIRE(acc.ledger().size() == 1);
    CHECK(acc.spent().epsilon == Approx(gaussian_dp_epsilon(expected_mu, 1e-6)).epsilon(1e-9));
    CHECK(acc.spent().epsilon == Approx(0.26).margin(0.005));
    CHECK(*acc.ledger()[0].rho == Approx(expected_mu * expected_mu / 2).epsilon(1e-12));
  }
  // tight: the whole budget, exactly.
  {
    PrivacyAccountant acc(EpsDelta(1.0, 1e-6));
    SeededNoiseSource noise(93);
    const PpiResult r = private_power_iteration(s.a, options(Calibration::tight, 37, 60.0), noise, acc);
    CHECK(r.gdp_mu == Approx(1.0 / privacy::analytic_gaussian_sigma(1.0, EpsDelta(1.0, 1e-6))).epsilon(1e-10));
    CHECK(acc.spent().epsilon == Approx(1.0).epsilon(1e-9));
  }
  // Rank k, paper (exact accounting): one GDP charge for the k runs at δ plus k Laplace(ε'): at k = 5,
  // 5ε' = 0.30 and the Gaussian part adds ≈ 0.04.
  {
    PrivacyAccountant acc(EpsDelta(1.0, 1e-6));
    SeededNoiseSource noise(94);
    PpiOptions o = options(Calibration::paper, 37, 60.0);
    o.k = 5;
    const PpiResult r = private_rank_k(s.a, o, noise, acc);
    CHECK(acc.ledger().size() == 6);
    const double gaussian_part = gaussian_dp_epsilon(r.gdp_mu, 1e-6);
    CHECK(r.gdp_mu == Approx(std::sqrt(5.0) * r.value_epsilon / (4.0 * std::sqrt(std::log(5e6)))).epsilon(1e-12));
    CHECK(acc.spent().epsilon == Approx(5 * r.value_epsilon + gaussian_part).epsilon(1e-9));
    CHECK(5 * r.value_epsilon == Approx(0.30).margin(0.005));
    WARN("paper rank-5 at (1, 1e-6): eps spent " << acc.spent().epsilon << " (Laplace " << 5 * r.value_epsilon << ", Gaussian " << gaussian_part << ")");
  }
  // Rank k, tight: (1 − value_share)ε to the Gaussian rounds, value_share·ε/k per σ̂.
  {
    PrivacyAccountant acc(EpsDelta(1.0, 1e-6));
    SeededNoiseSource noise(95);
    PpiOptions o = options(Calibration::tight, 37, 60.0);
    o.k = 4;
    const PpiResult r = private_rank_k(s.a, o, noise, acc);
    CHECK(r.value_epsilon == Approx(0.1 / 4).epsilon(1e-14));
    CHECK(privacy::analytic_gaussian_delta(r.gdp_mu, 1.0, 0.9) == Approx(1e-6).epsilon(1e-6));
    // Basic composition spends the budget exactly; the accountant's zCDP bound is a hair smaller.
    CHECK(acc.spent().basic_epsilon == Approx(1.0).epsilon(1e-9));
    CHECK(acc.spent().epsilon <= 1.0);
  }
  // Charged before A is read, all or nothing: a budget too small refuses, the ledger is unchanged
  // and the operator is never applied.
  {
    PrivacyAccountant acc(EpsDelta(0.5, 1e-6));
    acc.charge_pure("earlier", 0.1);
    Recorder rec{&s.a, {}};
    SeededNoiseSource noise(96);
    PpiOptions o = options(Calibration::tight, 37, 60.0);
    o.k = 3;
    CHECK_THROWS_AS(private_rank_k(rec.op(), o, noise, acc), BudgetExhausted);
    CHECK(acc.ledger().size() == 1);
    CHECK(rec.inputs.empty());
  }
}

TEST_CASE("private T (Remark 4.5): ||A||_1 + Laplace bounds sigma_1; its share is composed", "[ppi][accounting]") {
  const Spiked& s = incoherent_1000();
  const double sigma1 = largest_abs_eigenvalue(s.a);
  const double l1 = s.a.cwiseAbs().sum();
  PrivacyAccountant acc(EpsDelta(1.0, 1e-6));
  SeededNoiseSource noise(101);
  const IterationCount count = private_iteration_count(s.a, 0.05, EntryChange::single_entry, noise, acc);
  // Laplace(20): the release is within 20·ln(10⁶) = 276 of ‖A‖₁ except with probability 1e-6.
  CHECK(std::abs(count.l1_release - l1) <= 20.0 * std::log(1e6));
  CHECK(count.sigma1_upper >= sigma1);
  CHECK(count.iterations >= paper_iteration_count(sigma1));
  // ‖A‖₁ ≤ n‖A‖_F ≤ n√n σ₁ (full rank bulk): overshoot ≤ 4 ln(n√n) + the margin.
  CHECK(count.iterations <= paper_iteration_count(sigma1) + static_cast<long>(std::ceil(4 * std::log(1000 * std::sqrt(1000.0)))) + 1);
  WARN("private T: sigma_1 = " << sigma1 << " (4 ln sigma_1 = " << 4 * std::log(sigma1) << "), ||A||_1 = " << l1 << " -> T = " << count.iterations);
  CHECK(acc.spent().epsilon == Approx(0.05).epsilon(1e-12));
  // In a PPI call with iterations unset: ε₀ = iteration_share·ε first, the rest to the rounds.
  PrivacyAccountant acc2(EpsDelta(1.0, 1e-6));
  PpiOptions o = options(Calibration::tight, 1, 45.0);
  o.iterations.reset();
  const PpiResult r = private_power_iteration(s.a, o, noise, acc2);
  REQUIRE(r.iteration_count.has_value());
  CHECK(r.iterations == r.iteration_count->iterations);
  CHECK(acc2.ledger().size() == 2);
  CHECK(acc2.spent().epsilon == Approx(1.0).epsilon(1e-9));
  CHECK(privacy::analytic_gaussian_delta(r.gdp_mu, 1.0, 0.95) == Approx(1e-6).epsilon(1e-6));
}

// ---- Coherence measures ---------------------------------------------------------------------------

TEST_CASE("coherence: identity-like vs spiky, bounds 1 <= mu <= n, mu0 <= mu, Lemma 5.13", "[coherence]") {
  // Hadamard eigenbasis (n = 64, distinct eigenvalues, so the basis is unique up to sign): every
  // entry is ±1/8, μ = n·(1/64) = 1. Diagonal with distinct entries: eigenvectors e_i, μ = n.
  const Index n = 64;
  MatrixXd h = MatrixXd::Ones(1, 1);
  while (h.rows() < n) {
    MatrixXd next(2 * h.rows(), 2 * h.rows());
    next << h, h, h, -h;
    h = next;
  }
  h /= std::sqrt(static_cast<double>(n));
  const VectorXd distinct = VectorXd::LinSpaced(n, 1.0, static_cast<double>(n));
  const MatrixXd spread = h * distinct.asDiagonal() * h.transpose();
  CHECK(mu_coherence(spread) == Approx(1.0).epsilon(1e-9));
  CHECK(top_k_coherence(spread, 5) == Approx(1.0).epsilon(1e-9));
  CHECK(c_coherence(spread) >= 1.0);
  const MatrixXd spiky = distinct.asDiagonal();
  CHECK(mu_coherence(spiky) == Approx(static_cast<double>(n)).epsilon(1e-12));
  CHECK(top_k_coherence(spiky, 1) == Approx(static_cast<double>(n)).epsilon(1e-12));
  // The identity: any basis is an eigenbasis. The solver's (e_i) gives n; a random rotation ≈ 4 ln n.
  const MatrixXd identity = MatrixXd::Identity(n, n);
  const double mu_solver = mu_coherence(identity, EigenbasisChoice::solver);
  const double mu_best = mu_coherence(identity);
  INFO("identity: solver basis " << mu_solver << ", best of solver and random " << mu_best);
  CHECK(mu_solver == Approx(static_cast<double>(n)));
  CHECK(mu_best < 4 * std::log(static_cast<double>(n * n)));
  // Bounds on random inputs, symmetric and rectangular, low rank and full.
  SeededNoiseSource source(111);
  for (int trial = 0; trial < 6; ++trial) {
    const Index m = 30 + 7 * trial, d = trial % 2 ? 45 : m;
    const Index r = 1 + trial;
    MatrixXd left = orthonormal_columns(gaussian(m, r, source));
    if (trial >= 3) {  // coherent: the first column on 3 coordinates
      left.col(0).setZero();
      left.block(0, 0, 3, 1).setConstant(1.0 / std::sqrt(3.0));
      left = orthonormal_columns(left);
    }
    const MatrixXd right = d == m ? left : orthonormal_columns(gaussian(d, r, source));
    const VectorXd values = VectorXd::LinSpaced(r, 10.0, 1.0);
    const MatrixXd a = left * values.asDiagonal() * right.transpose();
    INFO("trial " << trial << ": " << m << "x" << d << " rank " << r);
    const double mu = mu_coherence(a), mu0 = mu0_coherence_of(a), c = c_coherence(a);
    CHECK(numerical_rank(a) == r);
    CHECK(mu >= 1.0 - 1e-12);
    CHECK(mu <= static_cast<double>(std::max(m, d)) + 1e-9);
    CHECK(mu0 >= 1.0 - 1e-12);
    CHECK(mu0 <= static_cast<double>(m) / static_cast<double>(r) + 1e-9);  // the tight m/r bound
    CHECK(mu0 <= mu + 1e-9);
    CHECK(c >= 1.0 - 1e-12);
    CHECK(c <= std::sqrt(static_cast<double>(m)) + 1e-12);
    CHECK(c <= std::sqrt(static_cast<double>(r) * mu0) + 1e-9);  // HR12 Lemma 5.13
    double previous = 0;
    for (Index k = 1; k <= r; ++k) {
      const double mu_k = top_k_coherence(a, k);
      CHECK(mu_k >= previous);
      CHECK(mu_k <= mu + 1e-9);
      previous = mu_k;
    }
    CHECK(mu_coherence(a) <= mu_coherence(a, EigenbasisChoice::solver) + 1e-12);
  }
  // μ0 of a given basis: (m/r) max row norm²; refuses a non-orthonormal one.
  CHECK(mu0_coherence(MatrixXd::Identity(10, 2)) == Approx(5.0));
  CHECK_THROWS_NAMING(mu0_coherence(2.0 * MatrixXd::Identity(10, 2)), InvalidParameter, Contains("orthonormal columns"));
  CHECK_THROWS_NAMING(c_coherence(MatrixXd::Zero(3, 3)), InvalidParameter, Contains("the matrix is zero"));
  CHECK_THROWS_NAMING(top_k_coherence(MatrixXd::Ones(3, 4), 4), InvalidParameter, Contains("k must be in [1, 3]"));
}

TEST_CASE("private doubling search over C (Remark 4.5): within 2x of the needed C, composed in the accountant",
          "[coherence][ppi][accounting]") {
  // Coherent s = 11 at n = 1000: μ_top ≈ n/11 = 91. Runs with C < μ_top fail once x_t aligns with u_1;
  // C = 128 succeeds (tight: noise per coordinate √(C/n)σ/σ₁ ≈ 0.3% of |u_1i| = 0.30, so the trace
  // stays ≈ μ_top). R = ⌈log₂ 1000⌉ + 1 = 11 planned runs.
  const Spiked& s = coherent_1000(11);
  const double mu_top = top_k_coherence(s.a, 1);
  const EpsDelta budget(1.0, 1e-6);
  PpiOptions o = options(Calibration::tight, 37, 0.0);
  {
    PrivacyAccountant acc(budget);
    SeededNoiseSource noise(121);
    const CoherenceSearchResult r = private_coherence_search(s.a, o, noise, acc);
    INFO("mu_top " << mu_top << ", found C = " << r.coherence_bound << " after " << r.runs << " runs");
    REQUIRE(r.found);
    CHECK(r.planned_runs == 11);
    CHECK(r.coherence_bound >= mu_top);
    CHECK(r.coherence_bound <= 2 * mu_top);
    CHECK(r.run.max_coherence() <= r.coherence_bound);
    REQUIRE(static_cast<int>(r.failed_bounds.size()) == r.runs - 1);
    for (std::size_t i = 0; i < r.failed_bounds.size(); ++i) CHECK(r.failed_bounds[i] == std::ldexp(1.0, static_cast<int>(i)));
    // tight: all R·T rounds are one GDP mechanism at the budget, charged once in full.
    CHECK(acc.ledger().size() == 1);
    CHECK(acc.spent().epsilon == Approx(1.0).epsilon(1e-9));
    CHECK(r.run.sigma == Approx(ppi_sigma(11 * 37, budget, Calibration::tight)).epsilon(1e-12));
    CHECK(r.run.noise_std == Approx(std::sqrt(r.coherence_bound / 1000.0) * r.run.sigma).epsilon(1e-12));
    const double sigma1 = largest_abs_eigenvalue(s.a);
    WARN("doubling search (tight), coherent s = 11: mu_top = " << mu_top << ", C = " << r.coherence_bound << " after "
         << r.runs << " runs, error " << sigma1 - (s.a * r.run.vectors.col(0)).norm());
  }
  // paper: each run is PPI(ε/R, δ/R), charged when it starts; the basic composition of the runs made.
  {
    PrivacyAccountant acc(budget);
    SeededNoiseSource noise(122);
    o.calibration = Calibration::paper;
    const CoherenceSearchResult r = private_coherence_search(s.a, o, noise, acc);
    REQUIRE(acc.ledger().size() == static_cast<std::size_t>(r.runs));
    const double mu_run = (1.0 / 11) / (4.0 * std::sqrt(std::log(11e6)));
    CHECK(r.run.gdp_mu == Approx(mu_run).epsilon(1e-12));
    const privacy::Spent spent = acc.spent();
    CHECK(spent.basic_epsilon == Approx(r.runs * gaussian_dp_epsilon(mu_run, 1e-6 / 11)).epsilon(1e-9));
    CHECK(spent.basic_delta == Approx(r.runs * 1e-6 / 11).epsilon(1e-12));
    CHECK(spent.epsilon <= 1.0);
    const double sigma1 = largest_abs_eigenvalue(s.a);
    WARN("doubling search (paper), coherent s = 11: C = " << r.coherence_bound << " after " << r.runs << " runs, eps spent "
         << spent.epsilon << ", error " << sigma1 - (s.a * r.run.vectors.col(0)).norm() << " (noise too large to converge)");
    // The whole search must fit before anything is read.
    PrivacyAccountant small(EpsDelta(1.0, 1e-6));
    small.charge_approx("earlier", EpsDelta(0.999, 0.0));
    CHECK_THROWS_AS(private_coherence_search(s.a, o, noise, small), BudgetExhausted);
    CHECK(small.ledger().size() == 1);
  }
  // Incoherent input: a small C suffices.
  {
    SeededNoiseSource noise(123);
    o.calibration = Calibration::tight;
    const CoherenceSearchResult r = private_coherence_search(incoherent_1000().a, o, noise, test_budget::unaccounted());
    REQUIRE(r.found);
    CHECK(r.coherence_bound <= 32);
  }
}

}  // namespace test_private_power_iteration
