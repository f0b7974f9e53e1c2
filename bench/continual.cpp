// Continual release of a covariance (ContinualSum<CovarianceAccumulator>): ingestion and release
// rates, each judged against a limit measured in the same run.
//
//  * Ingestion (no release inside the timed loop): rows/s fed one at a time and in blocks of 256.
//    Its FLOP rate counts the useful work of a symmetric rank-k update, d(d+1) flops a row (one
//    multiply-add per upper-triangle entry), and is divided by the FLOP rate of a dense Eigen GEMM
//    C += XᵀX of the same d and 256 rows (2·256·d² flops), measured here. Acceptance: block
//    ingestion at d = 784 ≥ 0.5 of the GEMM rate.
//  * Releases with the secure source: every row (B = 1) and every 256 rows. The limit for releasing
//    every row is drawing one node's d(d+1)/2 Gaussians (a plain tree draws one node a step), timed
//    here with the same source. Acceptance: ≥ 0.5 of that bound at d = 64.
//  * Closed forms at T = 2^16, ε = 1, δ = 1e-6, Δ = 1: per-node σ of `tight` vs `paper`, and the
//    mean per-entry variance over the 2^16 releases of the plain tree, Honaker, and paper.
//    Acceptance: tight σ ≤ 0.3 × paper σ; Honaker mean variance ≤ 0.6 × the plain tree's.
//
// Timing: best of 3 repeats of at least 0.3 s each (the machine is shared and noisy).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/privacy/calibration.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "dpstream/stream/tree_noise.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using dpstream::stream::ContinualCovariance;
using dpstream::stream::ContinualSumOptions;

constexpr double kMinSeconds = 0.3;
constexpr int kRepeats = 3;
constexpr Eigen::Index kBlock = 256;
double checksum = 0;

// Best rate (units/s) of `run`, which does some work and returns how many units it did.
double best_rate(const std::function<double()>& run) {
  run();  // warm-up
  double best = 0;
  for (int r = 0; r < kRepeats; ++r) {
    double units = 0, elapsed = 0;
    const auto start = Clock::now();
    do {
      units += run();
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < kMinSeconds);
    best = std::max(best, units / elapsed);
  }
  return best;
}

// Gaussian rows scaled to norm 4, then clipped to the unit ball by RowGuard (which guarantees ‖a‖ ≤ 1
// exactly; dividing by the norm can leave it an ulp above).
Eigen::MatrixXd unit_rows(Eigen::Index n, Eigen::Index d) {
  std::mt19937_64 gen(17);
  std::normal_distribution<double> normal;
  dpstream::stream::RowGuard guard({d, 1.0, dpstream::stream::OverNormPolicy::clip});
  Eigen::MatrixXd rows(n, d);
  Eigen::VectorXd row(d);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) row(j) = normal(gen);
    row *= 4.0 / row.norm();
    guard.admit(row);
    rows.row(i) = row.transpose();
  }
  return rows;
}

struct Figures {
  Eigen::Index d;
  double single_rows_per_s, block_rows_per_s, gemm_flops, single_over_gemm, block_over_gemm;
  double release_every_row_per_s, release_every_256_per_s, noise_bound_per_s, every_row_over_bound;
};

