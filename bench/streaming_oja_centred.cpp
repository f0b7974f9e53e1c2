// StreamingPrivateOja with centred updates (centred_updates: each update clipped around a centre
// from earlier releases, noise scaled to the private radius of ‖g − c‖) against the default (the
// private quantile clip of ‖g‖) and Analyze Gauss (GaussianPca), ε = 1, δ = 1e-6, the horizon
// declared, seeds 1..S. Captured variance Σ‖Vᵀx‖² as a share of the exact top k's; "ratio" is one
// pass / Analyze Gauss, the mean over seeds. Regimes (argument 1):
//  low    — spikes and small isotropic noise: x = Σ√λ_j·s_j·u_j + σ·z, s_j = ±1, z ~ N(0, I_d),
//           d = 200, σ ∈ {0.025, 0.001}, n ∈ {1000, 4000}: one spike λ = 1 (k = 1, 2) and Düngler &
//           Sanyal's two, λ = 10, 5 (k = 2); L = √Σλ + σ·√(d + 6√(2d)) (no row exceeds it: checked).
//           Also sin²θ = ‖(I − VVᵀ)U‖²/j of the j spikes, where captured variance saturates.
//  spiked — bench_streaming_oja_reach's streams (spikes share·2^{−j}, isotropic bulk, unit ball),
//           d ∈ {100, 784}, n ∈ {10·d, 30·d}, share ∈ {0.1, 0.3}, k = 1.
//  fmnist — an IDX file's rows scaled to unit norm (argument 3; the first `limit` rows, argument 4,
//           0: all), k = 1 and 10.
// Also the last step's r/C (radius over the default's clip) and the passes' wall-time ratio on/off.
// Argument 2: seeds (3).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "dpstream/io/row_source.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "spiked_streams.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;
namespace pca = dpstream::pca;
namespace privacy = dpstream::privacy;

privacy::Budget unaccounted() { return privacy::Budget::unaccounted("a benchmark: nothing is published"); }

// The pass's estimate; `last_clip` receives the clip (C, or the radius r when centred) of its last step.
MatrixXd one_pass(const MatrixXd& rows, Index k, double bound, bool centred, std::uint64_t seed, double& last_clip) {
  pca::StreamingPrivateOjaOptions o;
  o.k = k;
  o.horizon = std::uint64_t(rows.rows());
  o.privacy.noise.seed = seed;
  o.privacy.row_norm_bound = bound;
  o.centred_updates = centred;
  pca::StreamingPrivateOja oja(rows.cols(), o, unaccounted());
  oja.subscribe([&](const pca::StreamingPrivateOja::Release& r) { last_clip = r.clip; });
  oja.update_block(rows);
  oja.flush();
  return oja.basis();
}

MatrixXd analyze_gauss(const MatrixXd& rows, Index k, double bound, std::uint64_t seed) {
  pca::GaussianPcaOptions g;
  g.k = k;
  g.mechanism.privacy.noise.seed = 100 + seed;
  g.mechanism.privacy.row_norm_bound = bound;
  return pca::GaussianPca(rows.cols(), g).release(rows, unaccounted()).subspace.vectors;
}

// One configuration: per seed the rows (make(seed)), both passes and Analyze Gauss; prints a line.
// "r/C": the last step's radius over the quantile clip's C, the ratio of their noise (mean over seeds).
template <class Make>
void run(const char* label, Index k, double bound, int seeds, Make make) {
  double off = 0, on = 0, gauss = 0, sin_off = 0, sin_on = 0, sin_gauss = 0, clip_ratio = 0;
  double seconds_off = 0, seconds_on = 0;  // the two passes' wall time, for their ratio
  auto timed = [](double& seconds, auto&& f) {
    const auto start = std::chrono::steady_clock::now();
    auto out = f();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  };
  std::string per_seed;
  for (int s = 1; s <= seeds; ++s) {
    MatrixXd u;  // the planted spikes (d × j), when known
    const MatrixXd rows = make(std::uint64_t(s), u);
    const Eigen::SelfAdjointEigenSolver<MatrixXd> eig(rows.transpose() * rows);
    const double best = eig.eigenvalues().tail(k).sum();
    double clip_off = 0, clip_on = 0;
    const MatrixXd v_off = timed(seconds_off, [&] { return one_pass(rows, k, bound, false, std::uint64_t(s), clip_off); });
    const MatrixXd v_on = timed(seconds_on, [&] { return one_pass(rows, k, bound, true, std::uint64_t(s), clip_on); });
    clip_ratio += clip_on / clip_off;
    const MatrixXd v_g = analyze_gauss(rows, k, bound, std::uint64_t(s));
    const double a = (rows * v_off).squaredNorm() / best, b = (rows * v_on).squaredNorm() / best,
                 c = (rows * v_g).squaredNorm() / best;
    off += a, on += b, gauss += c;
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.3f/%.3f", a / c, b / c);
    per_seed += buf;
    if (u.size() > 0) {  // sin²θ = ‖(I − VVᵀ)U‖_F²/(spikes)
      auto sin2 = [&](const MatrixXd& v) { return (u - v * (v.transpose() * u)).squaredNorm() / double(u.cols()); };
      sin_off += sin2(v_off), sin_on += sin2(v_on), sin_gauss += sin2(v_g);
    }
  }
  std::printf("%-34s k=%-2ld | gauss %.4f | off %.4f on %.4f | ratio off %.3f on %.3f | r/C %.3f | time on/off %.2f |%s",
              label, long(k), gauss / seeds, off / seeds, on / seeds, off / gauss, on / gauss, clip_ratio / seeds,
              seconds_on / seconds_off, per_seed.c_str());
  if (sin_gauss > 0)
    std::printf(" | sin2 gauss %.3g off %.3g on %.3g", sin_gauss / seeds, sin_off / seeds, sin_on / seeds);
  std::printf("\n");
  std::fflush(stdout);
}

