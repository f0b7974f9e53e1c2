// Checkpoint state of the online PCA pieces dpstream-replay saves (--checkpoint): SubspaceTracker,
// FplOnlinePca (all three modes) and RegretMeter. A state taken mid-stream and restored onto a fresh
// object must continue BIT-identically — same bases, same refresh counts, same gains and curve —
// since the tool promises that a resumed seeded run prints exactly the uninterrupted run's output.
// Each case runs an original to the end and a copy restored at a midpoint, then compares bitwise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/eval/regret.hpp"
#include "dpstream/pca/fpl_online_pca.hpp"
#include "dpstream/pca/subspace.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "unaccounted.hpp"

namespace test_fpl_checkpoint {

using namespace dpstream;
using namespace dpstream::pca;
using Catch::Matchers::Contains;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// d = 48, k = 3: large enough that refreshes take the warm Krylov path (which uses the refresh count
// as its seed), not the full solver used below 2(k + p) columns.
constexpr Index kDim = 48;
constexpr Index kK = 3;

// Rows of norm 0.999 (inside the streams' bound L = 1 despite rounding) with a few strong directions
// (so that the top k is well defined), seeded.
MatrixXd spiked_rows(Index m, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  MatrixXd a(m, kDim);
  for (Index i = 0; i < m; ++i) {
    for (Index j = 0; j < kDim; ++j) a(i, j) = (j < 5 ? 3.0 / (1 + j) : 0.3) * normal(gen);
    a.row(i) *= 0.999 / a.row(i).norm();
  }
  return a;
}

bool bitwise_equal(const MatrixXd& a, const MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::equal(a.data(), a.data() + a.size(), b.data());  // == on doubles: -0 = 0 is fine here
}

void require_same(const FplOnlinePca& a, const FplOnlinePca& b) {
  REQUIRE(bitwise_equal(a.basis(), b.basis()));
  REQUIRE(bitwise_equal(a.leader_values(), b.leader_values()));
  REQUIRE(a.refreshes() == b.refreshes());
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.refresh_stats().refreshes == b.refresh_stats().refreshes);
  REQUIRE(a.refresh_stats().iterations == b.refresh_stats().iterations);
  REQUIRE(a.refresh_stats().full_solves == b.refresh_stats().full_solves);
}

FplOptions options(FplMode mode, std::uint64_t refresh_every) {
  FplOptions o;
  o.k = kK;
  o.mode = mode;
  o.refresh_every = refresh_every;
  if (mode == FplMode::perturbed_leader) {
    o.perturbation.privacy.target = privacy::EpsDelta(1.0, 1e-6);
    o.perturbation.privacy.noise.seed = 11;
  }
  return o;
}

}  // namespace

TEST_CASE("SubspaceTracker::restore continues the same refreshes bit for bit (the refresh count seeds them)") {
  const MatrixXd rows = spiked_rows(400, 1);
  SubspaceTracker original(kDim, kK);
  MatrixXd c = MatrixXd::Zero(kDim, kDim);
  for (Index t = 0; t < 10; ++t) {
    c += rows.middleRows(20 * t, 20).transpose() * rows.middleRows(20 * t, 20);
    original.refresh(c);
  }
  SubspaceTracker restored(kDim, kK);
  restored.restore(original.state());
  CHECK(restored.stats().refreshes == 10);
  for (Index t = 10; t < 20; ++t) {
    c += rows.middleRows(20 * t, 20).transpose() * rows.middleRows(20 * t, 20);
    const TopEigen& a = original.refresh(c);
    const TopEigen& b = restored.refresh(c);
    REQUIRE(bitwise_equal(a.vectors, b.vectors));
    REQUIRE(bitwise_equal(a.values, b.values));
  }
  CHECK(original.stats().iterations == restored.stats().iterations);

  SubspaceTracker::State bad = original.state();
  bad.block = MatrixXd::Zero(kDim + 1, 4);
  CHECK_THROWS_NAMING(restored.restore(bad), InvalidParameter, Contains("start basis"));
  bad = original.state();
  bad.current.vectors = MatrixXd::Zero(kDim, kK + 1);
  CHECK_THROWS_NAMING(restored.restore(bad), InvalidParameter, Contains("last result"));
}

TEST_CASE("FplOnlinePca state: follow_the_leader and perturbed_leader restored mid-stream continue identically") {
  const FplMode mode = GENERATE(FplMode::follow_the_leader, FplMode::perturbed_leader);
  INFO(to_string(mode));
  const MatrixXd rows = spiked_rows(500, 2);
  FplOnlinePca original(kDim, options(mode, 25));
  // 230 rows: the state is taken between two refreshes (230 is not a multiple of 25), so the exact
  // sum of the rows since the last refresh must travel too.
  original.update_block(rows.topRows(230));
  const FplOnlinePca::State state = original.state();
  CHECK(state.rows == 230);
  CHECK(state.perturbation_source.has_value() == (mode == FplMode::perturbed_leader));

  FplOnlinePca restored(kDim, options(mode, 25));
  restored.restore(state);
  require_same(original, restored);
  for (Index first = 230; first < 500; first += 30) {
    const MatrixXd block = rows.middleRows(first, std::min<Index>(30, 500 - first));
    REQUIRE(bitwise_equal(original.gains(block), restored.gains(block)));
    original.update_block(block);
    restored.update_block(block);
    require_same(original, restored);
  }
}

