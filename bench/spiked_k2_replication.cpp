// The synthetic experiment of Düngler & Sanyal ("An iterative algorithm for differentially private
// k-PCA with adaptive noise", NeurIPS 2025, Figure 1), run with dpstream's estimators. What their
// readable text fixes (docs/streaming-oja.md says which parts could be read): a spiked covariance
// model, k = 2, d = 200, λ₁ = 10, ε = 1, δ = 0.01, σ ∈ {0.025, 0.001}, 50 trials, the mean with a 95%
// interval; panels (a) σ = 0.025, (b) σ = 0.001, (c) growing dimension; baselines DP-Gauss-1 (input
// perturbation) and DP-Gauss-2 (output perturbation), "modified versions" of Dwork, Talwar,
// Thakurta & Zhang's (Analyze Gauss, STOC 2014), and a modified noisy power method (Hardt & Price
// 2014), all needing a norm bound. NOT readable, so assumed here: the rows' law, λ₂, the sample
// sizes, the metric, n in panel (c), and how they modified the baselines.
//
// Data (per trial, seeded): U = [u₁ u₂] random orthonormal d × 2, row x = √λ₁·s₁u₁ + √λ₂·s₂u₂ + σz,
// z ~ N(0, I_d), λ₂ = λ₁/2 (assumed), two laws of the spike coefficients s_j:
//   rademacher: s_j = ±1 — each row's randomness off the spikes is σ (the low-randomness regime
//               their abstract is about); gaussian: s_j ~ N(0, 1) — x ~ N(0, UΛUᵀ + σ²I), the textbook
//               spiked covariance, unbounded, so its public norm bound is a tail bound (below).
// Both have E[xxᵀ] = λ₁u₁u₁ᵀ + λ₂u₂u₂ᵀ + σ²I. Public row norm bound L, by the triangle inequality
// with ‖z‖² six standard deviations up: rademacher √(λ₁ + λ₂) + σ√(d + 6√(2d)); gaussian
// √(λ₁·t) + σ√(d + 6√(2d)), t = 2·ln 10⁶, since λ₁s₁² + λ₂s₂² ≤ λ₁·χ²₂ and P(χ²₂ > t) = e^{−t/2} = 10⁻⁶.
// A row above L is scaled to L and counted (printed).
//
// Methods (kMethods; each (ε, δ) = (1, 0.01) on the n rows, each row a privacy unit):
//  * streaming-oja: StreamingPrivateOja, k = 2, its defaults, horizon n declared (zero-out-row).
//  * streaming-oja centred: the same with centred_updates (DP-PCA's adaptive mean, one pass).
//  * gauss (input) — DP-Gauss-1: GaussianPca, Analyze Gauss (add/remove row).
//  * output — DP-Gauss-2 as Dwork et al. describe it (SVD first, then the top subspace released with
//    noise for its gap-dependent sensitivity, the gap tested privately). Add/remove row. Two releases:
//    (1) a lower bound ℓ = g + N(0, s²) − z·s on the gap g = λ_k − λ_{k+1} of Σxxᵀ, s for sensitivity
//    L² at (ε/4, δ/4) (adding xxᵀ raises every eigenvalue by between 0 and ‖x‖² ≤ L², so g moves by
//    ≤ L²), z = Φ⁻¹(1 − δ/4), so ℓ > g with probability δ/4; (2) if ℓ > 0, the top-k projector P
//    plus symmetric Gaussian noise at (3ε/4, δ/2) for ‖P − P'‖_F ≤ √2·2L²/ℓ (Davis–Kahan, Yu, Wang &
//    Samworth 2015, with the gap of the dataset released on — valid whenever ℓ ≤ g), then its top k;
//    ℓ ≤ 0 releases a random subspace. Total (ε, δ) by basic composition, the failure δ/4 included.
//  * power — the DP power method: NoisyPowerMethod, k = 2, 5 rounds (dpstream-pca's default).
// Utility, per trial: sin²θ = ‖(I − UUᵀ)V‖_F²/k for the released V (0 perfect, 1 orthogonal), and the
// population variance captured, tr(VᵀΣV)/tr(UᵀΣU). Printed: mean and 95% half-width (1.96·sd/√trials)
// per model, d, σ, n, method; a JSON line at the end.
// Arguments (optional): trials (50), the largest n of panels (a, b) (16000; from 500, doubling), n of
// panel (c) (4000; 0 skips it: d ∈ {50, 100, 200, 400, 800}, σ = 0.025, both laws).
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
namespace pca = dpstream::pca;
namespace privacy = dpstream::privacy;

