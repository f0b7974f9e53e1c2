// The online-PCA session's ingest() — what Python's OnlinePCA.partial_fit runs — against the Gram
// alone, in the same run. Ingest: rows in chunks of B through session::OnlinePcaSession::ingest
// (unthreaded; the regret meter on, no baseline: Python's defaults; tree noise, seeded; k = 10).
// Gram: the same chunks added up by a stream::CovarianceAccumulator, the one GEMM every row needs.
// The figure is ingest's time over the Gram's: 1 would be ingestion at GEMM speed; above it are the
// noise, the learner's refresh and gains, the meter's checks and a second Gram where one is made.
// The session's construction (calibration, buffers) and finish() (the final OPT) are not timed.
//
// Rows: Gaussian with a spike on the first 10 coordinates (seed 1), each scaled to norm 1 − 1e-12
// (under the bound 1), made before anything is timed.
// Rounds: Gram and ingest passes alternate (Gram, ingest, Gram, …; --rounds R ingest passes between
// R + 1 Gram passes); each ingest time is divided by the mean of the two Gram times beside it, so
// that the machine's drift cancels; the figure is the median of the R ratios.
//
//   bench_session_ingest [--d D] [--blocks N] [--block B] [--rounds R]
//   (without --d: d = 784 with 48 blocks and d = 4096 with 6, B = 128)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "dpstream/session/online_pca_session.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace {

using namespace dpstream;
using Clock = std::chrono::steady_clock;

Eigen::MatrixXd spiked_rows(Eigen::Index n, Eigen::Index d) {
  std::mt19937_64 gen(1);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd x(n, d);
  for (Eigen::Index j = 0; j < d; ++j)
    for (Eigen::Index i = 0; i < n; ++i) x(i, j) = (j < 10 ? 4.0 : 1.0) * normal(gen);
  x.rowwise().normalize();
  return x * (1.0 - 1e-12);
}

session::OnlinePcaOptions options(Eigen::Index rows, std::uint64_t block) {
  session::OnlinePcaOptions o;
  o.k = 10;
  o.block = block;
  o.known_rows = static_cast<std::uint64_t>(rows);
  o.threaded = false;
  o.evaluation = session::OnlinePcaOptions::Evaluation::meter_only;
  o.curve_every = 0;
  o.stream.strategy = stream::parse_noise_strategy("tree");  // Python's default
  o.stream.privacy.target = privacy::EpsDelta(1.0, 1e-6);
  o.stream.privacy.noise.seed = 1;
  return o;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double gram_seconds(const Eigen::MatrixXd& x, std::uint64_t block) {
  stream::CovarianceAccumulator sum(x.cols());
  const auto start = Clock::now();
  for (Eigen::Index i = 0; i < x.rows(); i += static_cast<Eigen::Index>(block))
    sum.update_block(x.middleRows(i, std::min<Eigen::Index>(static_cast<Eigen::Index>(block), x.rows() - i)));
  const double s = seconds_since(start);
  if (!(sum.diagonal().sum() > 0)) std::abort();  // keeps the work
  return s;
}

double ingest_seconds(const Eigen::MatrixXd& x, std::uint64_t block) {
  session::OnlinePcaSession s(x.cols(), options(x.rows(), block));
  const auto start = Clock::now();
  for (Eigen::Index i = 0; i < x.rows(); i += static_cast<Eigen::Index>(block))
    s.ingest(x.middleRows(i, std::min<Eigen::Index>(static_cast<Eigen::Index>(block), x.rows() - i)));
  const double seconds = seconds_since(start);
  if (s.meter().rows() != static_cast<std::uint64_t>(x.rows())) std::abort();
  return seconds;
}

void run(Eigen::Index d, Eigen::Index blocks, std::uint64_t block, int rounds) {
  const Eigen::MatrixXd x = spiked_rows(blocks * static_cast<Eigen::Index>(block), d);
  std::vector<double> grams{gram_seconds(x, block)}, ingests, ratios;
  for (int r = 0; r < rounds; ++r) {
    ingests.push_back(ingest_seconds(x, block));
    grams.push_back(gram_seconds(x, block));
    ratios.push_back(ingests.back() / (0.5 * (grams[grams.size() - 2] + grams.back())));
  }
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  const double rows = static_cast<double>(x.rows());
  const double gram = *std::min_element(grams.begin(), grams.end());
  const double ingest = *std::min_element(ingests.begin(), ingests.end());
  std::printf("d = %ld, %ld blocks of %lu rows: Gram %.0f rows/s, ingest %.0f rows/s (fastest passes); "
              "ingest / Gram time %.2f (median of %d rounds; min %.2f, max %.2f)\n",
              static_cast<long>(d), static_cast<long>(blocks), static_cast<unsigned long>(block), rows / gram,
              rows / ingest, median, rounds, sorted.front(), sorted.back());
  std::printf("{\"d\":%ld,\"rows\":%.0f,\"block\":%lu,\"gram_rows_per_s\":%.1f,"
              "\"ingest_rows_per_s\":%.1f,\"ingest_over_gram\":%.3f}\n",
              static_cast<long>(d), rows, static_cast<unsigned long>(block), rows / gram, rows / ingest, median);
}

}  // namespace

int main(int argc, char** argv) {
  long d = 0, blocks = 0, block = 128;
  int rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--d")) d = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--blocks")) blocks = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--block")) block = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_session_ingest [--d D] [--blocks N] [--block B] [--rounds R]\n");
      return 2;
    }
  }
  if (block < 1 || rounds < 1 || d < 0 || blocks < 0) {
    std::fprintf(stderr, "bench_session_ingest: --block and --rounds must be >= 1\n");
    return 2;
  }
  if (d > 0) {
    run(d, blocks > 0 ? blocks : 8, static_cast<std::uint64_t>(block), rounds);
  } else {
    run(784, blocks > 0 ? blocks : 48, static_cast<std::uint64_t>(block), rounds);
    run(4096, blocks > 0 ? blocks : 6, static_cast<std::uint64_t>(block), rounds);
  }
  return 0;
}
