// How the replay's cost grows with the dimension: for each d, ingestion alone against the whole
// replay (dpstream-replay's online-PCA session: stream, private FPL learner, evaluation), each as a
// ratio to a limit measured in the same run, and the peak memory; then the PSD projection of
// --nonnegative by both of its routes.
//
// Rows: a generated spiked-covariance stream (io/synthetic_rows.hpp, seed 1), scaled to unit norm as
// dpstream-replay's default --normalize unit does (RowGuard clips what the division leaves an ulp
// over), generated before anything is timed. Settings: dpstream-replay's defaults (BLT with
// GOE-shaped noise, ε = 1, δ = 1e-6, blocks of 128) with --seed 1 and the given k.
//
// Per (d, k):
//  * GEMM rate: the best of 5 products (d × 128)·(128 × d), 2·128·d² FLOPs each; the GEMM bound on
//    ingestion is that rate over d² FLOPs a row (the Gram update's lower triangle: half the product);
//  * ingest: rows/s of a ContinualCovariance alone (Gram update, noise, release), on one thread;
//  * replay: rows/s of the session from the first block to the last one processed by every worker
//    (the final OPT, one full eigendecomposition, is timed apart, in the first round only: "final");
//  * replay/ingest, with targets ≥ 0.6 at d = 784 (k = 10), ≥ 0.5 at d = 2048 and ≥ 0.3
//    at d = 4096 (k = 32): R replays (--rounds, default 3), each between two ingestion runs (R + 1 in
//    all, alternated), each replay's rate over the mean of the two ingestion rates beside it; the
//    figure is the median of the R ratios, with their smallest and largest. Why: a shared
//    machine's speed drifts within minutes, and a ratio of runs minutes apart takes all of that drift
//    (docs/performance.md has the figures); runs seconds apart mostly share the machine's phase, and
//    the runs on both sides cancel a steady drift. The rates and CPU figures printed are
//    the median round's; ingest/GEMM bound;
//  * CPU per release of each worker thread: strm (stream), lrnr (private learner: follow the
//    release, score the block), eval (evaluation: follow-the-leader's refresh, the regret meter);
//    lrnr_CQ and lrnr_full: the private learner's block products Ĉ·Q and full eigendecompositions
//    per refresh;
//  * peak RSS: VmHWM after resetting it (/proc/self/clear_refs) before the first replay, less the
//    bench's own copy of the rows (rows·d·8 bytes), i.e. what the replay itself held at its peak.
// The PSD projection: a noisy covariance (Σ a aᵀ of 2000 rows plus symmetric Gaussian noise of
// sd 1, about half its spectrum below 0), the median of 3 runs of each route, and their largest
// difference relative to max|C| (round-off: ~1e-15).
//
// Default: d ∈ {256, 784, 2048}, k = 10, projection at d ∈ {256, 784} (~30 s on 2 cores;
// --full ~3 minutes). --full: d ∈ {256, 784, 2048, 4096} × k ∈ {10, 32}, projection also at 2048. --psd: the
// projection alone. --d D: that d only (both parts). --k K: that k only (the replay part).
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/io/synthetic_rows.hpp"
#include "dpstream/linalg/psd_projection.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/row_guard.hpp"
#include "dpstream/session/online_pca_session.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Eigen::Index;
using Eigen::MatrixXd;
namespace session = dpstream::session;

constexpr std::uint64_t kBlock = 128;
double checksum = 0;  // folded from every result, printed, so no work can be dropped

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Peak resident memory (VmHWM) in MB, and its reset to the current size (false if the kernel refuses).
double peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}
// Freed heap memory is first handed back: glibc keeps some of an earlier replay's resident, which
// would count as held by the next one.
bool reset_peak_rss() {
  malloc_trim(0);
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  return static_cast<bool>(clear.flush());
}

// The synthetic stream's rows, each scaled to unit norm (zero rows stay zero).
MatrixXd generate_rows(Index d, std::uint64_t rows) {
  dpstream::io::SyntheticRowsOptions o;
  o.dimension = d;
  o.rows = rows;
  dpstream::io::SyntheticRowSource source(o);
  dpstream::io::RowRecord record;
  // The division can leave a norm an ulp over 1: the guard clips it, as in the replay.
  dpstream::stream::RowGuard guard({d, 1.0, dpstream::stream::OverNormPolicy::clip});
  MatrixXd out(static_cast<Index>(rows), d);
  for (Index r = 0; source.next(record); ++r) {
    const double norm = record.dense.norm();
    if (norm > 0) record.dense /= norm;
    guard.admit(record.dense);
    out.row(r) = record.dense.transpose();
  }
  return out;
}