constexpr Index kRank = 2;
constexpr double kLambda1 = 10.0, kLambda2 = 5.0;
const privacy::EpsDelta kTarget{1.0, 0.01};

enum class Law { rademacher, gaussian };
const char* law_name(Law law) { return law == Law::rademacher ? "rademacher" : "gaussian"; }

privacy::Budget unaccounted() { return privacy::Budget::unaccounted("a benchmark: nothing is published"); }

// The public norm bound of the header, from the model only.
double norm_bound(Law law, Index d, double sigma) {
  const double noise = sigma * std::sqrt(double(d) + 6.0 * std::sqrt(2.0 * double(d)));
  const double tail = 2.0 * std::log(1e6);
  return (law == Law::rademacher ? std::sqrt(kLambda1 + kLambda2) : std::sqrt(kLambda1 * tail)) + noise;
}

struct Spiked {
  MatrixXd u;     // d × 2, the planted directions
  MatrixXd rows;  // n × d
  double l;       // the public row norm bound
  int scaled;     // rows scaled down to l (counted)
};

Spiked spiked_rows(Law law, Index d, Index n, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::bernoulli_distribution coin;
  const auto coefficient = [&] { return law == Law::rademacher ? (coin(rng) ? 1.0 : -1.0) : normal(rng); };
  MatrixXd g(d, kRank);
  for (Index i = 0; i < g.size(); ++i) g.data()[i] = normal(rng);
  Spiked s{Eigen::HouseholderQR<MatrixXd>(g).householderQ() * MatrixXd::Identity(d, kRank), MatrixXd(n, d),
           norm_bound(law, d, sigma), 0};
  for (Index i = 0; i < n; ++i) {
    VectorXd x(d);
    for (Index j = 0; j < d; ++j) x[j] = sigma * normal(rng);
    x += coefficient() * std::sqrt(kLambda1) * s.u.col(0);
    x += coefficient() * std::sqrt(kLambda2) * s.u.col(1);
    const double norm = x.norm();
    if (norm > s.l) x *= s.l * (1.0 - 1e-12) / norm, ++s.scaled;  // below L after round-off
    s.rows.row(i) = x.transpose();
  }
  return s;
}

// One trial's input to every method: the rows, their exact Σxxᵀ, the public L and a seed.
struct Trial {
  const MatrixXd& rows;
  const dpstream::stream::CovarianceAccumulator& exact;
  double l;
  std::uint64_t seed;
};

MatrixXd top_k(const MatrixXd& symmetric) {
  const Eigen::SelfAdjointEigenSolver<MatrixXd> eig(symmetric);  // ascending
  return eig.eigenvectors().rightCols(kRank);
}

MatrixXd streaming_oja(const Trial& t, bool centred) {
  pca::StreamingPrivateOjaOptions o;
  o.centred_updates = centred;
  o.k = kRank;
  o.horizon = std::uint64_t(t.rows.rows());
  o.privacy.row_norm_bound = t.l;
  o.privacy.target = kTarget;
  o.privacy.noise.seed = t.seed;
  pca::StreamingPrivateOja oja(t.rows.cols(), o, unaccounted());
  oja.update_block(t.rows);
  oja.flush();
  return oja.basis();
}
MatrixXd run_streaming_oja(const Trial& t) { return streaming_oja(t, false); }
MatrixXd run_streaming_oja_centred(const Trial& t) { return streaming_oja(t, true); }

