// FplOnlinePca: follow-the-leader, Algorithm 2 (perturbed leader) and the private tree learner of
// Dwork, Talwar, Thakurta & Zhang, "Analyze Gauss" (STOC 2014), §4, scored with eval::RegretMeter.
//
// Protocol in every regret run (Algorithm 2 line 3): each block of rows is scored with
// the learner's basis BEFORE the learner sees it (meter.add_gains(learner.gains(rows))), then the
// meter observes the rows, then the learner (or its stream) ingests them.
//
// Statistical tests are seeded (FplOptions::seed, ContinualSumOptions::seed, std::mt19937_64 for
// data), so every figure below is reproducible; tolerances are derived from the spread over the R
// seeded runs (standard errors quoted in comments, measured on the release build) or from a bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>


#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/eval/regret.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "stat_helpers.hpp"
#include "unaccounted.hpp"

namespace test_fpl_online_pca {

using namespace dpstream;
using namespace dpstream::pca;
using Catch::Matchers::Contains;
using eval::RegretMeter;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Measured figures of the statistical tests: shown when a check fails (WARN to print them always).
#define FIGURE(msg) INFO(msg)

namespace {

// The anti-FTL cyclic adversary of a reference simulation (k = 2): a_1 = √(2/3)e_0, a_2 = √(1/3)e_1, then e_2,
// e_1, e_0 repeated. After every full cycle the prefix covariance is diag(c + 2/3, c + 1/3, c), and
// each next row points along the currently smallest of the three: follow-the-leader gains 0 on every
// row from the third on, so its regret is OPT − 2/3 − (gain of a_2) ∈ [OPT − 1, OPT − 2/3].
MatrixXd cyclic_adversary(Index m, Index d = 20) {
  MatrixXd a = MatrixXd::Zero(m, d);
  a(0, 0) = std::sqrt(2.0 / 3.0);
  if (m > 1) a(1, 1) = std::sqrt(1.0 / 3.0);
  const Index cycle[3] = {2, 1, 0};
  for (Index t = 2; t < m; ++t) a(t, cycle[(t - 2) % 3]) = 1.0;
  return a;
}

MatrixXd prefix_covariance(const MatrixXd& rows, Index t) {
  return rows.topRows(t).transpose() * rows.topRows(t);
}

// OPT = Σ of the k largest eigenvalues of AᵀA (Analyze Gauss §4), by Eigen directly.
double exact_opt(const MatrixXd& rows, Index k) {
  const linalg::SymmetricEigenSolver es(prefix_covariance(rows, rows.rows()), Eigen::EigenvaluesOnly);
  return es.eigenvalues().tail(k).sum();
}

MatrixXd random_orthogonal(Index d, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  MatrixXd g(d, d);
  for (Index i = 0; i < g.size(); ++i) g.data()[i] = normal(gen);
  return linalg::HouseholderQr(g).q(d);
}

FplOptions follow_the_leader(Index k, std::uint64_t refresh_every = 1) {
  FplOptions o;
  o.k = k;
  o.mode = FplMode::follow_the_leader;
  o.refresh_every = refresh_every;
  return o;
}

// Algorithm 2 with fresh paper-shaped noise every row, calibrated by the classical formula
// Δ = √(2 ln(1.25/δ))/ε (Analyze Gauss §2 and Algorithm 1).
FplOptions perturbed_leader(Index k, double eps, double delta, std::uint64_t seed) {
  FplOptions o;
  o.k = k;
  o.mode = FplMode::perturbed_leader;
  o.refresh_every = 1;
  o.perturbation.privacy.target = privacy::EpsDelta(eps, delta);
  o.perturbation.privacy.calibration = privacy::Calibration::paper;
  o.perturbation.privacy.relation = privacy::Neighbours::add_remove_row;
  o.perturbation.privacy.row_norm_bound = 1.0;
  o.perturbation.shape = privacy::SymmetricNoiseShape::paper_symmetric;
  o.perturbation.privacy.noise.seed = seed;
  return o;
}

// A refresh solved to a residual of 1e-10·‖Ĉ‖₂, no variance rule: the basis itself is exact.
RefreshOptions strict_refresh() {
  RefreshOptions r;
  r.variance_tolerance = 0;
  r.tolerance = 1e-10;
  return r;
}

FplOptions private_tree(Index k, std::uint64_t refresh_every = 1) {
  FplOptions o;
  o.k = k;
  o.mode = FplMode::private_tree;
  o.refresh_every = refresh_every;
  return o;
}

struct RunResult {
  double opt = 0, gain = 0, regret = 0;
};

// A follow/perturbed learner on `rows`, one row at a time (refresh_every = 1 moves the basis after
// every row), scored by a RegretMeter.
RunResult run_learner(const MatrixXd& rows, const FplOptions& options) {
  FplOnlinePca learner(rows.cols(), options);
  RegretMeter meter(rows.cols(), options.k, {"learner"});
  for (Index t = 0; t < rows.rows(); ++t) {
    const auto row = rows.middleRows(t, 1);
    meter.add_gains(0, learner.gains(row));  // V̂_t: the basis before row t
    meter.observe(row);
    learner.update_block(row);
  }
  meter.finish();
  return {meter.opt(), meter.gain(0), meter.regret(0)};
}

// Follow-the-leader by a full eigendecomposition after every row: the reference the library's
// follow_the_leader mode must reproduce (V̂_1 = the first k axes, as in the library).
double reference_ftl_regret(const MatrixXd& rows, Index k) {
  const Index d = rows.cols();
  MatrixXd basis = MatrixXd::Identity(d, k), c = MatrixXd::Zero(d, d);
  double gain = 0;
  for (Index t = 0; t < rows.rows(); ++t) {
    const VectorXd a = rows.row(t).transpose();
    gain += (basis.transpose() * a).squaredNorm();
    c += a * a.transpose();
    basis = top_k_eigen(c, k).vectors;
  }
  return exact_opt(rows, k) - gain;
}

// Spiked rows for the private-tree tests: a = s₁z₁u₁ + s₂z₂u₂ + σg (z, g standard normal, u fixed
// orthonormal directions), then clipped to ‖a‖ ≤ 1 by RowGuard, as a private pipeline would.
MatrixXd spiked_rows(Index m, Index d, std::uint64_t seed, double s1 = 0.8, double s2 = 0.6, double sigma = 0.15) {
  const MatrixXd u = random_orthogonal(d, 4242).leftCols(2);
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  stream::RowGuard guard({d, 1.0, stream::OverNormPolicy::clip});
  MatrixXd rows(m, d);
  VectorXd a(d);
  for (Index i = 0; i < m; ++i) {
    const double z1 = normal(gen), z2 = normal(gen);
    for (Index j = 0; j < d; ++j) a(j) = sigma * normal(gen);
    a += s1 * z1 * u.col(0) + s2 * z2 * u.col(1);
    guard.admit(a);
    rows.row(i) = a.transpose();
  }
  return rows;
}

stream::ContinualSumOptions tree_options(std::uint64_t horizon, std::uint64_t block, double eps, std::uint64_t seed) {
  stream::ContinualSumOptions o;
  o.horizon = horizon;
  o.block_rows = block;
  o.privacy.target = privacy::EpsDelta(eps, 1e-6);
  o.privacy.noise.seed = seed;
  return o;
}

// The private learner attached to a fixed-horizon stream; blocks of B rows are aligned with the
// releases, so a whole block is scored with the basis of the latest release before it.
double private_tree_regret(const MatrixXd& rows, Index k, double eps, std::uint64_t block, std::uint64_t seed) {
  const Index d = rows.cols();
  stream::ContinualCovariance stream(d, tree_options(static_cast<std::uint64_t>(rows.rows()) / block, block, eps, seed), test_budget::unaccounted());
  FplOnlinePca learner(d, private_tree(k));
  learner.attach(stream);
  RegretMeter meter(d, k, {"private_fpl"});
  for (Index i = 0; i < rows.rows(); i += static_cast<Index>(block)) {
    const auto b = rows.middleRows(i, static_cast<Index>(block));
    meter.add_gains(0, learner.gains(b));
    meter.observe(b);
    stream.update_block(b);
  }
  REQUIRE(learner.refreshes() == stream.steps());
  return meter.regret(0);
}

double mean_of(const std::vector<double>& xs) { return dpstream::testing::moments(xs).mean; }
double se_of(const std::vector<double>& xs) {
  return std::sqrt(dpstream::testing::moments(xs).variance / static_cast<double>(xs.size()));
}

}  // namespace

// ---- 1. The cyclic adversary ----------------------------------------------------------------------

TEST_CASE("follow_the_leader has regret ~ OPT (linear in m) on the cyclic adversary",
          "[fpl][regret]") {
  // Regression (fixed in lib/pca/subspace.cpp): the warm refresh used to stop on its start block when
  // the previous top k were still exact eigenvectors, so follow_the_leader stuck to span{e_0, ·} on
  // this axis-aligned stream, with regret OPT/2 + 1/2 (341.67 of 682.33 at m = 1024) instead of the
  // 681.7 of a reference simulation. The reference FTL (a full eigendecomposition after every row)
  // reproduces that figure.
  const Index k = 2;
  for (Index m : {1024, 4096}) {
    const MatrixXd a = cyclic_adversary(m);
    const RunResult ftl = run_learner(a, follow_the_leader(k));
    const double reference = reference_ftl_regret(a, k);
    INFO("m = " << m << ": OPT " << ftl.opt << ", library FTL regret " << ftl.regret << ", reference FTL regret "
                << reference);
    // Reference: regret ∈ [OPT − 1, OPT − 2/3] exactly (see cyclic_adversary), up to rounding.
    CHECK(reference >= ftl.opt - 1.0 - 1e-9);
    CHECK(reference <= ftl.opt - 2.0 / 3.0 + 1e-9);
    // The library: regret/OPT ≥ 0.95 (it should be ≥ 1 − 1/OPT ≥ 0.998).
    CHECK(ftl.regret / ftl.opt >= 0.95);
  }
}

TEST_CASE("follow_the_leader's basis is the exact top k of the prefix after every row (Algorithm 2 line 6, algebraic top k)",
          "[fpl][regression]") {
  // Regression test for a defect of the warm refresh (fixed in lib/pca/subspace.cpp: a fresh random
  // start column, and at least one Krylov expansion before any answer is accepted). The refresh used
  // to stop as soon as the k wanted Ritz pairs had small residuals; when the previous top-k
  // eigenvectors were still exact eigenvectors of the new Ĉ (every row of the cyclic adversary is
  // orthogonal to them), their residuals were 0 on the start block, so the OLD subspace came back
  // although a new, larger eigenvalue had appeared outside it.
  //   Axis-aligned stream, default options: after a_1, a_2 (Ĉ = diag(2/3, 1/3, 0, …)) the basis was
  //   e_0 plus a null vector of diag(2/3, 0, …), and never moved again.
  //   Rotated copy Q·a_t, refresh tolerance 1e-10: after e_2 arrived the basis stayed span{q_0, q_1}
  //   (Ritz values 2/3, 1/3; exact 1, 2/3).
  const Index k = 2, d = 20, m = 12;
  SECTION("axis-aligned cyclic adversary, default refresh options") {
    const MatrixXd a = cyclic_adversary(m, d);
    FplOnlinePca learner(d, follow_the_leader(k));
    for (Index t = 0; t < m; ++t) {
      learner.update(a.row(t).transpose());
      if (t < 1) continue;  // after one row the second direction is a degenerate null vector
      const TopEigen exact = top_k_eigen(prefix_covariance(a, t + 1), k);
      INFO("after row " << t + 1 << ": leader values " << learner.leader_values().transpose() << ", exact "
                        << exact.values.transpose());
      // Default options certify the captured variance within 1e-3 (relative) of the top k, the
      // quantity the gain depends on (fpl_refresh_defaults); the basis itself is only as exact as
      // the single-precision products allow, so it is checked at tolerance 1e-10 below.
      const MatrixXd c = prefix_covariance(a, t + 1);
      CHECK(exact.values.sum() - captured_variance(c, learner.basis()) <= 1e-3 * exact.values.sum());
    }
  }
  SECTION("rotated cyclic adversary, refresh tolerance 1e-10") {
    const MatrixXd a = cyclic_adversary(m, d) * random_orthogonal(d, 5).transpose();
    FplOptions options = follow_the_leader(k);
    options.refresh = strict_refresh();
    FplOnlinePca learner(d, options);
    for (Index t = 0; t < m; ++t) {
      learner.update(a.row(t).transpose());
      if (t < 1) continue;
      const TopEigen exact = top_k_eigen(prefix_covariance(a, t + 1), k);
      INFO("after row " << t + 1 << ": leader values " << learner.leader_values().transpose() << ", exact "
                        << exact.values.transpose());
      CHECK(projector_distance(learner.basis(), exact.vectors) <= 1e-8);
    }
  }
}

TEST_CASE("perturbed_leader (Algorithm 2, tuned eps*) has sublinear regret on the cyclic adversary",
          "[fpl][regret][statistical][statistical-regression]") {
  // ε* = √(k√n ln m / OPT), δ = 1/m², fresh E_t every row (refresh_every = 1), R = 6 seeds per m.
  // Measured (release build, seeds 1000..1005):
  //   m = 1024: OPT 682.33, ε* 0.3014, regret mean 191.6 (se 2.7), regret/OPT 0.281;
  //   m = 4096: OPT 2730.33, ε* 0.1651, regret mean 414.8 (se 9.2), regret/OPT 0.152;
  //   Regret(4096)/Regret(1024) = 2.164 (se 0.057).
  // Reference simulation (6 runs): 191 and 438, ratio 2.29. 16384 rows (there: 883, ratio 2.02) are left out
  // for time: 8 runs of 16384 rows take ~8–11 s here (ε* = 0.0891 gave mean 877.5, sd 35, ratio
  // 2.04 over 4096 in a one-off measurement with 8 seeds).
  const Index k = 2, d = 20;
  const int runs = 6;
  std::vector<double> mean_regret, se_regret, opts;
  for (Index m : {1024, 4096}) {
    const MatrixXd a = cyclic_adversary(m, d);
    const double opt = exact_opt(a, k);
    const double eps = std::sqrt(k * std::sqrt(static_cast<double>(d)) * std::log(static_cast<double>(m)) / opt);
    REQUIRE(eps < 1.0);  // the paper calibration's (and Theorem 9's) domain
    std::vector<double> regrets;
    for (int r = 0; r < runs; ++r) {
      const RunResult run = run_learner(a, perturbed_leader(k, eps, 1.0 / (static_cast<double>(m) * m), 1000 + r));
      CHECK(run.opt == Approx(opt).epsilon(1e-12));
      regrets.push_back(run.regret);
    }
    mean_regret.push_back(mean_of(regrets));
    se_regret.push_back(se_of(regrets));
    opts.push_back(opt);
    FIGURE("m = " << m << ": eps* " << eps << ", mean regret " << mean_regret.back() << " (se " << se_regret.back()
                << "), regret/OPT " << mean_regret.back() / opt);
    // Far below follow-the-leader's ≈ OPT (the exact reference FTL; the library's FTL is broken on
    // this stream, see above): at most half of it, with 5 standard errors to spare.
    const double ftl = reference_ftl_regret(a, k);
    CHECK(mean_regret.back() + 5 * se_regret.back() <= 0.5 * ftl);
  }
  // Sublinear: Regret(4m)/Regret(m) ≈ 2·√(ln 4m / ln m) = 2.19 for √(OPT log m) scaling (reference
  // simulation 2.29 for 1024 → 4096); linear regret would give 4. Standard error of the ratio by the delta
  // method: ratio·√((se₁/R₁)² + (se₂/R₂)²) = 2.164·√(0.0142² + 0.0221²) = 0.057 (measured). Band:
  // the reference simulation's 2–2.3, widened by 4 standard errors ([1.77, 2.53]); linear is 4 − 10 se away.
  const double ratio = mean_regret[1] / mean_regret[0];
  const double se_ratio = ratio * std::hypot(se_regret[0] / mean_regret[0], se_regret[1] / mean_regret[1]);
  FIGURE("mean regret " << mean_regret[0] << " (se " << se_regret[0] << ") and " << mean_regret[1] << " (se "
                         << se_regret[1] << "); Regret(4096)/Regret(1024) = " << ratio << " (se " << se_ratio << ")");
  CHECK(ratio >= 2.0 - 4 * se_ratio);
  CHECK(ratio <= 2.3 + 4 * se_ratio);
  CHECK(ratio <= 4.0 - 10 * se_ratio);  // far from linear
  // regret/OPT falls as m grows (measured 0.281 → 0.152), with the standard errors of both means.
  const double f1 = mean_regret[0] / opts[0], f2 = mean_regret[1] / opts[1];
  CHECK(f2 + 4 * se_regret[1] / opts[1] < f1 - 4 * se_regret[0] / opts[0]);
}

TEST_CASE("regret bookkeeping: regret = OPT − Σ gains, each gain with the basis before its row (Analyze Gauss §4)",
          "[fpl][regret]") {
  // One seeded perturbed run on the cyclic adversary, recomputed by hand: gains from learner.basis()
  // before each update, OPT from Eigen's SelfAdjointEigenSolver. Sums of ≤ 1024 terms in [0, 1] in a
  // different order agree to ~1024·2⁻⁵³·OPT; 1e-10 relative leaves a wide margin.
  const Index k = 2, d = 20, m = 1024;
  const MatrixXd a = cyclic_adversary(m, d);
  FplOnlinePca learner(d, perturbed_leader(k, 0.3, 1.0 / (1024.0 * 1024.0), 77));
  RegretMeter meter(d, k, {"fpl"});
  double before = 0;
  for (Index t = 0; t < m; ++t) {
    const VectorXd row = a.row(t).transpose();
    const double g = (learner.basis().transpose() * row).squaredNorm();
    CHECK(learner.gain(row) == Approx(g).epsilon(1e-12).margin(1e-15));
    before += g;
    meter.score(0, a.middleRows(t, 1), learner.basis());
    meter.observe(a.middleRows(t, 1));
    learner.update(row);
  }
  const double opt = exact_opt(a, k);
  CHECK(meter.opt() == Approx(opt).epsilon(1e-10));
  CHECK(meter.gain(0) == Approx(before).epsilon(1e-10));
  CHECK(meter.regret(0) == Approx(opt - before).epsilon(1e-10));
  CHECK(meter.regret_over_opt(0) == Approx((opt - before) / opt).epsilon(1e-10));
}

// ---- 2. Theorem 9 (the bound its omitted proof gives, reconstructed) -------------------------------

TEST_CASE("Theorem 9: mean regret <= (1 - e^-eps) OPT + E S_k(E) + m delta + 1 on an oblivious i.i.d. stream",
          "[fpl][regret][statistical][statistical-regression]") {
  // Stream: ±e_j, j = 0 or 1 with probability 0.15 each, otherwise uniform on the other 18 axes
  // (a reference simulation's stream), n = 20, k = 2, m = 4096, δ = 1/m², paper calibration.
  // ε ∈ {0.5, 0.99}: the reference simulation's ε = 1.0 is outside both Theorem 9's domain (ε < 1) and the paper
  // calibration's (refused for ε ≥ 1, checked below), so 0.99 stands in for it.
  // E S_k(E) by Monte Carlo over 400 draws of E from the same mechanism.
  // Measured (release build, R = 4 runs, seeds 500..503; 400 noise draws, seed 31337):
  //   ε = 0.5:  σ 11.61, E S_k 336.9 (se 0.96), regret mean 159.8 (se 1.5), mean bound 818.6;
  //   ε = 0.99: σ 5.865, E S_k 170.1 (se 0.48), regret mean 83.9 (se 1.3), mean bound 938.9.
  // Reference simulation: 163 and 85 (ε = 1.0, σ 5.81) against bounds ≈ 827 and ≈ 958. The bound holds with a
  // slack of ~100 standard errors, as expected of a worst-case bound on a benign stream.
  // One-sided check: mean(bound − regret) ≥ −z·√(se_D² + se_S²), z = 5, where se_D is the standard
  // error of the per-run difference and se_S that of the Monte Carlo E S_k.
  const Index k = 2, d = 20, m = 4096;
  const double delta = 1.0 / (static_cast<double>(m) * m);
  const int runs = 4;
  {
    privacy::SymmetricGaussianMechanism::Options o = perturbed_leader(k, 0.5, delta, 0).perturbation;
    o.privacy.target = privacy::EpsDelta(1.0, delta);
    CHECK_THROWS_NAMING(privacy::SymmetricGaussianMechanism(o), InvalidParameter, Contains("epsilon must be < 1"));
  }
  for (double eps : {0.5, 0.99}) {
    const FplOptions base = perturbed_leader(k, eps, delta, 0);
    // E S_k(E) = E[Σ top-k − Σ bottom-k eigenvalues of E].
    const privacy::SymmetricGaussianMechanism mechanism(base.perturbation);
    privacy::SeededNoiseSource source(31337);
    std::vector<double> s_k;
    for (int i = 0; i < 400; ++i) {
      const linalg::SymmetricEigenSolver es(mechanism.sample_noise(d, source), Eigen::EigenvaluesOnly);
      s_k.push_back(es.eigenvalues().tail(k).sum() - es.eigenvalues().head(k).sum());
    }
    const double es_k = mean_of(s_k), se_s = se_of(s_k);
    std::vector<double> regrets, differences;
    std::mt19937_64 gen(2024);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int r = 0; r < runs; ++r) {
      MatrixXd a = MatrixXd::Zero(m, d);
      for (Index t = 0; t < m; ++t) {
        const double u = unit(gen);
        const Index j = u < 0.15 ? 0 : u < 0.30 ? 1 : 2 + std::min<Index>(17, static_cast<Index>((u - 0.30) / 0.70 * 18));
        a(t, j) = unit(gen) < 0.5 ? -1.0 : 1.0;
      }
      FplOptions options = base;
      options.perturbation.privacy.noise.seed = 500 + static_cast<std::uint64_t>(r);
      const RunResult run = run_learner(a, options);
      const double bound = (1.0 - std::exp(-eps)) * run.opt + es_k + m * delta + 1.0;
      regrets.push_back(run.regret);
      differences.push_back(bound - run.regret);
    }
    const double margin = 5.0 * std::hypot(se_of(differences), se_s);
    FIGURE("eps = " << eps << ": sigma " << mechanism.sigma() << ", E S_k " << es_k << " (se " << se_s
                  << "), mean regret " << mean_of(regrets) << " (se " << se_of(regrets) << "), mean bound "
                  << mean_of(regrets) + mean_of(differences));
    CHECK(mean_of(differences) >= -margin);
  }
}