double gemm_flops_per_second(Index d) {
  const MatrixXd a = MatrixXd::Random(d, static_cast<Index>(kBlock)), b = MatrixXd::Random(static_cast<Index>(kBlock), d);
  MatrixXd c = MatrixXd::Zero(d, d);
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto start = Clock::now();
    c.noalias() += a * b;
    best = std::min(best, seconds_since(start));
  }
  checksum += c(0, 0);
  return 2.0 * static_cast<double>(kBlock) * static_cast<double>(d) * static_cast<double>(d) / best;
}

// dpstream-replay's defaults (BLT, max error, GOE-shaped noise, (1, 1e-6), tight, L = 1), seed 1.
session::OnlinePcaOptions settings(Index k, std::uint64_t rows) {
  session::OnlinePcaOptions s;
  s.k = k;
  s.block = kBlock;
  s.known_rows = rows;
  s.stream.strategy = dpstream::stream::NoiseStrategy::blt;
  s.stream.blt_error = dpstream::stream::BltError::max;
  s.stream.shape = dpstream::privacy::SymmetricNoiseShape::goe;
  s.stream.privacy.noise.seed = 1;
  return s;
}

// One replay of the rows.
struct ReplayRun {
  double rate = 0, peak_mb = 0;
  double stream_ms = 0, learner_ms = 0, eval_ms = 0;  // CPU per release (per block for the evaluation)
  double products = 0, full_solves = 0;  // the private learner's block products and full solves a refresh
};

struct Figures {
  Index d = 0, k = 0;
  std::uint64_t rows = 0;
  double gemm_rate = 0, ingest = 0, final_s = 0, peak_mb = 0;  // ingest: the median round's rows/s
  double ratio = 0, ratio_min = 0, ratio_max = 0;               // replay/ingest over the rounds
  ReplayRun replay;                                             // the round of the median ratio
};