// x = Σ_j √λ_j·s_j·u_j + σ·z (s_j = ±1, U random orthonormal per seed, z ~ N(0, I_d)), d = 200, and
// L = √Σλ_j + σ·√(d + 6√(2d)): one spike λ = 1 (k = 1, 2), and Düngler & Sanyal's two, λ = 10, 5 (k = 2).
void low_randomness(int seeds) {
  const Index d = 200;
  for (const double sigma : {0.025, 0.001})
    for (const std::vector<double>& spikes : {std::vector<double>{1.0}, std::vector<double>{10.0, 5.0}}) {
      double total = 0;
      for (double l : spikes) total += l;
      const double bound = std::sqrt(total) + sigma * std::sqrt(d + 6.0 * std::sqrt(2.0 * d));
      for (const std::uint64_t n : {1000ull, 4000ull})
        for (const Index k : {Index(1), Index(2)}) {
          if (Index(spikes.size()) > k) continue;
          auto make = [&](std::uint64_t seed, MatrixXd& u) {
            privacy::SeededNoiseSource noise(7000 + seed);
            MatrixXd g(d, Index(spikes.size()));
            noise.fill_gaussian(std::span<double>(g.data(), std::size_t(g.size())));
            u = Eigen::HouseholderQR<MatrixXd>(g).householderQ() * MatrixXd::Identity(d, g.cols());
            MatrixXd rows(Index(n), d);
            noise.fill_gaussian(std::span<double>(rows.data(), std::size_t(rows.size())), sigma);
            std::vector<double> sign(n * spikes.size());
            noise.fill_gaussian(std::span<double>(sign.data(), sign.size()));
            for (Index i = 0; i < Index(n); ++i) {
              for (std::size_t j = 0; j < spikes.size(); ++j)
                rows.row(i) += (sign[std::size_t(i) * spikes.size() + j] >= 0 ? 1.0 : -1.0) * std::sqrt(spikes[j]) *
                               u.col(Index(j)).transpose();
              if (rows.row(i).norm() > bound) std::printf("row %ld exceeds L\n", long(i));
            }
            return rows;
          };
          char label[64];
          std::snprintf(label, sizeof label, "low sigma=%g spikes=%zu n=%llu", sigma, spikes.size(),
                        (unsigned long long)n);
          run(label, k, bound, seeds, make);
        }
    }
}

void spiked(int seeds) {
  for (const Index d : {Index(100), Index(784)})
    for (const int multiple : {10, 30})
      for (const double share : {0.1, 0.3}) {
        const auto n = std::uint64_t(multiple * d);
        auto make = [&](std::uint64_t seed, MatrixXd&) {
          return bench_streams::spiked_unit_rows(d, n, share, 1000 + seed);
        };
        char label[64];
        std::snprintf(label, sizeof label, "spiked d=%ld n=%llu share=%.1f", long(d), (unsigned long long)n, share);
        run(label, 1, 1.0, seeds, make);
      }
}

void image_rows(int seeds, const std::string& path, long limit) {
  auto source = dpstream::io::open_row_source(path, dpstream::io::RowFormat::idx);
  dpstream::io::RowRecord record;
  std::vector<Eigen::VectorXd> read;
  while ((limit == 0 || long(read.size()) < limit) && source->next(record)) {
    const double norm = record.dense.norm();
    if (norm > 0) record.dense *= (1.0 - 1e-12) / norm;  // under 1 after round-off
    read.push_back(record.dense);
  }
  MatrixXd rows(Index(read.size()), read.empty() ? 0 : read[0].size());
  for (Index i = 0; i < rows.rows(); ++i) rows.row(i) = read[std::size_t(i)].transpose();
  read.clear();
  char label[64];
  std::snprintf(label, sizeof label, "images %ld rows", long(rows.rows()));
  for (const Index k : {Index(1), Index(10)})
    run(label, k, 1.0, seeds, [&](std::uint64_t, MatrixXd&) { return rows; });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string regime = argc > 1 ? argv[1] : "low";
  const int seeds = argc > 2 ? std::stoi(argv[2]) : 3;
  if (regime == "low") low_randomness(seeds);
  else if (regime == "spiked") spiked(seeds);
  else if (regime == "fmnist")
    image_rows(seeds, argc > 3 ? argv[3] : "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz",
               argc > 4 ? std::stol(argv[4]) : 0);
  else {
    std::fprintf(stderr, "regime must be low, spiked or fmnist\n");
    return 2;
  }
  return 0;
}
