// The empirical-ε audit: a lower bound on the ε a mechanism really has, from seeded trials on two
// neighbouring datasets D, D' (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021).
//
// Method
//  1. Trials: `trials` runs on D and `trials` on D', each with its own seed (seed_for). A run returns a
//     feature vector (what an attacker reads off the release, e.g. the release projected on the
//     difference of the datasets, one entry per release of a stream).
//  2. Split: the first quarter of each side trains the distinguisher, the rest evaluates it, so the
//     set chosen is independent of the counts the bound uses.
//  3. Score: one feature is used as is; several are combined by Fisher's linear discriminant fitted on
//     the training quarter (w = Σ̂⁻¹(m̂_D' − m̂_D)): for a Gaussian mechanism with data-independent
//     noise this is the likelihood-ratio statistic, so the audit is as strong as a linear attacker can
//     be. A test may pass its own exact log-likelihood ratio as the single feature instead.
//  4. Sets: S = {score > τ} or {score ≤ τ}, τ on a grid of training quantiles. (ε, δ)-DP gives, for
//     every S, P_D'(S) ≤ e^ε P_D(S) + δ and P_D(S) ≤ e^ε P_D'(S) + δ, so
//        ε ≥ ln((p₁ − δ)/p₀)  and  ε ≥ ln((p₀ − δ)/p₁)      (p₀ = P_D(S), p₁ = P_D'(S)).
//     The (S, order) with the largest training bound is the one evaluated.
//  5. Bound: on the evaluation trials, ε_lb = ln((lower(p_num) − δ)/upper(p_den)) with Clopper–Pearson
//     bounds at a/2 each: P(ε_lb > true ε) ≤ a, whatever the mechanism.
//
// Confidence: kAuditAlpha = 1e-4 per audit. With at most 100 audits in the suites (there are fewer),
// the chance that any correct mechanism is flagged by bad luck of the seeds is ≤ 1% (Bonferroni: the
// brief's α = 0.01 / number of tests).
//
// What it bounds: only the statistic it measures on the two datasets chosen. ε_lb ≤ claimed says the
// audit found no violation there; it is evidence, not proof. ε_lb > claimed is proof (at confidence
// 1 − a) that the mechanism is not (claimed ε, δ)-DP.
//
// Claims at a moderate δ: a mechanism built from Gaussian noise and calibrated by the analytic
// Gaussian / GDP claims μ-GDP, i.e. (ε(δ), δ)-DP for EVERY δ with ε(δ) the Gaussian profile
// (gdp_epsilon). Auditing at δ = 0.1 instead of the calibration's 1e-6 is sound and needs only
// 10⁴–10⁵ trials: at μ = 0.964 (claim 1.087) and 75000 evaluated trials, a correct mechanism's bound
// reaches 0.99 on average and a √2 error in μ moves it to 1.84.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "clopper_pearson.hpp"
#include "dpstream/pca/private_power_iteration.hpp"  // gaussian_dp_epsilon: the exact μ-GDP ε at δ