// ---- 3. The private tree learner --------------------------------------------------------------------

TEST_CASE("private_tree: regret falls as eps grows on an i.i.d. spiked stream",
          "[fpl][private][statistical]") {
  // d = 24, k = 2, m = 4096 rows clipped to ‖a‖ ≤ 1 by RowGuard, blocks B = 16 (T = 256 releases,
  // plain tree, tight calibration, δ = 1e-6). The same R = 6 data streams and noise seeds for every
  // ε (paired design), so the check is on the per-seed differences.
  // Measured (release build, data seeds 900..905, noise seeds 70..75), mean regret (se):
  //   ε = 0.25: 1162 (6.6); 1: 360 (11.1); 4: 98.5 (2.1); 16: 31.7 (0.60);
  //   paired differences between neighbours: 802 (se 11.1), 262 (se 9.7), 66.8 (se 2.05).
  // Check: every neighbouring difference ≥ 4 of its standard errors (it is ≥ 27 of them).
  const Index k = 2, d = 24, m = 4096;
  const std::uint64_t block = 16;
  const std::vector<double> epsilons{0.25, 1.0, 4.0, 16.0};
  const int runs = 6;
  std::vector<std::vector<double>> regrets(epsilons.size());
  for (int r = 0; r < runs; ++r) {
    const MatrixXd a = spiked_rows(m, d, 900 + static_cast<std::uint64_t>(r));
    for (std::size_t e = 0; e < epsilons.size(); ++e)
      regrets[e].push_back(private_tree_regret(a, k, epsilons[e], block, 70 + static_cast<std::uint64_t>(r)));
  }
  for (std::size_t e = 0; e + 1 < epsilons.size(); ++e) {
    std::vector<double> diff;
    for (int r = 0; r < runs; ++r) diff.push_back(regrets[e][r] - regrets[e + 1][r]);
    FIGURE("eps " << epsilons[e] << ": mean regret " << mean_of(regrets[e]) << " (se " << se_of(regrets[e]) << "); eps "
                << epsilons[e + 1] << ": " << mean_of(regrets[e + 1]) << " (se " << se_of(regrets[e + 1])
                << "); paired difference " << mean_of(diff) << " (se " << se_of(diff) << ")");
    CHECK(mean_of(diff) >= 4 * se_of(diff));
  }
}

