// Privacy audits of the PCA components (method: epsilon_audit.hpp). Each audit says what it
// observes; a component whose released output is a lossy function of its Gaussian releases is
// audited on that output and its bound is correspondingly far below the (composed) claim.
//
//  * GaussianPca (Analyze Gauss, Algorithm 1): the release Ĉ itself, all upper entries, Fisher's
//    discriminant = the likelihood ratio: audited at its exact μ.
//  * Private power iteration (HR13 Fig 2), entry level: every round's release x'_t is observable
//    (x_{t−1} is what the operator is applied to, and x'_t = ‖x'_t‖·x_t with the norms in the trace),
//    so the test computes the exact log-likelihood ratio of all rounds: audited against the composed
//    μ of the run (gdp_mu). The matrix is chosen so that the iterate sits on the changed entry's
//    column (|x[t]| ≈ 1 = √(C/n) with C = n), where each round's sensitivity bound is attained.
//  * Private Oja: every product y_τ and the eigenvalue release are observable (the StepObserver and the
//    result); exact log-likelihood ratio of all Γ + 1 releases against the run's μ. The added row lies
//    on the top eigenvector, so |aᵀv| ≈ L and the per-release sensitivity L² is nearly attained.
//  * Noisy power method: only the output (vector and value) is observable; Fisher's discriminant on
//    (x₁², λ̂): a valid but loose audit of the μ of its T + 1 releases.
//  * FPL online PCA (private_tree): the sequence of subspaces and leader values, post-processing of
//    the attached ContinualCovariance; audited against the stream's μ (loose: post-processing).
//
// Trials and power: targets give μ = 0.964 (claim 1.087 at δ' = 0.1). 40000 trials a side (30000
// evaluated): a likelihood-ratio audit at the full μ reaches 0.94; these audits measure part of μ
// (stated per case). The bound is valid at confidence 1 − 1e-4 (false alarm ≤ 1e-4 per audit).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/pca/private_power_iteration.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "epsilon_audit.hpp"
#include "../unaccounted.hpp"

namespace audit_pca {

namespace {

using dpstream::audit::gdp_epsilon;
using dpstream::audit::kAuditDelta;
using dpstream::audit::run_audit;
using dpstream::privacy::EpsDelta;
using dpstream::privacy::Neighbours;
using dpstream::privacy::SeededNoiseSource;

constexpr long kTrials = 40000;

// Rows of norm ≤ 1 in d = 3: a strong top direction e₁ (24 rows on it, so that the iterates of the
// iterative methods sit on e₁ after one step, where the added row e₁ moves their releases the most)
// and some spread.
Eigen::MatrixXd shared_rows() {
  Eigen::MatrixXd rows(28, 3);
  rows.topRows(24).setZero();
  rows.topRows(24).col(0).setOnes();
  rows.bottomRows(4) << 0.8, 0.6, 0.0,  //
      0.8, 0.0, 0.6,                    //
      0.0, 0.5, 0.0,                    //
      0.6, 0.0, -0.8;
  return rows;
}

// add/remove: D' = D ∪ {e₁}.
Eigen::MatrixXd rows_for(bool neighbour) {
  Eigen::MatrixXd rows = shared_rows();
  if (!neighbour) return rows;
  rows.conservativeResize(rows.rows() + 1, Eigen::NoChange);
  rows.row(rows.rows() - 1) = Eigen::RowVector3d(1.0, 0.0, 0.0);
  return rows;
}

Eigen::VectorXd upper_triangle(const Eigen::MatrixXd& m) {
  Eigen::VectorXd out(m.rows() * (m.rows() + 1) / 2);
  Eigen::Index k = 0;
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = i; j < m.cols(); ++j) out(k++) = m(i, j);
  return out;
}

}  // namespace

TEST_CASE("audit: GaussianPca (Analyze Gauss) release stays within its claim", "[audit][pca]") {
  dpstream::pca::GaussianPcaOptions options;
  options.mechanism.privacy.target = EpsDelta(3.0, 1e-3);
  const dpstream::pca::GaussianPca probe(3, options);
  const double claimed = gdp_epsilon(probe.mechanism().sensitivity() / probe.sigma(), kAuditDelta);
  const auto result = run_audit("gaussian pca (analyze gauss)", 301, kTrials, kAuditDelta, claimed,
                                [&](bool neighbour, std::uint64_t seed) {
                                  auto o = options;
                                  o.mechanism.privacy.noise.seed = seed;
                                  dpstream::pca::GaussianPca pca(3, o);
                                  return upper_triangle(pca.release(rows_for(neighbour), test_budget::unaccounted()).noisy_covariance);
                                });
  CHECK(result.epsilon_lb <= claimed);
  CHECK(result.epsilon_lb > 0.5 * claimed);
}