namespace dpstream::audit {

inline constexpr double kAuditAlpha = 1e-4;
// δ' of the Gaussian audits: Gaussian components claim (ε(δ'), δ') for every δ' (μ-GDP), and at 0.1
// a few ten thousand trials have power (README: method).
inline constexpr double kAuditDelta = 0.1;

// The ε a μ-GDP mechanism claims at δ (Balle & Wang 2018 / Dong, Roth & Su 2019 Cor 2.13).
inline double gdp_epsilon(double mu, double delta) { return pca::gaussian_dp_epsilon(mu, delta); }

// Distinct seeds for every (audit, trial, dataset): a splitmix64 hash, so nearby audit ids and trial
// numbers never share a noise stream.
inline std::uint64_t seed_for(std::uint64_t audit_id, std::uint64_t trial, bool neighbour) {
  std::uint64_t z = audit_id * 0x9E3779B97F4A7C15ULL + 2 * trial + (neighbour ? 1 : 0) + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The chosen distinguishing set and its bound.
struct ThresholdBound {
  double epsilon = -std::numeric_limits<double>::infinity();  // ε_lb (−∞ when no set beats δ)
  double threshold = 0.0;
  bool upper_set = true;       // S = {score > τ} (else {score ≤ τ})
  bool neighbour_heavy = true; // S is likelier under D' (the bound is ln((p₁ − δ)/p₀)), else under D
  double p_num = 0.0, p_den = 0.0;  // empirical rates of S on the evaluation trials (numerator, denominator)
};

namespace detail {

// Trials with score > τ in a sorted vector.
inline std::int64_t count_above(const std::vector<double>& sorted, double tau) {
  return static_cast<std::int64_t>(sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), tau));
}

// ln((lower(k_num) − δ)/upper(k_den)) with a/2 on each bound.
inline double bound(std::int64_t k_num, std::int64_t n_num, std::int64_t k_den, std::int64_t n_den,
                    double delta, double a) {
  const double num = clopper_pearson_lower(k_num, n_num, a / 2) - delta;
  const double den = clopper_pearson_upper(k_den, n_den, a / 2);
  if (num <= 0.0) return -std::numeric_limits<double>::infinity();
  return std::log(num / den);
}

// Counts of S for (set, τ) on sorted scores: k₀ under D, k₁ under D'.
inline std::pair<std::int64_t, std::int64_t> set_counts(const std::vector<double>& s0, const std::vector<double>& s1,
                                                        double tau, bool upper_set) {
  std::int64_t k0 = count_above(s0, tau), k1 = count_above(s1, tau);
  if (!upper_set) {
    k0 = static_cast<std::int64_t>(s0.size()) - k0;
    k1 = static_cast<std::int64_t>(s1.size()) - k1;
  }
  return {k0, k1};
}

}  // namespace detail

// Steps 4–5 above: train/eval scores of D (s0) and D' (s1).
inline ThresholdBound threshold_epsilon_bound(std::vector<double> train0, std::vector<double> train1,
                                              std::vector<double> eval0, std::vector<double> eval1,
                                              double delta, double a = kAuditAlpha) {
  std::sort(train0.begin(), train0.end());
  std::sort(train1.begin(), train1.end());
  std::sort(eval0.begin(), eval0.end());
  std::sort(eval1.begin(), eval1.end());
  std::vector<double> pooled(train0);
  pooled.insert(pooled.end(), train1.begin(), train1.end());
  std::sort(pooled.begin(), pooled.end());
  const auto n0 = static_cast<std::int64_t>(train0.size()), n1 = static_cast<std::int64_t>(train1.size());

  ThresholdBound best;
  double best_train = -std::numeric_limits<double>::infinity();
  constexpr int kGrid = 400;  // τ at the pooled training quantiles (i + ½)/kGrid
  for (int i = 0; i < kGrid; ++i) {
    const double tau = pooled[static_cast<std::size_t>((i + 0.5) / kGrid * static_cast<double>(pooled.size()))];
    for (bool upper_set : {true, false}) {
      const auto [k0, k1] = detail::set_counts(train0, train1, tau, upper_set);
      for (bool heavy : {true, false}) {
        const double e = heavy ? detail::bound(k1, n1, k0, n0, delta, a) : detail::bound(k0, n0, k1, n1, delta, a);
        if (e > best_train) {
          best_train = e;
          best.threshold = tau;
          best.upper_set = upper_set;
          best.neighbour_heavy = heavy;
        }
      }
    }
  }
  const auto m0 = static_cast<std::int64_t>(eval0.size()), m1 = static_cast<std::int64_t>(eval1.size());
  const auto [k0, k1] = detail::set_counts(eval0, eval1, best.threshold, best.upper_set);
  if (best.neighbour_heavy) {
    best.epsilon = detail::bound(k1, m1, k0, m0, delta, a);
    best.p_num = static_cast<double>(k1) / static_cast<double>(m1);
    best.p_den = static_cast<double>(k0) / static_cast<double>(m0);
  } else {
    best.epsilon = detail::bound(k0, m0, k1, m1, delta, a);
    best.p_num = static_cast<double>(k0) / static_cast<double>(m0);
    best.p_den = static_cast<double>(k1) / static_cast<double>(m1);
  }
  return best;
}