TEST_CASE("private_tree: V̂ is the first k axes before any release, refreshes once per refresh_every-th release, and changes only then (Algorithm 2 line 1)",
          "[fpl][private]") {
  const Index k = 3, d = 12;
  const std::uint64_t block = 5, horizon = 40;
  const MatrixXd a = spiked_rows(static_cast<Index>(block * horizon), d, 11);
  stream::ContinualCovariance stream(d, tree_options(horizon, block, 1.0, 8), test_budget::unaccounted());
  FplOnlinePca every(d, private_tree(k, 1)), third(d, private_tree(k, 3));
  every.attach(stream);
  third.attach(stream);
  CHECK(every.is_private());
  CHECK(every.basis() == MatrixXd::Identity(d, k));  // bitwise: Algorithm 2 line 1
  CHECK(third.basis() == MatrixXd::Identity(d, k));
  CHECK(every.leader_values().size() == 0);
  MatrixXd last_every = every.basis(), last_third = third.basis();
  std::uint64_t last_step = 0;
  const Index fed = a.rows() - 2;  // the last block is closed early by flush()
  for (Index t = 0; t <= fed; ++t) {
    if (t < fed) stream.update(a.row(t).transpose());
    else stream.flush();
    const std::uint64_t step = stream.steps();
    CHECK(every.refreshes() == step);
    CHECK(third.refreshes() == step / 3);
    CHECK(every.rows() == 0);  // rows go to the stream, never to the learner
    if (step == last_step) {
      // No release: neither learner moved (bitwise).
      CHECK(every.basis() == last_every);
      CHECK(third.basis() == last_third);
    } else {
      REQUIRE(step == last_step + 1);
      CHECK(every.basis() != last_every);  // a fresh noisy release moves the basis
      if (step % 3 != 0) CHECK(third.basis() == last_third);
      else CHECK(third.basis() != last_third);
    }
    if (step == 0) CHECK(every.basis() == MatrixXd::Identity(d, k));
    last_step = step;
    last_every = every.basis();
    last_third = third.basis();
  }
  CHECK(stream.steps() == horizon);
  CHECK(every.refreshes() == horizon);
  CHECK(third.refreshes() == horizon / 3);
  CHECK(every.refresh_stats().refreshes == horizon);
}

