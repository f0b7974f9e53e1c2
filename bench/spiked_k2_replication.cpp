// The synthetic experiment of Düngler & Sanyal ("An iterative algorithm for differentially private
// k-PCA with adaptive noise", NeurIPS 2025, Figure 1): k = 2, d = 200, λ₁ = 10, ε = 1, δ = 0.01,
// σ ∈ {0.025, 0.001}, 50 trials, against input perturbation (Analyze Gauss), output perturbation and
// the DP power method — run with dpstream's estimators. Their full text was not available when this
// was written, only the figure's caption: the data model below is this program's reading, stated so
// that it can be checked against the paper (docs/streaming-oja.md lists what is assumed).
//
// Data (per trial, seeded): U = [u₁ u₂] a random orthonormal d × 2; row x = √λ₁·s₁·u₁ + √λ₂·s₂·u₂ + σ·z
// with s_j = ±1 (Rademacher) and z ~ N(0, I_d), so E[xxᵀ] = λ₁u₁u₁ᵀ + λ₂u₂u₂ᵀ + σ²I, λ₂ = λ₁/2
// (assumed), and σ is each row's randomness off the spike. The row norm bound is public, from the
// model: L = √(λ₁ + λ₂) + σ·√(d + 6√(2d)) (the triangle inequality, with z's squared norm six
// standard deviations up); a row above it is scaled to L and counted (none expected).
//
// Methods (each (ε, δ) = (1, 0.01) on the n rows, each row a privacy unit):
//  * streaming-oja: StreamingPrivateOja, k = 2, its defaults, horizon n declared (zero-out-row).
//  * gauss (DP-Gauss-1, input perturbation): GaussianPca, Analyze Gauss (add/remove row).
//  * output (DP-Gauss-2, output perturbation): the exact top-2 projector P of Σxxᵀ/n plus symmetric
//    Gaussian noise, then its top 2. Sensitivity from Davis–Kahan (Yu, Wang & Samworth 2015):
//    ‖P − P'‖_F ≤ 2√2·‖xxᵀ/n‖_F / gap ≤ 2√2·L²/(n·gap), with gap = λ₂ − σ², the MODEL's gap taken as
//    public. A bench baseline, not a library mechanism: its privacy holds only when the rows' own gap
//    is at least that (which the model makes likely, not certain).
//  * power (DP power method): NoisyPowerMethod, k = 2, 5 rounds (dpstream-pca's default), add/remove.
// Utility, per trial: sin²θ = ‖(I − UUᵀ)V‖_F²/k for the released V (0 perfect, 1 orthogonal), and
// the population variance captured, tr(VᵀΣV)/tr(UᵀΣU). Printed: mean and a 95% interval half-width
// (1.96·sd/√trials) per method, n, σ. Arguments (optional): trials (50), the largest n (16000).
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "dpstream/privacy/budget.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/symmetric_gaussian.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
namespace pca = dpstream::pca;
namespace privacy = dpstream::privacy;

constexpr Index kDim = 200, kRank = 2;
constexpr double kLambda1 = 10.0, kLambda2 = 5.0;
const privacy::EpsDelta kTarget{1.0, 0.01};

struct Spiked {
  MatrixXd u;     // d × 2, the planted directions
  MatrixXd rows;  // n × d
  double l;       // the public row norm bound
  int scaled;     // rows scaled down to l (counted, expected 0)
};

Spiked spiked_rows(Index n, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::bernoulli_distribution coin;
  MatrixXd g(kDim, kRank);
  for (Index i = 0; i < g.size(); ++i) g.data()[i] = normal(rng);
  Spiked s{Eigen::HouseholderQR<MatrixXd>(g).householderQ() * MatrixXd::Identity(kDim, kRank), MatrixXd(n, kDim),
           std::sqrt(kLambda1 + kLambda2) + sigma * std::sqrt(double(kDim) + 6.0 * std::sqrt(2.0 * kDim)), 0};
  for (Index i = 0; i < n; ++i) {
    VectorXd x(kDim);
    for (Index j = 0; j < kDim; ++j) x[j] = sigma * normal(rng);
    x += (coin(rng) ? 1.0 : -1.0) * std::sqrt(kLambda1) * s.u.col(0);
    x += (coin(rng) ? 1.0 : -1.0) * std::sqrt(kLambda2) * s.u.col(1);
    const double norm = x.norm();
    if (norm > s.l) x *= s.l * (1.0 - 1e-12) / norm, ++s.scaled;  // below L after round-off
    s.rows.row(i) = x.transpose();
  }
  return s;
}

MatrixXd top_k(const MatrixXd& symmetric) {
  const Eigen::SelfAdjointEigenSolver<MatrixXd> eig(symmetric);  // ascending
  return eig.eigenvectors().rightCols(kRank);
}