// Fisher's discriminant direction from training features (rows are trials): (Σ̂₀ + Σ̂₁)⁻¹(m̂₁ − m̂₀),
// with a ridge of 1e-9·trace for features that never vary (e.g. a release the rows never reach).
inline Eigen::VectorXd fisher_direction(const Eigen::MatrixXd& x0, const Eigen::MatrixXd& x1) {
  const Eigen::RowVectorXd m0 = x0.colwise().mean(), m1 = x1.colwise().mean();
  const Eigen::MatrixXd c0 = x0.rowwise() - m0, c1 = x1.rowwise() - m1;
  Eigen::MatrixXd pooled = (c0.transpose() * c0 + c1.transpose() * c1) / static_cast<double>(x0.rows() + x1.rows());
  const double ridge = 1e-9 * std::max(pooled.trace(), 1e-300) + 1e-300;
  pooled.diagonal().array() += ridge;
  return pooled.ldlt().solve((m1 - m0).transpose());
}

// One audit's outcome.
struct AuditResult {
  std::string name;
  double epsilon_lb = 0.0;
  double claimed = 0.0;   // claimed ε at `delta`
  double delta = 0.0;
  long trials = 0;        // per dataset
  double seconds = 0.0;   // wall time of the trials and the bound
  ThresholdBound set;
};

// features(neighbour, seed): one run on D (false) or D' (true) with noise seed `seed`.
using FeatureSampler = std::function<Eigen::VectorXd(bool neighbour, std::uint64_t seed)>;

inline AuditResult run_audit(const std::string& name, std::uint64_t audit_id, long trials, double delta,
                             double claimed, const FeatureSampler& features, double a = kAuditAlpha) {
  const auto start = std::chrono::steady_clock::now();
  const long train = trials / 4;
  Eigen::MatrixXd x0, x1;
  for (long i = 0; i < trials; ++i) {
    const Eigen::VectorXd f0 = features(false, seed_for(audit_id, static_cast<std::uint64_t>(i), false));
    const Eigen::VectorXd f1 = features(true, seed_for(audit_id, static_cast<std::uint64_t>(i), true));
    if (i == 0) {
      x0.resize(trials, f0.size());
      x1.resize(trials, f1.size());
    }
    x0.row(i) = f0.transpose();
    x1.row(i) = f1.transpose();
  }
  Eigen::VectorXd w = Eigen::VectorXd::Ones(1);
  if (x0.cols() > 1) w = fisher_direction(x0.topRows(train), x1.topRows(train));
  auto scores = [&](const Eigen::MatrixXd& x, long from, long count) {
    const Eigen::VectorXd s = x.middleRows(from, count) * w;
    return std::vector<double>(s.data(), s.data() + s.size());
  };
  AuditResult result;
  result.name = name;
  result.claimed = claimed;
  result.delta = delta;
  result.trials = trials;
  result.set = threshold_epsilon_bound(scores(x0, 0, train), scores(x1, 0, train), scores(x0, train, trials - train),
                                       scores(x1, train, trials - train), delta, a);
  result.epsilon_lb = result.set.epsilon;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("audit %-58s eps_lb %7.3f  claimed %7.3f  (delta %.3g, %ld trials/side, %.2f s)\n", name.c_str(),
              result.epsilon_lb, claimed, delta, trials, result.seconds);
  std::fflush(stdout);
  return result;
}

}  // namespace dpstream::audit