TEST_CASE("FplOnlinePca state: a private_tree learner and its stream restored from checkpoints continue identically") {
  const MatrixXd rows = spiked_rows(480, 3);
  stream::ContinualSumOptions so;
  so.horizon = 30;
  so.block_rows = 16;
  so.privacy.noise.seed = 5;
  stream::ContinualCovariance original_sum(kDim, so, test_budget::unaccounted());
  FplOnlinePca original(kDim, options(FplMode::private_tree, 1));
  original.attach(original_sum);
  original_sum.update_block(rows.topRows(160));  // 10 releases

  stream::ContinualCovariance restored_sum = stream::ContinualCovariance::load(original_sum.save(), kDim, so, test_budget::unaccounted());
  FplOnlinePca restored(kDim, options(FplMode::private_tree, 1));
  restored.restore(original.state());
  restored.attach(restored_sum);
  require_same(original, restored);
  for (Index first = 160; first < 480; first += 16) {
    const MatrixXd block = rows.middleRows(first, 16);
    REQUIRE(bitwise_equal(original.gains(block), restored.gains(block)));
    original_sum.update_block(block);
    restored_sum.update_block(block);
    REQUIRE(bitwise_equal(original_sum.noisy_prefix(), restored_sum.noisy_prefix()));  // no noise re-drawn
    require_same(original, restored);
  }
  CHECK(original.refreshes() == 30);
}

TEST_CASE("FplOnlinePca::restore refuses a state that does not fit, naming what") {
  FplOnlinePca ftl(kDim, options(FplMode::follow_the_leader, 10));
  ftl.update_block(spiked_rows(40, 4));
  FplOnlinePca other_mode(kDim, options(FplMode::private_tree, 1));
  CHECK_THROWS_NAMING(other_mode.restore(ftl.state()), InvalidParameter, Contains("follow_the_leader"));

  FplOnlinePca target(kDim, options(FplMode::follow_the_leader, 10));
  FplOnlinePca::State bad = ftl.state();
  bad.basis = MatrixXd::Identity(kDim, kK + 1);
  CHECK_THROWS_NAMING(target.restore(bad), InvalidParameter, Contains("basis"));
  bad = ftl.state();
  bad.exact_sum.resize(3);
  CHECK_THROWS_NAMING(target.restore(bad), InvalidParameter, Contains("exact sum"));
  bad = ftl.state();
  bad.basis(0, 0) = std::nan("");
  CHECK_THROWS_NAMING(target.restore(bad), InvalidParameter, Contains("finite"));

  FplOnlinePca perturbed(kDim, options(FplMode::perturbed_leader, 10));
  FplOptions other_seed = options(FplMode::perturbed_leader, 10);
  other_seed.perturbation.privacy.noise.seed = 12;
  FplOnlinePca reseeded(kDim, other_seed);
  CHECK_THROWS_NAMING(reseeded.restore(perturbed.state()), InvalidParameter, Contains("seeded with 11"));
  // A refused restore leaves the learner as it was.
  CHECK(target.refreshes() == 0);
  CHECK(bitwise_equal(target.basis(), MatrixXd::Identity(kDim, kK)));
}

TEST_CASE("RegretMeter state: restored mid-stream, the curve, gains and OPT continue identically") {
  const MatrixXd rows = spiked_rows(600, 6);
  eval::RegretMeter original(kDim, kK, {"a", "b"}, 50);
  FplOnlinePca learner(kDim, options(FplMode::follow_the_leader, 20));
  auto step = [&](eval::RegretMeter& meter, const MatrixXd& block) {
    meter.add_gains(0, learner.gains(block));
    meter.score(1, block, MatrixXd::Identity(kDim, kK));
    meter.observe(block);
  };
  for (Index first = 0; first < 300; first += 20) step(original, rows.middleRows(first, 20));  // learner fixed: V̂_1
  eval::RegretMeter restored(kDim, kK, {"a", "b"}, 50);
  restored.restore(original.state());
  CHECK(restored.rows() == 300);
  CHECK(restored.curve().size() == original.curve().size());
  for (Index first = 300; first < 600; first += 20) {
    const MatrixXd block = rows.middleRows(first, 20);
    step(original, block);
    step(restored, block);
    learner.update_block(block);
  }
  original.finish();
  restored.finish();
  REQUIRE(original.curve().size() == restored.curve().size());
  for (std::size_t i = 0; i < original.curve().size(); ++i) {
    CHECK(original.curve()[i].rows == restored.curve()[i].rows);
    CHECK(original.curve()[i].opt == restored.curve()[i].opt);
    CHECK(original.curve()[i].gains == restored.curve()[i].gains);
  }
  CHECK(original.opt() == restored.opt());
  CHECK(original.gain(0) == restored.gain(0));
  CHECK(original.gain(1) == restored.gain(1));

  eval::RegretMeter three(kDim, kK, {"a", "b", "c"}, 50);
  CHECK_THROWS_NAMING(three.restore(original.state()), InvalidParameter, Contains("learners"));
  eval::RegretMeter wider(kDim + 1, kK, {"a", "b"}, 50);
  CHECK_THROWS_NAMING(wider.restore(original.state()), InvalidParameter, Contains("dimension"));
}

}  // namespace test_fpl_checkpoint