TEST_CASE("audit: private power iteration (HR13) stays within its composed claim", "[audit][pca][slow]") {
  // A = diag(40, 1, 0.5, …) (top eigenvector e₁, far above the noise: x_t ≈ ±e₁ after one round); D' changes the entry (1, 1) by α = 1 (single_entry,
  // symmetric: A − A' = e₁e₁ᵀ). C = n: the check never fires on a unit iterate and the round
  // sensitivity √(C/n) = 1 is attained when x_{t−1} = ±e₁.
  // n = 8: x_0 ~ N(0, 1/n)ⁿ fails the check ‖x_0‖∞² ≤ C/n = 1 with probability 1 − (1 − 2Q(√8))⁸ ≈ 4%
  // (at n = 3 it would be 23%, and a failed run releases nothing the audit can use).
  const Eigen::Index n = 8;
  Eigen::VectorXd spectrum = Eigen::VectorXd::Constant(n, 0.5);
  spectrum(0) = 40.0;
  spectrum(1) = 1.0;
  const Eigen::MatrixXd a = spectrum.asDiagonal();
  dpstream::pca::PpiOptions options;
  options.target = EpsDelta(3.0, 1e-3);
  options.iterations = 4;
  options.coherence_bound = static_cast<double>(n);
  double gdp_mu = 0.0;
  auto features = [&](bool neighbour, std::uint64_t seed) {
    Eigen::MatrixXd m = a;
    if (neighbour) m(0, 0) += 1.0;
    std::vector<Eigen::VectorXd> applied;  // x_0, x_1, …: the vectors the rounds multiply
    dpstream::pca::SymmetricOperator op;
    op.dimension = n;
    op.apply = [&](const Eigen::VectorXd& x, Eigen::VectorXd& y) {
      applied.push_back(x);
      y = m * x;
    };
    SeededNoiseSource noise(seed);
    const auto result = dpstream::pca::private_power_iteration(op, options, noise, test_budget::unaccounted());
    gdp_mu = result.gdp_mu;
    const auto& trace = result.traces.at(0);
    // x_0, x_1, …: every iterate formed (a failed run stops before applying its last one, and its
    // last round is then left out of the statistic).
    std::vector<Eigen::VectorXd> iterates = applied;
    if (!result.failed) iterates.push_back(result.vectors.col(0));
    // Log-likelihood ratio of D' against D over the rounds (units of 1/noise_std²):
    // Σ_t ⟨x'_t − A x_{t−1}, d_t⟩ − ½‖d_t‖², d_t = (A' − A)x_{t−1} = x_{t−1}[0]·e₁, x'_t = ‖x'_t‖·x_t.
    double llr = 0.0;
    for (std::size_t t = 1; t <= trace.norms.size() && t < iterates.size(); ++t) {
      const Eigen::VectorXd& previous = iterates[t - 1];
      const double released = trace.norms[t - 1] * iterates[t](0);
      const double shift = previous(0);
      llr += (released - (a * previous)(0)) * shift - 0.5 * shift * shift;
    }
    return Eigen::VectorXd::Constant(1, llr);
  };
  features(false, 0);  // sets gdp_mu
  const double claimed = gdp_epsilon(gdp_mu, kAuditDelta);
  const auto result = run_audit("private power iteration (all rounds)", 302, kTrials, kAuditDelta, claimed, features);
  CHECK(result.epsilon_lb <= claimed);
  // Not vacuous: the measured μ is ≈ 0.8 of the claim's (round 1 multiplies x_0, which is off e₁,
  // and ~4% of runs fail at round 1), for which 30000 evaluated trials reach ≈ 0.65.
  CHECK(result.epsilon_lb > 0.5 * claimed);
}