Figures measure(Eigen::Index d) {
  Figures f{};
  f.d = d;
  const Eigen::MatrixXd rows = unit_rows(kBlock, d);
  const double flops_per_row = static_cast<double>(d) * static_cast<double>(d + 1);

  // Ingestion: an unbounded stream whose block never completes inside the loop (no release).
  ContinualSumOptions ingest;
  ingest.block_rows = std::uint64_t{1} << 62;
  ContinualCovariance single(d, ingest, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published")), blocks(d, ingest, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
  f.single_rows_per_s = best_rate([&] {
    for (Eigen::Index i = 0; i < kBlock; ++i) single.update(rows.row(i).transpose());
    return static_cast<double>(kBlock);
  });
  f.block_rows_per_s = best_rate([&] {
    blocks.update_block(rows);
    return static_cast<double>(kBlock);
  });
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(d, d);
  f.gemm_flops = best_rate([&] {
    c.noalias() += rows.transpose() * rows;
    return 2.0 * static_cast<double>(kBlock) * static_cast<double>(d) * static_cast<double>(d);
  });
  checksum += c(0, 0);
  f.single_over_gemm = f.single_rows_per_s * flops_per_row / f.gemm_flops;
  f.block_over_gemm = f.block_rows_per_s * flops_per_row / f.gemm_flops;

  // Releases, secure source (the default), unbounded so the loop never meets a horizon.
  ContinualSumOptions every_row;
  every_row.block_rows = 1;
  ContinualCovariance releasing(d, every_row, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
  Eigen::Index next = 0;
  f.release_every_row_per_s = best_rate([&] {
    for (int i = 0; i < 16; ++i) releasing.update(rows.row(next++ % kBlock).transpose());
    checksum += releasing.noisy_prefix()(0, 0);
    return 16.0;
  });
  ContinualSumOptions every_block;
  every_block.block_rows = kBlock;
  ContinualCovariance releasing_blocks(d, every_block, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
  f.release_every_256_per_s = best_rate([&] {
    releasing_blocks.update_block(rows);
    checksum += releasing_blocks.noisy_prefix()(0, 0);
    return 1.0;
  });
  dpstream::privacy::SecureNoiseSource source;
  std::vector<double> node(static_cast<std::size_t>(d * (d + 1) / 2));
  f.noise_bound_per_s = best_rate([&] {
    source.fill_gaussian(node, 1.0);
    checksum += node[0];
    return 1.0;
  });
  f.every_row_over_bound = f.release_every_row_per_s / f.noise_bound_per_s;
  return f;
}

}  // namespace

int main() {
  using namespace dpstream;
  std::vector<Figures> all;
  std::printf("%5s %12s %12s %10s %10s %14s %14s %12s %10s\n", "d", "rows/s 1", "rows/s blk", "1/gemm",
              "blk/gemm", "release/s B=1", "release/s 256", "bound/s", "B=1/bound");
  for (Eigen::Index d : {64, 256, 784}) {
    const Figures f = measure(d);
    all.push_back(f);
    std::printf("%5ld %12.4g %12.4g %10.3f %10.3f %14.4g %14.4g %12.4g %10.3f\n", static_cast<long>(d),
                f.single_rows_per_s, f.block_rows_per_s, f.single_over_gemm, f.block_over_gemm,
                f.release_every_row_per_s, f.release_every_256_per_s, f.noise_bound_per_s, f.every_row_over_bound);
    std::fflush(stdout);
  }

  // Closed forms at T = 2^16.
  const std::uint64_t horizon = 65536;
  const privacy::EpsDelta target(1.0, 1e-6);
  const auto levels = static_cast<long>(stream::tree_levels(horizon));
  const double sigma_tight = privacy::tree_node_sigma(levels, 1.0, target, privacy::Calibration::tight);
  const double sigma_paper = privacy::tree_node_sigma(levels, 1.0, target, privacy::Calibration::paper);
  stream::TreeNoise tree(stream::TreeKind::plain, horizon, sigma_tight, 1.0, 1);
  stream::TreeNoise honaker(stream::TreeKind::honaker, horizon, sigma_tight, 1.0, 1);
  stream::TreeNoise paper(stream::TreeKind::plain, horizon, sigma_paper, 1.0, 1);
  double tree_mean = 0, honaker_mean = 0, paper_mean = 0;
  for (std::uint64_t t = 1; t <= horizon; ++t) {
    tree_mean += tree.release_variance(t) / horizon;
    honaker_mean += honaker.release_variance(t) / horizon;
    paper_mean += paper.release_variance(t) / horizon;
  }
  std::printf("T = 65536 (17 levels), eps = 1, delta = 1e-6: node sigma tight %.4g, paper %.4g (ratio %.3f)\n",
              sigma_tight, sigma_paper, sigma_tight / sigma_paper);
  std::printf("mean per-entry variance: tree %.4g, honaker %.4g (ratio %.3f), paper %.4g\n", tree_mean,
              honaker_mean, honaker_mean / tree_mean, paper_mean);
  std::printf("checksum %.6g\n", checksum);

  std::string json = "{\"bench\":\"continual\"";
  char buf[256];
  for (const Figures& f : all) {
    std::snprintf(buf, sizeof buf,
                  ",\"ingest_single_rows_per_s_d%ld\":%.4g,\"ingest_block_rows_per_s_d%ld\":%.4g,"
                  "\"ingest_single_over_gemm_d%ld\":%.4f,\"ingest_block_over_gemm_d%ld\":%.4f",
                  static_cast<long>(f.d), f.single_rows_per_s, static_cast<long>(f.d), f.block_rows_per_s,
                  static_cast<long>(f.d), f.single_over_gemm, static_cast<long>(f.d), f.block_over_gemm);
    json += buf;
    std::snprintf(buf, sizeof buf,
                  ",\"release_every_row_per_s_d%ld\":%.4g,\"release_every_256_per_s_d%ld\":%.4g,"
                  "\"release_every_row_over_noise_bound_d%ld\":%.4f",
                  static_cast<long>(f.d), f.release_every_row_per_s, static_cast<long>(f.d),
                  f.release_every_256_per_s, static_cast<long>(f.d), f.every_row_over_bound);
    json += buf;
  }
  std::snprintf(buf, sizeof buf,
                ",\"tight_over_paper_sigma_T65536\":%.4f,\"honaker_over_tree_mean_variance_T65536\":%.4f,"
                "\"mean_variance_tree_T65536\":%.4g,\"mean_variance_honaker_T65536\":%.4g,\"mean_variance_paper_T65536\":%.4g}",
                sigma_tight / sigma_paper, honaker_mean / tree_mean, tree_mean, honaker_mean, paper_mean);
  json += buf;
  std::printf("%s\n", json.c_str());
  return 0;
}
