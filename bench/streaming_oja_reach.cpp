// Where one pass of StreamingPrivateOja reaches Analyze Gauss (GaussianPca) and where it does not:
// generated spiked streams (SyntheticRowSource: spikes share·0.5^j, j < 10, on an isotropic bulk,
// rows scaled into the unit ball), d ∈ {100, 784}, n = 10·d … 100·d, k ∈ {1, 5, 10}, ε = 1, δ = 1e-6,
// both methods with their defaults (the horizon declared, as dpstream-pca does). Per configuration:
// the captured variance of each (Σ‖Wᵀx‖² over the rows, as a share of the exact top k's), their
// ratio (the bar: ≥ 0.9), the eigengap λ_k − λ_{k+1} of the rows' second moment (a share of
// L² = 1), the smallest gap the pre-run estimate says one pass resolves (resolvable_gap, tan θ ≤
// 0.3) and the one pass's last clip C (a share of L², mean over seeds). Arguments (optional): seeds per configuration (2), the largest n multiple (100), the one pass's
// scale_share (negative, the default: derived; 0: the fixed clip C = L²), the most rows a configuration may hold in memory
// (100,000: n·d doubles are kept for the exact and the Analyze Gauss figures), one d only (0: both;
// any other d runs that d alone), a fixed clip C as a share of L² (0: none; with scale_share 0, the
// pass runs at that C throughout — an oracle clip chosen off the data, to measure the one-pass class's
// bound of docs/streaming-oja.md, not a private setting), the private clip's quantile γ (0: the
// library's default).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/streaming_oja_plan.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "spiked_streams.hpp"

namespace {

using Eigen::Index;
using Eigen::MatrixXd;

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::stoi(argv[1]) : 2;
  const int max_multiple = argc > 2 ? std::stoi(argv[2]) : 100;
  // < 0 (the default): the library's derived share.
  const double share_arg = argc > 3 ? std::stod(argv[3]) : -1.0;
  const std::optional<double> scale_share = share_arg < 0 ? std::nullopt : std::optional<double>(share_arg);
  const std::uint64_t max_rows = argc > 4 ? std::stoull(argv[4]) : 100000;
  const Index only_d = argc > 5 ? std::stol(argv[5]) : 0;
  const double fixed_clip = argc > 6 ? std::stod(argv[6]) : 0.0;
  const double clip_quantile = argc > 7 ? std::stod(argv[7]) : 0.0;
  std::printf("one pass: scale_share %s", scale_share ? std::to_string(*scale_share).c_str() : "derived (default)");
  if (fixed_clip > 0) std::printf(", fixed clip %.3f L² (an oracle choice, not private)", fixed_clip);
  if (clip_quantile > 0) std::printf(", clip quantile %.3f", clip_quantile);
  std::printf("\n");
  std::printf("%5s %7s %3s %5s | %8s %8s %6s | %7s %7s %7s | %s\n", "d", "n", "k", "share", "gap", "reach", "clip", "oja",
              "gauss", "ratio", "ratios per seed");
  const std::vector<Index> dims = only_d != 0 ? std::vector<Index>{only_d} : std::vector<Index>{100, 784};
  for (const Index d : dims) {
    for (const int multiple : {10, 30, 100, 300, 1000}) {
      const auto n = static_cast<std::uint64_t>(multiple * d);
      if (multiple > max_multiple || n > max_rows) continue;
      for (const double share : {0.1, 0.3})
        for (const Index k : {Index(1), Index(5), Index(10)}) {
          double oja_sum = 0, gauss_sum = 0, gap = 0, reach = 0, last_clip_sum = 0;
          std::string per_seed;
          for (int s = 1; s <= seeds; ++s) {
            const MatrixXd rows = bench_streams::spiked_unit_rows(d, n, share, 1000 + std::uint64_t(s));
            const MatrixXd c = rows.transpose() * rows;
            const Eigen::SelfAdjointEigenSolver<MatrixXd> eig(c);
            const double best = eig.eigenvalues().tail(k).sum();
            gap = (eig.eigenvalues()(d - k) - eig.eigenvalues()(d - k - 1)) / double(n);
            dpstream::pca::StreamingPrivateOjaOptions o;
            o.k = k;
            o.horizon = n;
            o.privacy.noise.seed = std::uint64_t(s);
            o.scale_share = scale_share;
            o.initial_clip = fixed_clip;
            if (clip_quantile > 0) o.clip_quantile = clip_quantile;
            dpstream::pca::StreamingPrivateOja oja(d, o, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
            double last_clip = 0;  // the last step's clip, a share of L² = 1
            oja.subscribe([&last_clip](const dpstream::pca::StreamingPrivateOja::Release& r) { last_clip = r.clip; });
            oja.update_block(rows);
            oja.flush();
            reach = dpstream::pca::resolvable_gap(n, d, oja.unit_sigma(), o.batch_growth, 0.3, oja.scale_share()).one_pass;
            dpstream::pca::GaussianPcaOptions g;
            g.k = k;
            g.mechanism.privacy.noise.seed = 100 + std::uint64_t(s);
            const MatrixXd w = dpstream::pca::GaussianPca(d, g).release(rows, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published")).subspace.vectors;
            const double a = (rows * oja.basis()).squaredNorm() / best, b = (rows * w).squaredNorm() / best;
            oja_sum += a, gauss_sum += b;
            char buf[32];
            std::snprintf(buf, sizeof buf, " %.3f", a / b);
            per_seed += buf;
            last_clip_sum += last_clip;
          }
          std::printf("%5ld %7llu %3ld %5.2f | %8.4f %8.4f %6.3f | %7.4f %7.4f %7.3f |%s\n", long(d),
                      (unsigned long long)n, long(k), share, gap, reach, last_clip_sum / seeds, oja_sum / seeds,
                      gauss_sum / seeds, oja_sum / gauss_sum, per_seed.c_str());
          std::fflush(stdout);
        }
    }
  }
  return 0;
}
