// dpstream-two-estimators-example: two private estimators refreshed from ONE stream, each on its own
// share of ONE budget.
//
//   source ──row──▶ RowGuard ─┬─▶ ContinualCovariance ──release──▶ FplOnlinePca   (share 1)
//                             └─▶ StreamingPrivateOja ──minibatch──▶ its basis    (share 2)
//
// Every row passes the guard once (the one place it is checked and clipped). The accountant holds the
// whole (ε, δ); each estimator is calibrated to zcdp_share_target(total, 2): half of the target's
// zCDP ρ each, so the two Gaussian mechanisms compose (ρ adds) to exactly the target. The example
// prints both estimators' captured variance against the exact top k and the accountant's total.
#include <cstdio>
#include <functional>
#include <random>

#include <Eigen/Core>

#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/stream/accumulators.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "dpstream/stream/row_guard.hpp"

using namespace dpstream;

// A stand-in for the user's source (a queue, a socket): rows with two strong hidden directions. Its
// randomness is the data's; privacy noise is drawn inside dpstream, never here.
void source(int rows, Eigen::Index d, const std::function<void(Eigen::VectorXd&)>& emit) {
  std::mt19937_64 gen(11);
  std::normal_distribution<double> normal;
  Eigen::VectorXd row(d);
  for (int t = 0; t < rows; ++t) {
    for (Eigen::Index i = 0; i < d; ++i) row(i) = 0.03 * normal(gen);
    row.head(6).array() += 0.3 * normal(gen);
    row.segment(6, 6).array() += 0.2 * normal(gen);
    emit(row);
  }
}

int main() {
  constexpr Eigen::Index d = 32, k = 2;
  constexpr std::uint64_t rows = 20000, block = 200;
  const privacy::EpsDelta total(1.0, 1e-6);

  // 1. One guard for both estimators: rows over L = 1 are scaled down to it, NaN/Inf rows throw.
  stream::RowGuardOptions guard_options;
  guard_options.dimension = d;
  guard_options.norm_bound = 1.0;
  guard_options.over_norm = stream::OverNormPolicy::clip;
  stream::RowGuard guard(guard_options);

  // 2. One accountant with the whole budget; each estimator gets an equal zCDP share of it.
  privacy::PrivacyAccountant accountant(total);
  const privacy::EpsDelta share = privacy::zcdp_share_target(total, 2);

  // 3. Estimator 1: the continual covariance (charged once, for all its releases, at construction)
  //    and FPL following its releases (post-processing). Seeds: reproducible, NOT secure; distinct,
  //    so the two mechanisms draw independent noise.
  stream::ContinualSumOptions stream_options;
  stream_options.horizon = rows / block;
  stream_options.block_rows = block;
  stream_options.privacy.target = share;
  stream_options.privacy.row_norm_bound = 1.0;
  stream_options.privacy.noise.seed = 7;
  stream::ContinualCovariance sum(d, stream_options, accountant);
  pca::FplOptions fpl_options;
  fpl_options.k = k;
  fpl_options.mode = pca::FplMode::private_tree;
  pca::FplOnlinePca fpl(d, fpl_options);
  fpl.attach(sum);

  // 4. Estimator 2, beside it: streaming private Oja on the same guarded rows (charged once here).
  pca::StreamingPrivateOjaOptions oja_options;
  oja_options.k = k;
  oja_options.batch_rows = 1000;
  oja_options.privacy.row_norm_bound = 1.0;
  oja_options.privacy.target = share;
  oja_options.privacy.noise.seed = 8;
  pca::StreamingPrivateOja oja(d, oja_options, accountant);

  // 5. Event-driven refresh: react to each estimator's own events (here: count them).
  std::uint64_t fpl_refreshes = 0, oja_steps = 0;
  sum.subscribe([&](const stream::ContinualCovariance::Release&) { ++fpl_refreshes; });
  oja.subscribe([&](const pca::StreamingPrivateOja::Release&) { ++oja_steps; });

  // 6. The stream: each row through the guard once, then to both. The exact covariance is kept for
  //    evaluation only (NOT private).
  stream::CovarianceAccumulator exact(d);
  source(static_cast<int>(rows), d, [&](Eigen::VectorXd& row) {
    guard.admit(row);
    sum.update(row);
    oja.update(row);
    exact.update(row);
  });
  sum.flush();
  oja.flush();

  // 7. Both final subspaces against the best k-subspace of the exact covariance; the total spent.
  const Eigen::MatrixXd c = exact.matrix();
  const double top = pca::sum_top_k_eigenvalues(c, k);
  std::printf("releases %llu, oja steps %llu\n", (unsigned long long)fpl_refreshes, (unsigned long long)oja_steps);
  std::printf("captured/top-k: fpl %.4f, oja %.4f\n", pca::captured_variance(c, fpl.basis()) / top,
              pca::captured_variance(c, oja.basis()) / top);
  const privacy::Spent spent = accountant.spent();
  const bool within = spent.epsilon <= total.epsilon() * (1 + 1e-9);  // the accountant's own round-off slack
  std::printf("budget: each share eps %.4g; spent eps %.6g of %.6g at delta %.3g (%s)\n", share.epsilon(),
              spent.epsilon, total.epsilon(), spent.delta, within ? "within" : "OVER");
  return 0;
}