TEST_CASE("audit: private Oja stays within its composed claim", "[audit][pca][slow]") {
  dpstream::pca::PrivateOjaOptions options;
  options.iterations = 4;
  options.privacy.target = EpsDelta(3.0, 1e-3);
  const dpstream::pca::PrivateOja probe(options);
  const double claimed = gdp_epsilon(probe.mu(), kAuditDelta);
  const Eigen::MatrixXd p = shared_rows().transpose() * shared_rows();  // AᵀA of D
  const Eigen::Vector3d added(1.0, 0.0, 0.0);
  const auto result = run_audit("private oja (all products + eigenvalue)", 303, kTrials, kAuditDelta, claimed,
                                [&](bool neighbour, std::uint64_t seed) {
                                  auto o = options;
                                  o.privacy.noise.seed = seed;
                                  dpstream::pca::PrivateOja oja(o);
                                  // LLR of D' against D (units of 1/σ²): d = a(aᵀv) per product.
                                  double llr = 0.0;
                                  const auto out = oja.run(
                                      rows_for(neighbour), test_budget::unaccounted(), "audit",
                                      [&](int, const Eigen::VectorXd& previous, const Eigen::VectorXd& y, const Eigen::VectorXd&) {
                                        const Eigen::VectorXd d = added * added.dot(previous);
                                        llr += (y - p * previous).dot(d) - 0.5 * d.squaredNorm();
                                      });
                                  const Eigen::VectorXd& v = out.vector;
                                  const double base = (shared_rows() * v).squaredNorm(), shift = std::pow(added.dot(v), 2);
                                  llr += (*out.eigenvalue - base) * shift - 0.5 * shift * shift;
                                  return Eigen::VectorXd::Constant(1, llr);
                                });
  CHECK(result.epsilon_lb <= claimed);
  // Not vacuous: only the first product (on the random v̂_0) falls short of the sensitivity L²;
  // measured 0.72.
  CHECK(result.epsilon_lb > 0.5 * claimed);
}

TEST_CASE("audit: noisy power method output stays within its claim", "[audit][pca][slow]") {
  dpstream::pca::NoisyPowerMethodOptions options;
  options.k = 1;
  options.iterations = 1;
  options.privacy.target = EpsDelta(3.0, 1e-3);
  const dpstream::pca::NoisyPowerMethod probe(3, options);
  const double claimed = gdp_epsilon(probe.mu(), kAuditDelta);
  const Eigen::MatrixXd start = Eigen::Vector3d(1.0, 0.0, 0.0);  // data-independent, on the changed direction
  const auto result = run_audit("noisy power method (output only)", 304, kTrials, kAuditDelta, claimed,
                                [&](bool neighbour, std::uint64_t seed) {
                                  auto o = options;
                                  o.privacy.noise.seed = seed;
                                  dpstream::pca::NoisyPowerMethod npm(3, o);
                                  const auto out = npm.run(rows_for(neighbour), test_budget::unaccounted(), &start);
                                  Eigen::VectorXd f(2);
                                  f << out.vectors(0, 0) * out.vectors(0, 0), out.values(0);
                                  return f;
                                });
  CHECK(result.epsilon_lb <= claimed);
}

TEST_CASE("audit: FPL online PCA (private_tree) subspaces stay within the stream's claim", "[audit][pca][slow]") {
  // Replace neighbours on the stream (e₁ vs e₂ at step 1), d = 2, k = 1, plain tree over T = 8 steps:
  // features are the squared first coordinate of V̂ and the top leader value after each refresh.
  dpstream::stream::ContinualSumOptions stream;
  stream.horizon = 8;
  stream.privacy.target = EpsDelta(3.0, 1e-3);
  stream.privacy.relation = Neighbours::replace_row;
  const double claimed = gdp_epsilon(dpstream::stream::ContinualCovariance(2, stream, test_budget::unaccounted()).mu(), kAuditDelta);
  const auto result = run_audit("fpl online pca private_tree (subspaces)", 305, kTrials, kAuditDelta, claimed,
                                [&](bool neighbour, std::uint64_t seed) {
                                  auto o = stream;
                                  o.privacy.noise.seed = seed;
                                  dpstream::stream::ContinualCovariance sum(2, o, test_budget::unaccounted());
                                  dpstream::pca::FplOptions fpl_options;
                                  fpl_options.k = 1;
                                  dpstream::pca::FplOnlinePca fpl(2, fpl_options);
                                  fpl.attach(sum);
                                  Eigen::VectorXd f(16);
                                  for (Eigen::Index t = 0; t < 8; ++t) {
                                    Eigen::Vector2d row(0.5, 0.5);
                                    if (t == 0) row = neighbour ? Eigen::Vector2d(0.0, 1.0) : Eigen::Vector2d(1.0, 0.0);
                                    sum.update(row);
                                    f(2 * t) = fpl.basis()(0, 0) * fpl.basis()(0, 0);
                                    f(2 * t + 1) = fpl.leader_values()(0);
                                  }
                                  return f;
                                });
  CHECK(result.epsilon_lb <= claimed);
}

}  // namespace audit_pca