// ---- 4. The warm refresh inside the learner ---------------------------------------------------------

TEST_CASE("private_tree: after every release the captured variance of V̂ is within the certified tolerance of the top-k sum of the release (fpl_refresh_defaults)",
          "[fpl][private]") {
  // FPL's refresh stops when the captured variance tr(V̂ᵀĈV̂) is certified within
  // variance_tolerance·|tr| of Ĉ's best k-subspace (variance rule; 1e-2 in private_tree mode), or
  // when every Ritz residual is ≤ tolerance·‖Ĉ‖₂ (1e-4), which bounds the loss by
  // k·1e-4·‖Ĉ‖₂ ≤ 1e-3·OPT whenever OPT/k ≥ ‖Ĉ‖₂/10 (subspace.hpp, RefreshOptions). The second
  // condition is checked at every release too, so max(variance_tolerance, 1e-3)·|OPT| bounds both.
  // attach() also passes the release's noise norm, so the refresh may stop at the noise floor
  // instead: a shortfall ≤ kNoiseFloorShare·k·noise_spectral_norm(d, v) (fpl_online_pca.hpp).
  // Ky Fan: tr(VᵀĈV) ≤ OPT for every orthonormal V, up to rounding (1e-9 relative).
  const RefreshOptions defaults = fpl_refresh_defaults(FplMode::private_tree);
  const double certified = std::max(defaults.variance_tolerance, 10 * defaults.tolerance);
  REQUIRE(certified == 1e-2);
  const Index k = 3, d = 40;
  const std::uint64_t block = 8, horizon = 256;
  for (double eps : {0.5, 4.0}) {
    const MatrixXd a = spiked_rows(static_cast<Index>(block * horizon), d, 13);
    stream::ContinualCovariance stream(d, tree_options(horizon, block, eps, 21), test_budget::unaccounted());
    FplOnlinePca learner(d, private_tree(k));
    learner.attach(stream);
    std::uint64_t checked = 0, floor_bound = 0;
    double worst = 0, drift = 0;
    stream.subscribe([&](const stream::ContinualCovariance::Release& release) {
      const MatrixXd& c = release.noisy_prefix;
      const double opt = sum_top_k_eigenvalues(c, k);
      const double captured = captured_variance(c, learner.basis());
      const linalg::SymmetricEigenSolver es(c, Eigen::EigenvaluesOnly);
      const double norm = es.eigenvalues().cwiseAbs().maxCoeff();
      CHECK(opt / k >= norm / 10);  // the residual rule's precondition
      CHECK(captured <= opt + 1e-9 * std::abs(opt));
      const double floor = kNoiseFloorShare * k * noise_spectral_norm(d, release.off_diagonal_noise_variance);
      CHECK(opt - captured <= std::max(certified * std::abs(opt), floor));
      if (floor > certified * std::abs(opt)) ++floor_bound;
      // leader_values(): the refresh runs its block products in single precision and confirms in
      // double, returning the Rayleigh–Ritz values of V̂ on Ĉ itself (subspace.cpp): their sum is
      // tr(V̂ᵀĈV̂) and none exceeds Ĉ's eigenvalues (Cauchy interlacing), up to rounding.
      const double ritz = learner.leader_values().sum();
      CHECK(ritz <= opt + 1e-9 * std::abs(opt));
      CHECK(std::abs(ritz - captured) <= 1e-9 * norm);
      drift = std::max(drift, std::abs(ritz - captured) / norm);
      worst = std::max(worst, (opt - captured) / std::abs(opt));
      ++checked;
    });
    stream.update_block(a);
    FIGURE("eps " << eps << ": worst relative loss " << worst << ", worst Ritz drift/||C|| " << drift << ", full solves "
                << learner.refresh_stats().full_solves << " of " << learner.refreshes() << ", noise floor the larger bound at "
                << floor_bound << " releases");
    CHECK(checked == horizon);
    CHECK(learner.refreshes() == horizon);
    // The warm path is what is being checked: the full solver answered only the cold start and any
    // fallbacks, a small minority of the refreshes.
    CHECK(learner.refresh_stats().full_solves <= horizon / 10);
  }
}