double ingest_rows_per_second(const MatrixXd& data, const session::OnlinePcaOptions& s) {
  const auto rows = static_cast<std::uint64_t>(data.rows());
  dpstream::stream::ContinualSumOptions o = s.stream;
  o.horizon = (rows + kBlock - 1) / kBlock;
  o.block_rows = kBlock;
  dpstream::stream::ContinualCovariance sum(data.cols(), o, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
  const auto start = Clock::now();
  for (Index r = 0; r < data.rows(); r += static_cast<Index>(kBlock))
    sum.update_block(data.middleRows(r, std::min(static_cast<Index>(kBlock), data.rows() - r)));
  sum.flush();
  const double seconds = seconds_since(start);
  checksum += sum.noisy_prefix()(0, 0);
  return static_cast<double>(rows) / seconds;
}

// Replays the rows through a new session; `final_s`, if given, receives the final OPT's seconds.
ReplayRun replay_once(const MatrixXd& data, const session::OnlinePcaOptions& s, double* final_s) {
  ReplayRun run;
  const auto rows = static_cast<std::uint64_t>(data.rows());
  const bool reset = reset_peak_rss();
  session::OnlinePcaSession pipeline(data.cols(), s);
  const auto start = Clock::now();
  for (Index r = 0; r < data.rows(); r += static_cast<Index>(kBlock)) {
    const Index n = std::min(static_cast<Index>(kBlock), data.rows() - r);
    MatrixXd* slot = pipeline.next_slot(static_cast<std::uint64_t>(n));
    if (!slot) break;  // a worker failed: close() rethrows
    *slot = data.middleRows(r, n);
    pipeline.publish();
  }
  pipeline.close();
  run.rate = static_cast<double>(rows) / seconds_since(start);
  if (final_s) {
    const auto final_start = Clock::now();
    pipeline.finish();
    *final_s = seconds_since(final_start);
    checksum += pipeline.meter().opt();
    // Every learner's gain: a change in the private learner's or the evaluation's arithmetic moves it.
    for (std::size_t i = 0; i < pipeline.meter().learners().size(); ++i) checksum += pipeline.meter().gain(i);
  }
  const double input_mb = static_cast<double>(data.size()) * sizeof(double) / (1024.0 * 1024.0);
  run.peak_mb = reset ? peak_rss_mb() - input_mb : -1;
  const double blocks = static_cast<double>((rows + kBlock - 1) / kBlock);
  run.stream_ms = 1e3 * pipeline.cpu_stream() / blocks;
  run.learner_ms = 1e3 * pipeline.cpu_learner() / blocks;
  run.eval_ms = 1e3 * pipeline.cpu_evaluation() / blocks;
  const dpstream::pca::RefreshStats stats = pipeline.private_learner()->state().tracker.stats;
  const double refreshes = std::max<double>(1, static_cast<double>(stats.refreshes));
  run.products = static_cast<double>(stats.iterations) / refreshes;
  run.full_solves = static_cast<double>(stats.full_solves) / refreshes;
  return run;
}

Figures run(Index d, Index k, std::uint64_t rows, int rounds) {
  Figures f;
  f.d = d;
  f.k = k;
  f.rows = rows;
  const MatrixXd data = generate_rows(d, rows);
  const session::OnlinePcaOptions s = settings(k, rows);
  f.gemm_rate = gemm_flops_per_second(d);
  struct Round {
    double ingest;  // the mean of the ingestion runs just before and just after the replay
    ReplayRun replay;
    double ratio() const { return replay.rate / ingest; }
  };
  std::vector<Round> done;
  double ingest_before = ingest_rows_per_second(data, s);
  for (int r = 0; r < rounds; ++r) {
    const ReplayRun replay = replay_once(data, s, r == 0 ? &f.final_s : nullptr);
    const double ingest_after = ingest_rows_per_second(data, s);
    done.push_back({0.5 * (ingest_before + ingest_after), replay});
    ingest_before = ingest_after;
  }
  // The first replay's, the nearest to a fresh process: later ones found memory the first left touched
  // (their peaks read ~60 MB less at d = 2048). An earlier (d, k) can still leave some that
  // malloc_trim does not hand back: 2048, k = 32 read 466 MB after k = 10's replays, 446–448 alone.
  f.peak_mb = done.front().replay.peak_mb;
  std::sort(done.begin(), done.end(), [](const Round& a, const Round& b) { return a.ratio() < b.ratio(); });
  const Round& middle = done[done.size() / 2];
  f.ingest = middle.ingest;
  f.replay = middle.replay;
  f.ratio = middle.ratio();
  f.ratio_min = done.front().ratio();
  f.ratio_max = done.back().ratio();
  return f;
}

void print(const Figures& f) {
  const double d2 = static_cast<double>(f.d) * static_cast<double>(f.d);
  const double gemm_bound = f.gemm_rate / d2;
  const ReplayRun& r = f.replay;
  std::printf("%5ld %3ld %6llu %7.1f %9.0f %9.0f %7.3f %9.0f %7.3f %5.3f-%5.3f %8.2f %8.2f %8.2f %7.2f %8.1f %7.2f %9.3f\n",
              static_cast<long>(f.d), static_cast<long>(f.k), static_cast<unsigned long long>(f.rows),
              f.gemm_rate / 1e9, gemm_bound, f.ingest, f.ingest / gemm_bound, r.rate, f.ratio, f.ratio_min,
              f.ratio_max, r.stream_ms, r.learner_ms, r.eval_ms, f.final_s, f.peak_mb, r.products, r.full_solves);
}

struct Projection {
  Index d = 0;
  double full_ms = 0, one_side_ms = 0, difference = 0;
};

Projection time_projection(Index d) {
  Projection p;
  p.d = d;
  const MatrixXd rows = generate_rows(d, 2000);
  MatrixXd c = rows.transpose() * rows;
  dpstream::privacy::SeededNoiseSource noise(7);
  for (Index j = 0; j < d; ++j)
    for (Index i = j; i < d; ++i) c(i, j) += noise.gaussian();
  c.triangularView<Eigen::StrictlyUpper>() = c.transpose();
  std::vector<double> full, one;
  MatrixXd by_full, by_one;
  for (int r = 0; r < 3; ++r) {
    by_full = c;
    auto start = Clock::now();
    dpstream::linalg::project_psd(by_full, dpstream::linalg::PsdRoute::full_solve);
    full.push_back(1e3 * seconds_since(start));
    by_one = c;
    start = Clock::now();
    const auto route = dpstream::linalg::project_psd(by_one, dpstream::linalg::PsdRoute::one_side);
    one.push_back(1e3 * seconds_since(start));
    if (route != dpstream::linalg::PsdRoute::one_side) std::printf("  d = %ld: the certificate failed (fallback)\n", static_cast<long>(d));
  }
  p.full_ms = median(full);
  p.one_side_ms = median(one);
  p.difference = (by_full - by_one).cwiseAbs().maxCoeff() / c.cwiseAbs().maxCoeff();
  checksum += by_one(0, 0);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  bool full = false, psd_only = false;
  Index only_d = 0, only_k = 0;
  int rounds = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--full") == 0) {
      full = true;
    } else if (std::strcmp(argv[i], "--psd") == 0) {
      psd_only = true;
    } else if (std::strcmp(argv[i], "--d") == 0 && i + 1 < argc) {
      only_d = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--k") == 0 && i + 1 < argc) {
      only_k = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc && std::atoi(argv[i + 1]) >= 1) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: bench_scale [--full] [--psd: the PSD projection only] [--d D: this d only] [--k K: this k only] [--rounds R ≥ 1: replays, each between two ingestion runs, default 3]\n");
      return 2;
    }
  }
  std::vector<Index> dims = {256, 784, 2048};
  std::vector<Index> ks = {10};
  if (full) {
    dims.push_back(4096);
    ks.push_back(32);
  }
  if (only_d > 0) dims = {only_d};
  if (only_k > 0) ks = {only_k};
  if (psd_only) dims.clear();
  std::printf("replay (BLT, GOE, eps 1, seed 1, blocks of %llu) on synthetic unit-norm rows; %d replays, each between "
              "two ingestion runs: rep/ing the median replay's rate over the mean of its two (its rates and CPU shown), "
              "min-max over the replays; rates in rows/s; CPU ms per release; peak RSS in MB (the first replay's, less "
              "the bench's copy of the rows)\n",
              static_cast<unsigned long long>(kBlock), rounds);
  std::printf("%5s %3s %6s %7s %9s %9s %7s %9s %7s %11s %8s %8s %8s %7s %8s %7s %9s\n", "d", "k", "rows", "GFLOP/s",
              "gemm_bnd", "ingest", "ing/bnd", "replay", "rep/ing", "min-max", "strm_ms", "lrnr_ms", "eval_ms", "final_s", "peak_MB",
              "lrnr_CQ", "lrnr_full");
  std::vector<Figures> figures;
  for (Index d : dims)
    for (Index k : ks) {
      const std::uint64_t rows = d >= 4096 ? 4096 : d >= 2048 ? 8192 : 16384;
      figures.push_back(run(d, k, rows, rounds));
      print(figures.back());
      std::fflush(stdout);
    }

  std::printf("PSD projection (--nonnegative), median of 3, ms: full eigendecomposition vs one side (MRRR)\n");
  std::vector<Projection> projections;
  std::vector<Index> psd_dims = full ? std::vector<Index>{256, 784, 2048} : std::vector<Index>{256, 784};
  if (only_d > 0) psd_dims = {only_d};
  for (Index d : psd_dims) {
    projections.push_back(time_projection(d));
    const Projection& p = projections.back();
    std::printf("%5ld full %9.1f one_side %9.1f speedup %6.2f max|diff|/max|C| %.2e\n", static_cast<long>(p.d),
                p.full_ms, p.one_side_ms, p.full_ms / p.one_side_ms, p.difference);
    std::fflush(stdout);
  }
  std::printf("checksum %.17g\n", checksum);

  std::string json = "{\"bench\":\"scale\"";
  char buf[256];
  for (const Figures& f : figures) {
    std::snprintf(buf, sizeof buf, ",\"replay_over_ingest_d%ld_k%ld\":%.3f", static_cast<long>(f.d),
                  static_cast<long>(f.k), f.ratio);
    json += buf;
  }
  for (Index d : dims) {
    double peak = 0;
    for (const Figures& f : figures)
      if (f.d == d) peak = std::max(peak, f.peak_mb);
    std::snprintf(buf, sizeof buf, ",\"peak_rss_mb_d%ld\":%.1f", static_cast<long>(d), peak);
    json += buf;
  }
  for (const Projection& p : projections) {
    std::snprintf(buf, sizeof buf, ",\"psd_speedup_d%ld\":%.3f", static_cast<long>(p.d), p.full_ms / p.one_side_ms);
    json += buf;
  }
  std::printf("%s}\n", json.c_str());
  return 0;
}
