// dpstream-embed-example: how a streaming pipeline embeds dpstream.
//
//   your producer ──row──▶ RowGuard ──▶ ContinualCovariance ──release──▶ FplOnlinePca ──▶ your callback
//                                  └──────────────▶ RegretMeter (evaluation only: it sees raw rows)
//
// The producer here is a callback-driven sensor feed of d = 64 readings with three hidden
// directions; in your code it is a Kafka consumer, a socket, a log tail. Every row goes through
// RowGuard (the one place input is checked and clipped: sensitivities rest on ‖a‖ ≤ L), then into
// the private stream, which releases a noisy covariance every B rows. The learner subscribes to those
// releases; so do you, to read each release (step, rows, noise) and the learner's new subspace.
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

#include <Eigen/Core>

#include "dpstream/eval/regret.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/row_guard.hpp"

using namespace dpstream;

// A stand-in for the user's source: calls `emit` once per row. Its randomness is the data's (any
// generator will do); privacy noise is drawn inside dpstream, never here.
void sensor_feed(int rows, Eigen::Index d, const std::function<void(Eigen::VectorXd&)>& emit) {
  std::mt19937_64 gen(2024);
  std::normal_distribution<double> normal;
  Eigen::VectorXd row(d);
  for (int t = 0; t < rows; ++t) {
    for (Eigen::Index i = 0; i < d; ++i) row(i) = 0.02 * normal(gen);  // sensor noise
    const double a = normal(gen), b = normal(gen), c = normal(gen);
    row.head(8).array() += 0.25 * a;        // direction 1: the first 8 sensors move together
    row.segment(8, 8).array() += 0.17 * b;  // direction 2
    row.tail(8).array() += 0.12 * c;        // direction 3
    emit(row);
  }
}

int main() {
  constexpr Eigen::Index d = 64, k = 3;
  constexpr std::uint64_t rows = 20000, block = 100;

  // 1. The guard: rows over L = 1 are scaled down to it (and counted), NaN/Inf rows throw.
  stream::RowGuardOptions guard_options;
  guard_options.dimension = d;
  guard_options.norm_bound = 1.0;
  guard_options.over_norm = stream::OverNormPolicy::clip;
  stream::RowGuard guard(guard_options);

  // 2. The private stream: one (ε, δ) = (1, 1e-6) guarantee for ALL releases, a release every
  //    `block` rows over a known horizon (horizon = 0 would mean an unbounded stream). The seed makes
  //    this example reproducible and is NOT secure: drop it in production (the secure source is the
  //    default).
  stream::ContinualSumOptions stream_options;
  stream_options.horizon = rows / block;
  stream_options.block_rows = block;
  stream_options.privacy.target = privacy::EpsDelta(1.0, 1e-6);
  stream_options.privacy.row_norm_bound = 1.0;  // must match the guard's bound
  stream_options.privacy.noise.seed = 7;
  privacy::PrivacyAccountant accountant(stream_options.privacy.target);  // the stream is charged once, here
  stream::ContinualCovariance sum(d, stream_options, accountant);

  // 3. The learner follows the stream's releases (post-processing: it spends no privacy of its own).
  pca::FplOptions learner_options;
  learner_options.k = k;
  learner_options.mode = pca::FplMode::private_tree;  // refresh on every release
  pca::FplOnlinePca learner(d, learner_options);
  learner.attach(sum);

  // 4. Your own subscriber. Subscribers run in the order they subscribed, so the learner has
  //    already refreshed when this runs: leader_values() are the top-k of this very release.
  sum.subscribe([&](const stream::ContinualCovariance::Release& r) {
    if (r.step % 40 != 0) return;
    std::printf("release %3llu: %6llu rows, noise variance %.3g per entry, top-%lld eigenvalues:",
                (unsigned long long)r.step, (unsigned long long)r.rows, r.noise_variance, (long long)k);
    for (Eigen::Index i = 0; i < learner.leader_values().size(); ++i)
      std::printf(" %.1f", learner.leader_values()(i));
    std::printf("\n");
  });

  // 5. Evaluation (optional, NOT private: it keeps the exact covariance of the raw rows): the gain of
  //    each row under the subspace the learner held before seeing it, against the best in hindsight.
  eval::RegretMeter meter(d, k, {"private"});

  sensor_feed(static_cast<int>(rows), d, [&](Eigen::VectorXd& row) {
    guard.admit(row);  // may clip `row` in place
    meter.score(0, row.transpose(), learner.basis());  // score BEFORE the learner can see the row
    meter.observe(row.transpose());
    sum.update(row);  // every `block` rows: a release, the learner refreshes, your callback runs
  });
  sum.flush();  // a trailing partial block (none here: 20000 is a multiple of 100)
  meter.finish();

  std::printf("rows %llu (clipped %llu); stream: mu-GDP %.3f for (eps, delta) = %s\n",
              (unsigned long long)guard.counts().accepted, (unsigned long long)guard.counts().clipped, sum.mu(),
              sum.guarantee().to_string().c_str());
  std::printf("OPT %.1f, private gain %.1f, regret/OPT %.2f%%\n", meter.opt(), meter.gain(0),
              100 * meter.regret_over_opt(0));
  return 0;
}