// ---- 5. Errors --------------------------------------------------------------------------------------

TEST_CASE("FplOnlinePca: each error names the problem", "[fpl][errors]") {
  const Index d = 20;
  SECTION("k out of [1, d], refresh_every = 0, dimension < 1") {
    FplOptions o = follow_the_leader(0);
    CHECK_THROWS_NAMING(FplOnlinePca(d, o), InvalidParameter, Contains("k must be in [1, 20], got 0"));
    o.k = 21;
    CHECK_THROWS_NAMING(FplOnlinePca(d, o), InvalidParameter, Contains("k must be in [1, 20], got 21"));
    o = follow_the_leader(2, 0);
    CHECK_THROWS_NAMING(FplOnlinePca(d, o), InvalidParameter, Contains("refresh_every must be >= 1"));
    CHECK_THROWS_NAMING(FplOnlinePca(0, follow_the_leader(1)), InvalidParameter, Contains("dimension must be >= 1"));
  }
  SECTION("perturbation outside the paper calibration's domain") {
    CHECK_THROWS_NAMING(FplOnlinePca(d, perturbed_leader(2, 1.0, 1e-6, 1)), InvalidParameter,
                        Contains("epsilon must be < 1 for the paper"));
    CHECK_NOTHROW(FplOnlinePca(d, perturbed_leader(2, 0.99, 1e-6, 1)));
  }
  SECTION("update() in private_tree mode: rows go to the stream") {
    FplOnlinePca learner(d, private_tree(2));
    CHECK_THROWS_NAMING(learner.update(VectorXd::Zero(d)), InvalidParameter, Contains("private_tree"));
    CHECK_THROWS_NAMING(learner.update_block(MatrixXd::Zero(3, d)), InvalidParameter, Contains("private_tree"));
    CHECK(learner.refreshes() == 0);
  }
  SECTION("attach() outside private_tree mode, or to a stream of another dimension") {
    stream::ContinualCovariance stream(d, tree_options(8, 1, 1.0, 1), test_budget::unaccounted());
    FplOnlinePca ftl(d, follow_the_leader(2));
    CHECK_THROWS_NAMING(ftl.attach(stream), InvalidParameter, Contains("follow_the_leader"));
    FplOnlinePca fpl(d, perturbed_leader(2, 0.5, 1e-6, 1));
    CHECK_THROWS_NAMING(fpl.attach(stream), InvalidParameter, Contains("perturbed_leader"));
    stream::ContinualCovariance other(7, tree_options(8, 1, 1.0, 1), test_budget::unaccounted());
    FplOnlinePca learner(d, private_tree(2));
    CHECK_THROWS_NAMING(learner.attach(other), InvalidParameter,
                         Contains("stream's dimension is 7") && Contains("learner's is 20"));
    // Nothing was subscribed: releases of `other` do not reach the learner.
    other.update(VectorXd::Zero(7));
    CHECK(learner.refreshes() == 0);
  }
  SECTION("a row of the wrong length") {
    FplOnlinePca learner(d, follow_the_leader(2));
    CHECK_THROWS_NAMING(learner.update(VectorXd::Zero(19)), InvalidParameter,
                         Contains("row has 19 entries") && Contains("dimension is 20"));
    CHECK_THROWS_NAMING(learner.update_block(MatrixXd::Zero(2, 21)), InvalidParameter, Contains("row has 21 entries"));
    CHECK_THROWS_NAMING(learner.gain(VectorXd::Zero(19)), InvalidParameter, Contains("gain"));
    CHECK_THROWS_NAMING(learner.gains(MatrixXd::Zero(2, 19)), InvalidParameter, Contains("gains"));
    CHECK(learner.rows() == 0);
  }
  SECTION("a NaN or infinite row: InvalidRow naming the row and column; nothing ingested") {
    FplOnlinePca learner(d, follow_the_leader(2, 4));
    learner.update_block(MatrixXd::Identity(5, d));  // 5 rows, one refresh
    REQUIRE(learner.rows() == 5);
    REQUIRE(learner.refreshes() == 1);
    const MatrixXd basis = learner.basis();
    VectorXd row = VectorXd::Zero(d);
    row(4) = std::nan("");
    try {
      learner.update(row);
      FAIL("no InvalidRow for a NaN entry");
    } catch (const InvalidRow& e) {
      CHECK(e.row_index() == 5);
      CHECK_THAT(e.what(), Contains("row 5") && Contains("column 4") && Contains("not finite"));
    }
    MatrixXd rows = MatrixXd::Zero(6, d);
    rows(3, 7) = std::numeric_limits<double>::infinity();
    try {
      learner.update_block(rows);  // the bad row is the 4th of the block: stream row 8
      FAIL("no InvalidRow for an infinite entry");
    } catch (const InvalidRow& e) {
      CHECK(e.row_index() == 8);
      CHECK_THAT(e.what(), Contains("column 7"));
    }
    CHECK(learner.rows() == 5);  // all rows are checked before any is ingested
    CHECK(learner.refreshes() == 1);
    CHECK(learner.basis() == basis);
  }
}