MatrixXd run_input_perturbation(const Trial& t) {
  pca::GaussianPcaOptions g;
  g.k = kRank;
  g.mechanism.privacy.target = kTarget;
  g.mechanism.privacy.row_norm_bound = t.l;
  g.mechanism.privacy.noise.seed = t.seed + 1;
  return pca::GaussianPca(t.rows.cols(), g).release(t.exact, unaccounted()).subspace.vectors;
}

// z with P(N(0, 1) > z) = p, by bisection on erfc (monotone; 200 halvings reach double precision).
double upper_normal_quantile(double p) {
  double lo = 0.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// DP-Gauss-2 as the header states it: a private lower bound on the gap, then the projector's release.
MatrixXd run_output_perturbation(const Trial& t) {
  const Index d = t.rows.cols();
  const Eigen::SelfAdjointEigenSolver<MatrixXd> eig(t.exact.matrix());  // ascending
  const double gap = eig.eigenvalues()[d - kRank] - eig.eigenvalues()[d - kRank - 1];
  const privacy::EpsDelta test{kTarget.epsilon() / 4, kTarget.delta() / 4};
  const double s = privacy::analytic_gaussian_sigma(t.l * t.l, test);
  privacy::SeededNoiseSource noise(t.seed + 2);
  const double lower = gap + s * noise.gaussian() - s * upper_normal_quantile(kTarget.delta() / 4);
  if (lower <= 0.0) {  // the test failed: a random subspace, drawn from the same public source
    MatrixXd g(d, kRank);
    for (Index i = 0; i < g.size(); ++i) g.data()[i] = noise.gaussian();
    return Eigen::HouseholderQR<MatrixXd>(g).householderQ() * MatrixXd::Identity(d, kRank);
  }
  const MatrixXd v = eig.eigenvectors().rightCols(kRank);
  privacy::SymmetricGaussianMechanism::Options m;
  m.privacy.target = privacy::EpsDelta{0.75 * kTarget.epsilon(), kTarget.delta() / 2};
  // covariance_sensitivity(add_remove_row, L') = L'², so L' = √Δ gives the mechanism sensitivity Δ.
  m.privacy.row_norm_bound = std::sqrt(2.0 * std::sqrt(2.0) * t.l * t.l / lower);
  return top_k(privacy::SymmetricGaussianMechanism(m).release(v * v.transpose(), noise, unaccounted()));
}

MatrixXd run_power_method(const Trial& t) {
  pca::NoisyPowerMethodOptions p;
  p.k = kRank;
  p.iterations = 5;
  p.release_values = false;
  p.privacy.target = kTarget;
  p.privacy.row_norm_bound = t.l;
  p.privacy.noise.seed = t.seed + 3;
  return pca::NoisyPowerMethod(t.rows.cols(), p).run(t.exact, unaccounted()).vectors;
}

// The methods compared: a name and a function of the trial. A new column is one more entry.
struct Method {
  const char* name;
  MatrixXd (*run)(const Trial&);
};
const std::vector<Method> kMethods = {{"streaming-oja", run_streaming_oja},
                                      {"streaming-oja centred", run_streaming_oja_centred},
                                      {"gauss (input)", run_input_perturbation},
                                      {"output", run_output_perturbation},
                                      {"power", run_power_method}};

struct Score {
  double sin2, captured;
};

Score score(const MatrixXd& v, const MatrixXd& u, double sigma) {
  const MatrixXd off = v - u * (u.transpose() * v);
  const VectorXd lambda = (VectorXd(2) << kLambda1, kLambda2).finished();
  // tr(VᵀΣV) with Σ = U diag(λ) Uᵀ + σ²I, over tr(UᵀΣU).
  const MatrixXd uv = u.transpose() * v;
  const double captured = (lambda.asDiagonal() * uv.cwiseAbs2()).sum() + sigma * sigma * double(kRank);
  return {off.squaredNorm() / double(kRank), captured / (kLambda1 + kLambda2 + 2.0 * sigma * sigma)};
}

struct Cell {
  Law law;
  Index d;
  double sigma;
  Index n;
};

// Mean and 95% half-width of a cell's scores, printed and appended to the JSON rows.
void report(const Cell& c, const char* method, const std::vector<Score>& scores, std::string& json) {
  double s1 = 0, s2 = 0, c1 = 0, c2 = 0;
  for (const Score& x : scores) s1 += x.sin2, s2 += x.sin2 * x.sin2, c1 += x.captured, c2 += x.captured * x.captured;
  const double k = double(scores.size()), sm = s1 / k, cm = c1 / k;
  const double sh = 1.96 * std::sqrt(std::max(0.0, s2 / k - sm * sm) / k);
  const double ch = 1.96 * std::sqrt(std::max(0.0, c2 / k - cm * cm) / k);
  std::printf("%-10s %4ld %6.3f %6ld %-14s | %.2e (%.1e) | %.4f (%.4f)\n", law_name(c.law), long(c.d), c.sigma,
              long(c.n), method, sm, sh, cm, ch);
  char buf[224];
  std::snprintf(buf, sizeof buf,
                "%s{\"law\":\"%s\",\"d\":%ld,\"sigma\":%g,\"n\":%ld,\"method\":\"%s\",\"sin2\":%.6g,\"captured\":%.6g}",
                json.back() == '[' ? "" : ",", law_name(c.law), long(c.d), c.sigma, long(c.n), method, sm, cm);
  json += buf;
}

// All trials of one (law, d, σ) at every n in `sizes` (each a prefix of the trial's stream).
void run_panel(Law law, Index d, double sigma, const std::vector<Index>& sizes, int trials, std::string& json) {
  int scaled = 0;
  std::vector<std::vector<std::vector<Score>>> all(sizes.size(), std::vector<std::vector<Score>>(kMethods.size()));
  for (int t = 0; t < trials; ++t) {
    const Spiked s = spiked_rows(law, d, sizes.back(), sigma, 7000 + std::uint64_t(t));
    scaled += s.scaled;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const MatrixXd rows = s.rows.topRows(sizes[i]);
      dpstream::stream::CovarianceAccumulator exact(d);
      exact.update_block(rows);
      const Trial trial{rows, exact, s.l, 100 * std::uint64_t(t) + 10 * i};
      for (std::size_t m = 0; m < kMethods.size(); ++m) all[i][m].push_back(score(kMethods[m].run(trial), s.u, sigma));
    }
  }
  for (std::size_t i = 0; i < sizes.size(); ++i)
    for (std::size_t m = 0; m < kMethods.size(); ++m)
      report({law, d, sigma, sizes[i]}, kMethods[m].name, all[i][m], json);
  std::printf("%s d=%ld sigma %.3f: L = %.4g, rows scaled to L: %d of %ld\n", law_name(law), long(d), sigma,
              norm_bound(law, d, sigma), scaled, long(trials) * long(sizes.back()));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::stoi(argv[1]) : 50;
  const Index largest = argc > 2 ? std::stol(argv[2]) : 16000;
  const Index dimension_panel_n = argc > 3 ? std::stol(argv[3]) : 4000;
  std::vector<Index> sizes;
  for (Index n = 500; n <= largest; n *= 2) sizes.push_back(n);
  std::printf("k=%ld lambda1=%g lambda2=%g eps=%g delta=%g trials=%d; mean (95%% half-width)\n", long(kRank), kLambda1,
              kLambda2, kTarget.epsilon(), kTarget.delta(), trials);
  std::printf("%-10s %4s %6s %6s %-14s | %-18s | %-17s\n", "law", "d", "sigma", "n", "method", "sin^2 theta",
              "captured variance");
  std::string json = "{\"bench\":\"spiked_k2_replication\",\"trials\":" + std::to_string(trials) + ",\"rows\":[";
  for (const Law law : {Law::rademacher, Law::gaussian})
    for (const double sigma : {0.025, 0.001}) run_panel(law, 200, sigma, sizes, trials, json);
  if (dimension_panel_n > 0)
    for (const Law law : {Law::rademacher, Law::gaussian})
      for (const Index d : {50, 100, 200, 400, 800}) run_panel(law, d, 0.025, {dimension_panel_n}, trials, json);
  std::printf("%s]}\n", json.c_str());
  return 0;
}
