// StreamingPrivateOja's throughput against the rate at which its rows can be had at all, and its
// memory, on the two workloads of the streaming Oja issue:
//  * dense, d = 784: Fashion-MNIST train (if installed; else the generated spiked stream) read through
//    the IDX reader and scaled to unit norm. Limit: reading and scaling alone (rows/s); then reading +
//    scaling + update(), k = 1 and 10, B = 1875 (the tool's default for 60,000 rows).
//  * sparse, d = 100,000: SparseSyntheticRows (~50 non-zeros a row, four planted directions), 10⁶
//    rows. Limit: generating the rows alone; then generating + update_sparse(), k = 4, B = 20,000
//    with the private clip scale (scale_share 0.1; the second argument changes it). The covariance path is tried first and must
//    refuse with a memory message (ResourceLimit) before allocating; then a second pass of the same
//    seeded stream scores the estimate: captured = Σ‖Wᵀx‖² / Σ‖Uᵀx‖² (U the planted directions,
//    the top-4 eigenvectors of E[xxᵀ] up to the noise diagonal).
// ratio = (rows/s with the estimator) / (rows/s of the limit): 1 means the estimator costs nothing
// beyond getting the rows. Peak RSS (getrusage) at the end of each part. Timings are wall clock on a
// shared machine: ratios within one run are what to compare. Last line: JSON.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include <Eigen/Core>

#include "dpstream/io/row_source.hpp"
#include "dpstream/io/sparse_synthetic_rows.hpp"
#include "dpstream/io/synthetic_rows.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/stream/continual_sum.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using dpstream::pca::StreamingPrivateOja;
using dpstream::pca::StreamingPrivateOjaOptions;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: KiB
}

constexpr const char* kFashion = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";

std::unique_ptr<dpstream::io::RowSource> dense_source() {
  if (std::filesystem::exists(kFashion)) return dpstream::io::open_row_source(kFashion, dpstream::io::RowFormat::idx);
  dpstream::io::SyntheticRowsOptions o;
  o.dimension = 784;
  o.rows = 60000;
  return std::make_unique<dpstream::io::SyntheticRowSource>(o);
}

// Reads every row, scales it to unit norm (as RowGuard's unit scaling) and hands it to `use`.
template <class Use>
std::uint64_t read_dense(Use&& use) {
  auto source = dense_source();
  dpstream::io::RowRecord record;
  std::uint64_t n = 0;
  while (source->next(record)) {
    const double norm = record.dense.norm();
    if (norm > 0) record.dense *= (1.0 - 1e-12) / norm;
    use(record.dense);
    ++n;
  }
  return n;
}

struct Rate {
  double limit, with;
};