// The output-perturbation baseline (header): P + E, E symmetric Gaussian for ‖ΔP‖_F ≤ 2√2·L²/(n·gap).
MatrixXd output_perturbation(const MatrixXd& covariance, double n, double l, double gap, std::uint64_t seed) {
  const MatrixXd v = top_k(covariance / n);
  privacy::SymmetricGaussianMechanism::Options m;
  m.privacy.target = kTarget;
  // covariance_sensitivity(add_remove_row, L') = L'², so L' = √Δ gives the mechanism sensitivity Δ.
  m.privacy.row_norm_bound = std::sqrt(2.0 * std::sqrt(2.0) * l * l / (n * gap));
  privacy::SeededNoiseSource noise(seed);
  return top_k(privacy::SymmetricGaussianMechanism(m).release(v * v.transpose(), noise, privacy::Budget::unaccounted("a benchmark: nothing is published")));
}

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

constexpr int kMethods = 4;
const char* const kNames[kMethods] = {"streaming-oja", "gauss (input)", "output", "power"};

std::vector<Score> run_trial(const Spiked& s, Index n, double sigma, std::uint64_t seed) {
  const MatrixXd rows = s.rows.topRows(n);
  std::vector<Score> out;
  pca::StreamingPrivateOjaOptions o;
  o.k = kRank;
  o.horizon = std::uint64_t(n);
  o.privacy.row_norm_bound = s.l;
  o.privacy.target = kTarget;
  o.privacy.noise.seed = seed;
  pca::StreamingPrivateOja oja(kDim, o, privacy::Budget::unaccounted("a benchmark: nothing is published"));
  oja.update_block(rows);
  oja.flush();
  out.push_back(score(oja.basis(), s.u, sigma));
  dpstream::stream::CovarianceAccumulator exact(kDim);
  exact.update_block(rows);
  pca::GaussianPcaOptions g;
  g.k = kRank;
  g.mechanism.privacy.target = kTarget;
  g.mechanism.privacy.row_norm_bound = s.l;
  g.mechanism.privacy.noise.seed = seed + 1;
  out.push_back(score(pca::GaussianPca(kDim, g).release(exact, privacy::Budget::unaccounted("a benchmark: nothing is published")).subspace.vectors, s.u, sigma));
  out.push_back(score(output_perturbation(exact.matrix(), double(n), s.l, kLambda2 - sigma * sigma, seed + 2), s.u,
                      sigma));
  pca::NoisyPowerMethodOptions p;
  p.k = kRank;
  p.iterations = 5;
  p.release_values = false;
  p.privacy.target = kTarget;
  p.privacy.row_norm_bound = s.l;
  p.privacy.noise.seed = seed + 3;
  out.push_back(score(pca::NoisyPowerMethod(kDim, p).run(exact, privacy::Budget::unaccounted("a benchmark: nothing is published")).vectors, s.u, sigma));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::stoi(argv[1]) : 50;
  const Index largest = argc > 2 ? std::stol(argv[2]) : 16000;
  std::vector<Index> sizes;
  for (Index n = 500; n <= largest; n *= 2) sizes.push_back(n);
  std::printf("k=%ld d=%ld lambda1=%g lambda2=%g eps=%g delta=%g trials=%d; mean (95%% half-width)\n", long(kRank),
              long(kDim), kLambda1, kLambda2, kTarget.epsilon(), kTarget.delta(), trials);
  std::printf("%6s %6s %-14s | %-18s | %-17s\n", "sigma", "n", "method", "sin^2 theta", "captured variance");
  std::string json = "{\"bench\":\"spiked_k2_replication\",\"trials\":" + std::to_string(trials) + ",\"rows\":[";
  for (const double sigma : {0.025, 0.001}) {
    int scaled = 0;
    std::vector<std::vector<std::vector<Score>>> all(sizes.size(), std::vector<std::vector<Score>>(kMethods));
    for (int t = 0; t < trials; ++t) {
      const Spiked s = spiked_rows(sizes.back(), sigma, 7000 + std::uint64_t(t));
      scaled += s.scaled;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const std::vector<Score> r = run_trial(s, sizes[i], sigma, 100 * std::uint64_t(t) + 10 * i);
        for (int m = 0; m < kMethods; ++m) all[i][m].push_back(r[m]);
      }
    }
    for (std::size_t i = 0; i < sizes.size(); ++i)
      for (int m = 0; m < kMethods; ++m) {
        double s1 = 0, s2 = 0, c1 = 0, c2 = 0;
        for (const Score& x : all[i][m]) s1 += x.sin2, s2 += x.sin2 * x.sin2, c1 += x.captured, c2 += x.captured * x.captured;
        const double k = trials, sm = s1 / k, cm = c1 / k;
        const double sh = 1.96 * std::sqrt(std::max(0.0, s2 / k - sm * sm) / k);
        const double ch = 1.96 * std::sqrt(std::max(0.0, c2 / k - cm * cm) / k);
        std::printf("%6.3f %6ld %-14s | %.2e (%.1e) | %.4f (%.4f)\n", sigma, long(sizes[i]), kNames[m], sm, sh, cm, ch);
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s{\"sigma\":%g,\"n\":%ld,\"method\":\"%s\",\"sin2\":%.5f,\"captured\":%.5f}",
                      json.back() == '[' ? "" : ",", sigma, long(sizes[i]), kNames[m], sm, cm);
        json += buf;
      }
    std::printf("sigma %.3f: rows scaled to L: %d\n", sigma, scaled);
    std::fflush(stdout);
  }
  std::printf("%s]}\n", json.c_str());
  return 0;
}