// ---- 7. Refresh boundaries with blocks ----------------------------------------------------------------

TEST_CASE("follow_the_leader with refresh_every = B: floor(rows/B) refreshes, each on exactly the rows before its boundary",
          "[fpl]") {
  // d = 16, k = 2 (so the warm block-Krylov path is used: d ≥ 2(k + p)), B = 7, blocks of sizes
  // 3, 11, 1, 16, 7, 2, 20, 5, ... (none, one or two boundaries inside a block, some ending exactly
  // on one). Refresh tolerance 1e-10 (residuals ≤ 1e-10·‖C‖₂), no variance rule, so the comparison
  // with the full eigendecomposition of the exact prefix has a bound:
  //   Ritz values: |Σθ − Σλ| ≤ Σ‖rᵢ‖ ≤ k·1e-10·λ₁ (Ky Fan, subspace.hpp), plus rounding;
  //   subspace: ‖sin Θ‖ ≤ √k·1e-10·λ₁/(λ_k − λ_{k+1}) (Davis–Kahan sin Θ), plus rounding.
  // Tolerances below are 10× those. (Tolerance < 1e-5 keeps the block products in double precision,
  // RefreshOptions::single_precision.) One more row changes Σλ by ≈ ‖P a‖² (~0.5 here): an
  // off-by-one refresh is ~10⁸ tolerances away.
  const Index k = 2, d = 16;
  const std::uint64_t refresh_every = 7;
  const MatrixXd a = spiked_rows(400, d, 17, 0.9, 0.7, 0.25);
  FplOptions options = follow_the_leader(k, refresh_every);
  options.refresh = strict_refresh();
  FplOnlinePca learner(d, options), single(d, options);
  const std::vector<Index> sizes{3, 11, 1, 16, 7, 2, 20, 5, 13, 14};
  Index done = 0;
  std::size_t i = 0;
  while (done < a.rows()) {
    const Index take = std::min<Index>(sizes[i++ % sizes.size()], a.rows() - done);
    learner.update_block(a.middleRows(done, take));
    for (Index t = done; t < done + take; ++t) single.update(a.row(t).transpose());
    done += take;
    const std::uint64_t rows = static_cast<std::uint64_t>(done);
    INFO("after " << rows << " rows");
    CHECK(learner.rows() == rows);
    CHECK(learner.refreshes() == rows / refresh_every);
    CHECK(single.refreshes() == rows / refresh_every);
    if (rows < refresh_every) {
      CHECK(learner.basis() == MatrixXd::Identity(d, k));
      CHECK(learner.leader_values().size() == 0);
      continue;
    }
    const Index boundary = static_cast<Index>(rows / refresh_every * refresh_every);
    const linalg::SymmetricEigenSolver es(prefix_covariance(a, boundary));
    const VectorXd lambda = es.eigenvalues().reverse();
    const MatrixXd exact = es.eigenvectors().rowwise().reverse().leftCols(k);
    const double l1 = lambda(0), gap = lambda(k - 1) - lambda(k);
    REQUIRE(gap > 0);
    const double value_tol = 10 * (k * 1e-10 * l1 + 1e-13 * l1);
    const double angle_tol = 10 * (std::sqrt(static_cast<double>(k)) * 1e-10 * l1 + 1e-13 * l1) / gap;
    CHECK(std::abs(learner.leader_values().sum() - lambda.head(k).sum()) <= value_tol);
    CHECK(projector_distance(learner.basis(), exact) <= angle_tol);
    CHECK(projector_distance(learner.basis(), single.basis()) <= 2 * angle_tol);
    if (boundary < done) {
      // Not the prefix up to the end of the block (the check can tell them apart).
      const double later = sum_top_k_eigenvalues(prefix_covariance(a, boundary + 1), k);
      CHECK(std::abs(learner.leader_values().sum() - later) > 100 * value_tol);
    }
  }
  CHECK(learner.refreshes() == 400 / refresh_every);
}