Rate dense_part(Eigen::Index k) {
  auto t0 = Clock::now();
  double sink = 0;
  const std::uint64_t n = read_dense([&](const Eigen::VectorXd& row) { sink += row[0]; });
  const double limit = double(n) / seconds_since(t0);
  StreamingPrivateOjaOptions o;
  o.k = k;
  o.batch_rows = 1875;
  o.privacy.noise.seed = 1;
  StreamingPrivateOja oja(784, o, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
  t0 = Clock::now();
  read_dense([&](const Eigen::VectorXd& row) { oja.update(row); });
  oja.flush();
  const double with = double(n) / seconds_since(t0);
  std::printf("dense d=784 k=%-2ld rows=%llu  read %.0f rows/s  read+oja %.0f rows/s  ratio %.3f  (sink %.1f)\n",
              static_cast<long>(k), static_cast<unsigned long long>(n), limit, with, with / limit, sink);
  return {limit, with};
}

struct SparseResult {
  Rate rate;
  double captured;
  std::string refusal;
};

SparseResult sparse_part(std::uint64_t rows, double scale_share, Eigen::Index oversampling) {
  dpstream::io::SparseSyntheticRowsOptions g;  // d = 100,000, four directions
  const Eigen::Index d = g.dimension, k = static_cast<Eigen::Index>(g.shares.size());
  SparseResult r;
  try {  // what the covariance methods do at this d: refuse before allocating
    dpstream::stream::ContinualSumOptions c;
    c.horizon = 100;
    dpstream::stream::ContinualCovariance covariance(d, c, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
    r.refusal = "(not refused)";
  } catch (const std::exception& e) {
    r.refusal = e.what();
  }
  std::printf("sparse d=%ld: ContinualCovariance: %s\n", static_cast<long>(d), r.refusal.c_str());
  Eigen::VectorXi idx;
  Eigen::VectorXd val;
  auto t0 = Clock::now();
  {
    dpstream::io::SparseSyntheticRows gen(g);
    double sink = 0;
    for (std::uint64_t i = 0; i < rows; ++i) gen.next(idx, val), sink += val[0];
    if (sink == 0.123) std::printf(" ");
  }
  r.rate.limit = double(rows) / seconds_since(t0);
  StreamingPrivateOjaOptions o;
  o.k = k;
  o.batch_rows = 20000;
  o.scale_share = scale_share;
  if (oversampling >= 0) o.oversampling = oversampling;
  o.privacy.noise.seed = 1;
  StreamingPrivateOja oja(d, o, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
  t0 = Clock::now();
  {
    dpstream::io::SparseSyntheticRows gen(g);
    for (std::uint64_t i = 0; i < rows; ++i) gen.next(idx, val), oja.update_sparse(idx, val);
    oja.flush();
  }
  r.rate.with = double(rows) / seconds_since(t0);
  // Score: a second pass of the same stream (evaluation only, no release).
  dpstream::io::SparseSyntheticRows gen(g);
  Eigen::MatrixXd u = Eigen::MatrixXd::Zero(d, k);
  for (Eigen::Index j = 0; j < k; ++j)
    for (Eigen::Index i = 0; i < gen.direction_indices()[j].size(); ++i)
      u(gen.direction_indices()[j][i], j) = gen.direction_values()[j][i];
  double est = 0, best = 0;
  for (std::uint64_t i = 0; i < rows; ++i) {
    gen.next(idx, val);
    Eigen::RowVectorXd pw = Eigen::RowVectorXd::Zero(k), pu = Eigen::RowVectorXd::Zero(k);
    for (Eigen::Index e = 0; e < idx.size(); ++e) pw += val[e] * oja.basis().row(idx[e]), pu += val[e] * u.row(idx[e]);
    est += pw.squaredNorm();
    best += pu.squaredNorm();
  }
  r.captured = est / best;
  std::printf("sparse d=%ld k=%ld rows=%llu  generate %.0f rows/s  generate+oja %.0f rows/s  ratio %.3f  "
              "captured %.4f (steps %llu, final clip %.3g)\n",
              static_cast<long>(d), static_cast<long>(k), static_cast<unsigned long long>(rows), r.rate.limit,
              r.rate.with, r.rate.with / r.rate.limit, r.captured, static_cast<unsigned long long>(oja.steps()),
              oja.clip());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  // Arguments (optional): sparse rows (10⁶), the sparse part's scale share (0.1; 0: fixed C = L²), the
  // sparse part's oversampling (the library's default when absent).
  const std::uint64_t sparse_rows = argc > 1 ? std::stoull(argv[1]) : 1000000;
  const double scale_share = argc > 2 ? std::stod(argv[2]) : 0.1;
  const Eigen::Index oversampling = argc > 3 ? std::stol(argv[3]) : -1;  // -1: the library's default
  const Rate d1 = dense_part(1), d10 = dense_part(10);
  const double dense_rss = peak_rss_mib();
  std::printf("peak RSS after the dense parts: %.0f MiB\n", dense_rss);
  const SparseResult s = sparse_part(sparse_rows, scale_share, oversampling);
  const double rss = peak_rss_mib();
  std::printf("peak RSS after the sparse part: %.0f MiB\n", rss);
  std::printf("{\"bench\":\"streaming_oja\",\"dense_k1_ratio\":%.4f,\"dense_k10_ratio\":%.4f,\"dense_read_rows_per_s\":%.0f,"
              "\"sparse_ratio\":%.4f,\"sparse_generate_rows_per_s\":%.0f,\"sparse_captured\":%.4f,"
              "\"sparse_covariance_refused\":%s,\"peak_rss_mib\":%.0f}\n",
              d1.with / d1.limit, d10.with / d10.limit, d1.limit, s.rate.with / s.rate.limit, s.rate.limit, s.captured,
              s.refusal == "(not refused)" ? "false" : "true", rss);
  return s.refusal == "(not refused)" ? 1 : 0;
}
