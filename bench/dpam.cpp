// DpamAls on the MovieLens 10M-shaped set (movielens_shaped_ratings, ml_10m, seed 1; 90% of the
// ratings trained), ε = 1, δ = 1e-6, T = 3, and serving a new user:
//  * training: seconds, against the seconds a dense GEMM would need for the same useful FLOPs at this
//    run's GEMM rate (a 1024² product, timed here). Useful FLOPs per V-step: every rating costs its
//    user's fold-in (a rank-r update and right-hand side: r² + 2r) and its V-step terms (the packed
//    upper triangle and right-hand side: r² + 3r), plus every item's r × r eigendecomposition (~9r³)
//    and every user's solve (~r³/3 + 2r²); ratio = GEMM-equivalent seconds / measured seconds (1: as
//    fast as GEMM on the same arithmetic). Target: 60 s.
//  * serving: fold_in_user (bias, factor, the two-fold factor check) for 2,000 held-out users of the
//    set at rank 32, microseconds per user against a 1 ms target; ratio = 1 ms / measured.
// Wall clock on a shared machine. Last line: JSON.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "dpstream/completion/dpam_als.hpp"
#include "dpstream/completion/item_model.hpp"
#include "dpstream/completion/ratings_io.hpp"
#include "dpstream/completion/synthetic_ratings.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace dpstream::completion;
using Eigen::Index;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// FLOP/s of a dense 1024 × 1024 product (best of three).
double gemm_rate() {
  const Index n = 1024;
  const Eigen::MatrixXd a = Eigen::MatrixXd::Random(n, n), b = Eigen::MatrixXd::Random(n, n);
  Eigen::MatrixXd c(n, n);
  double best = 1e30;
  for (int k = 0; k < 3; ++k) {
    const auto t0 = Clock::now();
    c.noalias() = a * b;
    best = std::min(best, seconds_since(t0));
  }
  return 2.0 * n * n * n / best;
}

DpamAlsOptions options(Index rank) {
  DpamAlsOptions o;
  o.rank = rank;
  o.baseline.scale = {0.5 - 3.0, 5.0 - 3.0};  // centred at 3, as the tool does
  o.target = dpstream::privacy::EpsDelta(1.0, 1e-6);
  o.seed = 1;
  return o;
}

}  // namespace

int main() {
  const double rate = gemm_rate();
  std::printf("GEMM rate %.2f GFLOP/s (1024^2, best of 3)\n", rate / 1e9);
  auto t0 = Clock::now();
  SyntheticRatings set = movielens_shaped_ratings(ml_10m, 1);
  for (Rating& r : set.ratings) r.value -= 3.0;
  RatingsSplit split = split_ratings(set.ratings, 0.1, 1);
  const RatingsMatrix train(ml_10m.users, ml_10m.items, split.train);
  std::printf("data: %zu training ratings, %lld users x %lld items, generated and split in %.1f s\n", split.train.size(),
              (long long)train.users(), (long long)train.items(), seconds_since(t0));

  const DpamAlsOptions o10 = options(10);
  t0 = Clock::now();
  const DpamAlsResult trained = DpamAls(o10).train(train, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
  const double train_seconds = seconds_since(t0);
  const double r = 10.0, ratings = static_cast<double>(train.size());
  const double per_step = ratings * ((r * r + 2 * r) + (r * r + 3 * r)) + static_cast<double>(train.items()) * 9 * r * r * r +
                          static_cast<double>(train.users()) * (r * r * r / 3 + 2 * r * r);
  const double useful = 2.0 * per_step * o10.iterations;  // multiply-adds → FLOPs
  const double train_ratio = useful / rate / train_seconds;
  std::printf("train rank 10, T = %d: %.2f s (limit 60 s); GEMM-equivalent %.3f s; ratio %.3f; %lld items left out\n",
              o10.iterations, train_seconds, useful / rate, train_ratio, (long long)trained.items_left_out);

  // Serving at rank 32: the model trained at rank 32, then 2,000 users' fold-ins.
  const DpamAlsOptions o32 = options(32);
  const DpamAlsResult model32 = DpamAls(o32).train(train, dpstream::privacy::Budget::unaccounted("a benchmark: nothing is published"));
  std::vector<std::vector<std::pair<Index, double>>> users;
  for (Index i = 0; i < 2000; ++i) {
    std::vector<std::pair<Index, double>> row;
    for (RatingsMatrix::ByUser::InnerIterator it(train.by_user(), i * 30); it; ++it) row.emplace_back(it.col(), it.value());
    users.push_back(std::move(row));
  }
  t0 = Clock::now();
  double checksum = 0.0;
  for (const auto& row : users) checksum += fold_in_user(model32.model, o32.fold_in, row).bias;
  const double serve_us = seconds_since(t0) / static_cast<double>(users.size()) * 1e6;
  std::printf("serve rank 32: %.1f us per new user (limit 1000 us); ratio %.1f (checksum %.3g)\n", serve_us,
              1000.0 / serve_us, checksum);
  std::printf("peak RSS %.0f MiB\n", peak_rss_mib());
  std::printf("{\"gemm_gflops\":%.3f,\"train_seconds_ml10m_r10\":%.3f,\"train_over_gemm\":%.4f,"
              "\"serve_us_r32\":%.2f,\"serve_limit_over_measured\":%.2f,\"peak_rss_mib\":%.0f}\n",
              rate / 1e9, train_seconds, train_ratio, serve_us, 1000.0 / serve_us, peak_rss_mib());
}