// The replay's follow-the-leader takes the regret meter's leader (follow_solved) instead of solving
// the same exact sum again. Both are certified top k of one matrix: follow() at the FTL default
// (1e-3 of the captured variance), the meter's at 1e-5; so the captured variances of the two
// bases on the prefix differ by at most 1e-3 + 1e-5 of it, which is what is checked, with the basis,
// the values and the refresh count follow_solved leaves.
TEST_CASE("follow_solved: follow-the-leader from the regret meter's leader equals following the exact sum",
          "[fpl]") {
  const Index k = 2, d = 40;
  const std::uint64_t block = 25;
  const MatrixXd a = spiked_rows(500, d, 23, 0.9, 0.7, 0.25);
  FplOnlinePca solved(d, follow_the_leader(k, block)), own(d, follow_the_leader(k, block));
  RegretMeter meter(d, k, {"ftl"});
  for (Index i = 0; i < a.rows(); i += static_cast<Index>(block)) {
    const auto rows = a.middleRows(i, static_cast<Index>(block));
    meter.score(0, rows, solved.basis());
    meter.observe(rows);
    own.update_block(rows);
    solved.follow_solved(meter.leader());
    const MatrixXd c = prefix_covariance(a, i + static_cast<Index>(block));
    const double best = sum_top_k_eigenvalues(c, k);
    INFO("after " << i + static_cast<Index>(block) << " rows");
    CHECK(solved.basis() == meter.leader().vectors);
    CHECK(solved.leader_values() == meter.leader().values);
    CHECK(solved.refreshes() == own.refreshes());
    CHECK(std::abs(captured_variance(c, solved.basis()) - captured_variance(c, own.basis())) <= (1e-3 + 1e-5) * best);
  }
  // Only follow-the-leader takes a solved leader, and only a well-formed one.
  FplOnlinePca priv(d, private_tree(k)), perturbed(d, perturbed_leader(k, 0.5, 1e-6, 1));
  CHECK_THROWS_NAMING(priv.follow_solved(meter.leader()), InvalidParameter, Contains("mode is private_tree"));
  CHECK_THROWS_NAMING(perturbed.follow_solved(meter.leader()), InvalidParameter, Contains("mode is perturbed_leader"));
  TopEigen wrong{meter.leader().vectors.leftCols(1), meter.leader().values.head(1)};
  CHECK_THROWS_NAMING(solved.follow_solved(wrong), InvalidParameter, Contains("must be 40 x 2 with 2 values, got 40 x 1"));
  wrong = meter.leader();
  wrong.vectors.col(1) = wrong.vectors.col(0);
  CHECK_THROWS_NAMING(solved.follow_solved(wrong), InvalidParameter, Contains("must be orthonormal"));
}

// noise_spectral_norm: 2√(d·v) is the semicircle's edge; the largest |eigenvalue| of one d × d
// symmetric Gaussian matrix sits within O(√v·d^(−1/6)) of it (Tracy–Widom fluctuations, ~1.5% at
// d = 200) and the finite-d bias is below that; 5% leaves room for both, seeded. The diagonal's
// variance (here twice the off-diagonal's, the GOE) does not move it.
TEST_CASE("noise_spectral_norm: the spectral norm of symmetric Gaussian noise, 2 sqrt(d v)", "[fpl]") {
  const Index d = 200;
  const double v = 8.0;
  privacy::SeededNoiseSource source(5);
  MatrixXd e(d, d);
  for (Index j = 0; j < d; ++j)
    for (Index i = j; i < d; ++i) e(i, j) = e(j, i) = source.gaussian() * std::sqrt(i == j ? 2 * v : v);
  const linalg::SymmetricEigenSolver es(e, Eigen::EigenvaluesOnly);
  const double norm = es.eigenvalues().cwiseAbs().maxCoeff();
  CHECK(noise_spectral_norm(d, v) == 80.0);  // 2·√(200·8)
  CHECK(std::abs(norm - 80.0) <= 0.05 * 80.0);
  CHECK(noise_spectral_norm(d, 0) == 0.0);
  CHECK_THROWS_NAMING(noise_spectral_norm(0, 1), InvalidParameter, Contains("need d >= 1"));
  CHECK_THROWS_NAMING(noise_spectral_norm(d, -1), InvalidParameter, Contains("variance -1"));
  FplOnlinePca learner(d, private_tree(2));
  CHECK_THROWS_NAMING(learner.follow(e, -1), InvalidParameter, Contains("noise_norm must be finite and >= 0"));
}

// follow_lower and follow_upper are follow() of the matrix one triangle defines (the other one here
// is NaN, never read), bit for bit, over a sequence of leaders: in private_tree mode and in perturbed_leader mode,
// where the fresh noise is added first (same seed: same draws).
TEST_CASE("follow_lower / follow_upper: follow of the mirrored leader, bit for bit, the other triangle never read", "[fpl]") {
  const Index d = 40, k = 3;
  std::mt19937_64 gen(41);
  std::normal_distribution<double> normal;
  for (const FplOptions& options : {private_tree(k), perturbed_leader(k, 0.5, 1e-6, 9)}) {
    FplOnlinePca full(d, options), lower_only(d, options), upper_only(d, options);
    for (int t = 0; t < 3; ++t) {
      MatrixXd a(d, 2 * d);
      for (Index j = 0; j < a.cols(); ++j)
        for (Index i = 0; i < d; ++i) a(i, j) = normal(gen) * (i < 5 ? 3.0 : 1.0);
      MatrixXd leader = a * a.transpose();
      leader.triangularView<Eigen::StrictlyUpper>() = leader.transpose();  // exactly symmetric
      MatrixXd lower = leader, upper = leader;
      lower.triangularView<Eigen::StrictlyUpper>().setConstant(std::nan(""));
      upper.triangularView<Eigen::StrictlyLower>().setConstant(std::nan(""));
      full.follow(leader, 0.5);
      lower_only.follow_lower(lower, 0.5);
      upper_only.follow_upper(upper, 0.5);
      if (options.mode == FplMode::private_tree) REQUIRE(lower == leader);  // the mirror written over the NaN
      INFO("mode " << to_string(options.mode) << ", leader " << t);
      REQUIRE(full.basis() == lower_only.basis());
      REQUIRE(full.leader_values() == lower_only.leader_values());
      REQUIRE(full.basis() == upper_only.basis());
      REQUIRE(full.leader_values() == upper_only.leader_values());
    }
  }
  FplOnlinePca learner(d, private_tree(k));
  MatrixXd identity = MatrixXd::Identity(d, d);
  CHECK_THROWS_NAMING(learner.follow_lower(identity, -1), InvalidParameter,
                      Contains("follow_lower: noise_norm must be finite and >= 0"));
  CHECK_THROWS_NAMING(learner.follow_upper(identity, -1), InvalidParameter,
                      Contains("follow_upper: noise_norm must be finite and >= 0"));
}

#undef FIGURE

TEST_CASE("parse_fpl_mode: the inverse of to_string; other names refused", "[fpl]") {
  for (const FplMode mode : {FplMode::follow_the_leader, FplMode::perturbed_leader, FplMode::private_tree})
    CHECK(parse_fpl_mode(to_string(mode)) == mode);
  CHECK_THROWS_NAMING(parse_fpl_mode("ftl"), InvalidParameter,
                      Contains("FPL mode 'ftl': expected follow_the_leader, perturbed_leader or private_tree"));
}

}  // namespace test_fpl_online_pca
