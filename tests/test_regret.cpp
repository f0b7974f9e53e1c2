// RegretMeter (Dwork, Talwar, Thakurta & Zhang, "Analyze Gauss", STOC 2014, §4): gains, OPT, the curve,
// finish(), and the protocol errors (score every learner, then observe).
//
// Reference values are computed directly: gains as Σ‖Vᵀa‖² row by row, OPT from Eigen's
// SelfAdjointEigenSolver of the exact Σ a aᵀ. Tolerance scales: sums of ≤ 10³ products of O(1)
// numbers in a different order agree to ~10³·2⁻⁵³ ≈ 1e-13 relative (1e-12 used); a backward-stable
// symmetric eigensolver returns eigenvalues within ~p(d)·2⁻⁵³·‖C‖₂ (< 1e-13 relative at d ≤ 20;
// 1e-10 used). The curve's OPT_t comes from leader(), a warm refresh certified to kLeaderTolerance
// (1e-5) of the captured variance (regret.hpp), so it is compared with 1e-5 relative.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>


#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/eval/regret.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/stream/accumulators.hpp"

namespace test_regret {

using namespace dpstream;
using Catch::Matchers::Contains;
using eval::RegretMeter;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

MatrixXd gaussian(Index rows, Index cols, std::mt19937_64& gen) {
  std::normal_distribution<double> normal;
  MatrixXd m(rows, cols);
  for (Index i = 0; i < m.size(); ++i) m.data()[i] = normal(gen);
  return m;
}

MatrixXd random_basis(Index d, Index k, std::mt19937_64& gen) {
  return linalg::HouseholderQr(gaussian(d, k, gen)).q(k);
}

// Rows with covariance diag(scales²) in a random orthonormal frame: eigenvalue gaps set by `scales`.
MatrixXd rows_with_scales(Index m, const VectorXd& scales, std::mt19937_64& gen) {
  const Index d = scales.size();
  const MatrixXd frame = random_basis(d, d, gen);
  return gaussian(m, d, gen) * scales.asDiagonal() * frame.transpose();
}

double exact_opt(const MatrixXd& rows, Index k) {
  if (rows.rows() == 0) return 0.0;
  const linalg::SymmetricEigenSolver es(rows.transpose() * rows, Eigen::EigenvaluesOnly);
  return es.eigenvalues().tail(k).sum();
}

double direct_gain(const MatrixXd& rows, const MatrixXd& basis) {
  double g = 0;
  for (Index i = 0; i < rows.rows(); ++i) {
    const VectorXd p = basis.transpose() * rows.row(i).transpose();
    for (Index j = 0; j < p.size(); ++j) g += p(j) * p(j);
  }
  return g;
}

// A protocol violation: std::logic_error itself, not one of its std::invalid_argument subclasses
// (InvalidParameter, InvalidRow), and the message contains `needle`.
template <class F>
void check_protocol_error(F&& call, const std::string& needle) {
  bool thrown = false;
  std::string what, kind;
  try {
    call();
  } catch (const std::invalid_argument& e) {
    thrown = true;
    kind = "std::invalid_argument";
    what = e.what();
  } catch (const std::logic_error& e) {
    thrown = true;
    kind = "std::logic_error";
    what = e.what();
  }
  INFO("thrown " << kind << ": " << what);
  REQUIRE(thrown);
  CHECK(kind == "std::logic_error");
  CHECK_THAT(what, Contains(needle));
}

}  // namespace

// ---- 6. Gains, OPT, the curve, finish() --------------------------------------------------------------

TEST_CASE("RegretMeter: gains equal a direct computation and OPT the top-k eigenvalue sum of the exact sum of a a^T (Analyze Gauss §4)",
          "[regret]") {
  const Index d = 10, k = 3;
  std::mt19937_64 gen(42);
  VectorXd scales(d);
  scales << 3, 2.5, 2, 1.2, 1, 1, 0.8, 0.5, 0.3, 0.1;
  const MatrixXd a = rows_with_scales(600, scales, gen);
  RegretMeter meter(d, k, {"scored", "self", "axes"});
  CHECK(meter.learners() == std::vector<std::string>{"scored", "self", "axes"});
  CHECK(meter.learner("self") == 1);
  CHECK(meter.opt() == 0.0);  // no rows
  CHECK(meter.regret_over_opt(0) == 0.0);
  const MatrixXd axes = MatrixXd::Identity(d, k);
  double g_scored = 0, g_self = 0, g_axes = 0;
  const std::vector<Index> sizes{1, 7, 32, 3, 64, 1, 1, 50};
  Index done = 0;
  for (std::size_t i = 0; done < a.rows(); ++i) {
    const Index take = std::min<Index>(sizes[i % sizes.size()], a.rows() - done);
    const MatrixXd rows = a.middleRows(done, take);
    const MatrixXd basis = random_basis(d, k, gen);  // a learner whose basis changes every block
    meter.score(0, rows, basis);
    g_scored += direct_gain(rows, basis);
    // add_gains: per-row gains the learner computed itself.
    const MatrixXd other = random_basis(d, k, gen);
    meter.add_gains(1, (rows * other).rowwise().squaredNorm());
    g_self += direct_gain(rows, other);
    meter.score(meter.learner("axes"), rows, axes);
    g_axes += direct_gain(rows, axes);
    meter.observe(rows);
    done += take;
    CHECK(meter.rows() == static_cast<std::uint64_t>(done));
  }
  CHECK(meter.gain(0) == Approx(g_scored).epsilon(1e-12));
  CHECK(meter.gain(1) == Approx(g_self).epsilon(1e-12));
  CHECK(meter.gain(2) == Approx(g_axes).epsilon(1e-12));
  const MatrixXd c = a.transpose() * a;
  CHECK((meter.hindsight_covariance() - c).cwiseAbs().maxCoeff() <= 1e-12 * c.cwiseAbs().maxCoeff());
  const double opt = exact_opt(a, k);
  CHECK(meter.opt() == Approx(opt).epsilon(1e-10));
  CHECK(meter.regret(0) == Approx(opt - g_scored).epsilon(1e-10));
  CHECK(meter.regret_over_opt(2) == Approx((opt - g_axes) / opt).epsilon(1e-10));
  // OPT is the best fixed projector in hindsight: no basis gains more, and the top-k eigenvectors
  // attain it.
  const linalg::SymmetricEigenSolver es(c);
  const MatrixXd best = es.eigenvectors().rightCols(k);
  CHECK(direct_gain(a, best) == Approx(opt).epsilon(1e-10));
  for (int i = 0; i < 20; ++i) CHECK(direct_gain(a, random_basis(d, k, gen)) <= opt * (1 + 1e-12));
  // With no curve, finish() only fixes OPT.
  meter.finish();
  CHECK(meter.curve().empty());
  CHECK(meter.opt() == Approx(opt).epsilon(1e-10));
}

TEST_CASE("RegretMeter curve: samples at the end of blocks crossing multiples of sample_every, OPT_t within 1e-5, finish() adds the last sample once",
          "[regret][curve]") {
  const Index d = 12, k = 3;
  const std::uint64_t every = 50;
  std::mt19937_64 gen(7);
  VectorXd spiked(d), flat(d);
  spiked << 2, 1.8, 1.5, 0.7, 0.6, 0.5, 0.4, 0.4, 0.3, 0.3, 0.2, 0.1;
  flat.setOnes();  // no gap anywhere: OPT_t's refresh works inside a cluster
  for (const VectorXd& scales : {spiked, flat}) {
    const MatrixXd a = rows_with_scales(1013, scales, gen);
    const MatrixXd basis = random_basis(d, k, gen);
    RegretMeter meter(d, k, {"fixed"}, every);
    struct Expected {
      std::uint64_t rows;
      double gain;
    };
    std::vector<Expected> expected;
    // Block sizes: blocks crossing one multiple, a block crossing two (120 rows from 150 to 270: one
    // sample, at 270), blocks ending exactly on a multiple (13 + 37 = 50) and blocks crossing none.
    // Both properties are checked below (some_double_crossing, some_exact).
    const std::vector<Index> sizes{13, 37, 1, 74, 25, 120, 30, 20, 9, 41};
    Index done = 0;
    double gain = 0;
    for (std::size_t i = 0; done < a.rows(); ++i) {
      const Index take = std::min<Index>(sizes[i % sizes.size()], a.rows() - done);
      const MatrixXd rows = a.middleRows(done, take);
      meter.score(0, rows, basis);
      gain += direct_gain(rows, basis);
      meter.observe(rows);
      const std::uint64_t before = static_cast<std::uint64_t>(done), after = before + static_cast<std::uint64_t>(take);
      if (after / every > before / every) expected.push_back({after, gain});
      done += take;
    }
    REQUIRE(meter.curve().size() == expected.size());
    REQUIRE(expected.back().rows != static_cast<std::uint64_t>(a.rows()));  // the last block crosses nothing
    bool some_double_crossing = false, some_exact = false;
    double worst = 0;
    for (std::size_t s = 0; s < expected.size(); ++s) {
      const auto& sample = meter.curve()[s];
      INFO("sample " << s << " at " << sample.rows << " rows");
      CHECK(sample.rows == expected[s].rows);
      REQUIRE(sample.gains.size() == 1);
      CHECK(sample.gains[0] == Approx(expected[s].gain).epsilon(1e-12));
      const double opt = exact_opt(a.topRows(static_cast<Index>(sample.rows)), k);
      CHECK(std::abs(sample.opt - opt) <= eval::kLeaderTolerance * opt);
      worst = std::max(worst, std::abs(sample.opt - opt) / opt);
      if (s > 0 && sample.rows / every > meter.curve()[s - 1].rows / every + 1) some_double_crossing = true;
      if (sample.rows % every == 0) some_exact = true;
    }
    // Measured: worst relative error 1.1e-15 (spiked) and 1.7e-15 (flat) over 15 samples each.
    INFO("worst relative OPT_t error " << worst << " over " << expected.size() << " samples");
    CHECK(some_double_crossing);  // one sample per block, however many multiples it crosses
    CHECK(some_exact);
    // finish(): one more sample at the end of the stream, with the exact OPT; once only.
    meter.finish();
    REQUIRE(meter.curve().size() == expected.size() + 1);
    const auto& last = meter.curve().back();
    CHECK(last.rows == static_cast<std::uint64_t>(a.rows()));
    CHECK(last.gains[0] == Approx(gain).epsilon(1e-12));
    CHECK(last.opt == Approx(exact_opt(a, k)).epsilon(1e-10));
    CHECK(last.opt == meter.opt());
    meter.finish();
    CHECK(meter.curve().size() == expected.size() + 1);
  }
}

TEST_CASE("RegretMeter curve: a stream ending on a multiple of sample_every gets no extra sample from finish()",
          "[regret][curve]") {
  const Index d = 6, k = 2;
  std::mt19937_64 gen(3);
  VectorXd scales(d);
  scales << 2, 1.5, 1, 0.5, 0.5, 0.2;
  const MatrixXd a = rows_with_scales(200, scales, gen);
  RegretMeter meter(d, k, {"axes"}, 100);
  for (Index i = 0; i < a.rows(); i += 40) {
    meter.score(0, a.middleRows(i, 40), MatrixXd::Identity(d, k));
    meter.observe(a.middleRows(i, 40));
  }
  REQUIRE(meter.curve().size() == 2);  // blocks ending at 120 (crossing 100) and 200
  CHECK(meter.curve()[0].rows == 120);
  CHECK(meter.curve()[1].rows == 200);
  meter.finish();
  REQUIRE(meter.curve().size() == 2);
  CHECK(meter.curve().back().opt == Approx(exact_opt(a, k)).epsilon(1e-10));
  // Further observe() calls reopen the stream; the next finish() samples its end.
  meter.score(0, a.topRows(10), MatrixXd::Identity(d, k));
  meter.observe(a.topRows(10));
  CHECK(meter.curve().size() == 2);
  meter.finish();
  REQUIRE(meter.curve().size() == 3);
  CHECK(meter.curve().back().rows == 210);
}

TEST_CASE("RegretMeter curve: OPT_t is right when a new direction appears after a sample (axis-aligned rows)",
          "[regret][curve][regression]") {
  // Regression test for a defect of the warm refresh (lib/pca/subspace.cpp, used by the meter's
  // curve through opt_tracker_; fixed, see test_fpl_online_pca.cpp). Rows: e_0 ×100, then e_1 ×300, k = 1, a sample every 100 rows. The
  // sample at 100 is a cold full solve of diag(100, 0, …): its block is e_0 plus null vectors that
  // do not include e_1. At 300 rows C = diag(100, 200, 0, …), but the block's top Ritz pair (100, e_0)
  // is an exact eigenpair (residual 0), so the refresh stopped at once and OPT_300 was reported as 100
  // instead of 200 (and OPT_400 as 100 instead of 300).
  const Index d = 20, k = 1;
  MatrixXd a = MatrixXd::Zero(400, d);
  a.topRows(100).col(0).setOnes();
  a.bottomRows(300).col(1).setOnes();
  RegretMeter meter(d, k, {"axes"}, 100);
  for (Index i = 0; i < a.rows(); i += 20) {
    meter.score(0, a.middleRows(i, 20), MatrixXd::Identity(d, k));
    meter.observe(a.middleRows(i, 20));
  }
  REQUIRE(meter.curve().size() == 4);
  const double exact[4] = {100, 100, 200, 300};
  for (std::size_t s = 0; s < 4; ++s) {
    INFO("sample at " << meter.curve()[s].rows << " rows: OPT_t " << meter.curve()[s].opt << ", exact " << exact[s]);
    CHECK(std::abs(meter.curve()[s].opt - exact[s]) <= eval::kLeaderTolerance * exact[s]);
  }
}

// At d = 260 (above the tracker's cold full solve, d = 256, so every leader is the single-precision
// refresh): after each block the leader's values sum to OPT_t within its
// certificate, its vectors are orthonormal and capture that sum, a second call is the cached result
// (no refresh), the curve's OPT_t is the leader's sum, and a restored meter neither refreshes again
// nor forgets where it stopped.
TEST_CASE("RegretMeter leader: the certified top k of the exact sum, refreshed once per observe, checkpointed",
          "[regret][leader]") {
  const Index d = 260, k = 4;
  std::mt19937_64 gen(11);
  VectorXd scales = VectorXd::Constant(d, 0.3);
  scales.head(6) << 3, 2.5, 2, 1.9, 1.8, 1;
  const MatrixXd a = rows_with_scales(600, scales, gen);
  RegretMeter meter(d, k, {"axes"}, 200);
  check_protocol_error([&] { meter.leader(); }, "no rows observed yet");
  double worst = 0;
  for (Index i = 0; i < a.rows(); i += 100) {
    meter.score(0, a.middleRows(i, 100), MatrixXd::Identity(d, k));
    meter.observe(a.middleRows(i, 100));
    const MatrixXd c = a.topRows(i + 100).transpose() * a.topRows(i + 100);
    const pca::TopEigen& top = meter.leader();
    const double opt = exact_opt(a.topRows(i + 100), k), sum = top.values.sum();
    INFO("rows " << i + 100 << ": leader sum " << sum << ", OPT_t " << opt);
    CHECK(sum <= opt * (1 + 1e-12));  // Ritz values never exceed the eigenvalues (Cauchy interlacing)
    CHECK(opt - sum <= eval::kLeaderTolerance * sum);
    CHECK((top.vectors.transpose() * top.vectors - MatrixXd::Identity(k, k)).cwiseAbs().maxCoeff() <= 1e-12);
    CHECK(std::abs((top.vectors.transpose() * c * top.vectors).trace() - sum) <= 1e-5 * sum);
    worst = std::max(worst, (opt - sum) / opt);
    const std::uint64_t refreshes = meter.state().opt_tracker.stats.refreshes;
    CHECK(&meter.leader() == &top);
    CHECK(meter.state().opt_tracker.stats.refreshes == refreshes);  // cached
    if ((i + 100) % 200 == 0) CHECK(meter.curve().back().opt == sum);
  }
  // Measured: worst relative error 2.0e-12 over 6 blocks (a gap below λ_4 makes it quadratic in the
  // residual: far below the certified 1e-5).
  INFO("worst relative leader error " << worst);
  CHECK(meter.state().opt_tracker.stats.full_solves == 0);  // the warm refresh really ran

  RegretMeter restored(d, k, {"axes"}, 200);
  restored.restore(meter.state());
  CHECK(restored.state().leader_rows == 600);
  const std::uint64_t refreshes = restored.state().opt_tracker.stats.refreshes;
  CHECK(restored.leader().values == meter.leader().values);
  CHECK(restored.state().opt_tracker.stats.refreshes == refreshes);
}

// observe(rows, packed_sum): the replay's evaluation takes the exact sum its stream already made.
// Fed the sum of an accumulator given the same blocks, the meter is bit for bit the one that adds
// the rows up itself (state, leader, curve, OPT); a sum of other rows, of one block too few, or of
// the wrong size is refused before anything changes, naming what does not fit.
TEST_CASE("RegretMeter: observe with the caller's exact sum equals observe alone, and a wrong sum is refused",
          "[regret][exact_sum]") {
  const Index d = 40, k = 3;
  std::mt19937_64 gen(13);
  VectorXd scales = VectorXd::Constant(d, 0.2);
  scales.head(4) << 2, 1.5, 1.2, 1;
  const MatrixXd a = rows_with_scales(300, scales, gen);
  // given: the packed sum (the replay's sum slots); held: the accumulator itself (session ingest).
  RegretMeter own(d, k, {"axes"}, 100), given(d, k, {"axes"}, 100), held(d, k, {"axes"}, 100);
  stream::CovarianceAccumulator sum(d);
  VectorXd packed(sum.packed_size());
  for (Index i = 0; i < a.rows(); i += 60) {
    const auto block = a.middleRows(i, 60);
    for (RegretMeter* m : {&own, &given, &held}) m->score(0, block, MatrixXd::Identity(d, k));
    own.observe(block);
    sum.update_block(block);
    sum.pack(packed);
    given.observe(block, packed);
    held.observe(block, sum);
    CHECK(given.leader().values == own.leader().values);
    CHECK(held.leader().values == own.leader().values);
  }
  const RegretMeter::State x = own.state(), y = given.state(), z = held.state();
  CHECK(x.rows == y.rows);
  CHECK(x.exact_sum == y.exact_sum);
  CHECK(x.rows == z.rows);
  CHECK(x.exact_sum == z.exact_sum);
  CHECK(given.opt() == own.opt());
  CHECK(held.opt() == own.opt());
  REQUIRE(given.curve().size() == own.curve().size());
  for (std::size_t i = 0; i < own.curve().size(); ++i) CHECK(given.curve()[i].opt == own.curve()[i].opt);

  const MatrixXd more = rows_with_scales(10, scales, gen);
  given.score(0, more, MatrixXd::Identity(d, k));
  CHECK_THROWS_NAMING(given.observe(more, packed), InvalidParameter,
                      Contains("not the meter's plus these rows") && Contains("diagonal entry 0"));
  sum.update_block(more);
  sum.pack(packed);
  CHECK_THROWS_NAMING(given.observe(more, VectorXd(packed.head(10))), InvalidParameter,
                      Contains("holds 10 values") && Contains("needs 820"));
  CHECK(given.rows() == 300);  // nothing changed
  given.observe(more, packed);
  CHECK(given.rows() == 310);

  // The accumulator: one of other rows (its count), or of the same count but other values.
  held.score(0, more, MatrixXd::Identity(d, k));
  stream::CovarianceAccumulator other(d);
  other.update_block(a);
  other.update_block(a.topRows(10));  // 310 rows, the last 10 not `more`
  CHECK_THROWS_NAMING(held.observe(more, other), InvalidParameter, Contains("diagonal entry 0"));
  other.update_block(more);
  CHECK_THROWS_NAMING(held.observe(more, other), InvalidParameter,
                      Contains("sum is of 320 rows") && Contains("these are 310"));
  CHECK(held.rows() == 300);  // nothing changed
  held.observe(more, sum);
  CHECK(held.state().exact_sum == given.state().exact_sum);
}

// ---- 5. Errors ----------------------------------------------------------------------------------------

TEST_CASE("RegretMeter: each error names the problem", "[regret][errors]") {
  const Index d = 8, k = 3;
  std::mt19937_64 gen(1);
  const MatrixXd rows = gaussian(5, d, gen);
  const MatrixXd basis = random_basis(d, k, gen);

  SECTION("construction: dimension, k, learner names") {
    CHECK_THROWS_NAMING(RegretMeter(0, 1, {"a"}), InvalidParameter, Contains("dimension must be >= 1"));
    CHECK_THROWS_NAMING(RegretMeter(d, 0, {"a"}), InvalidParameter, Contains("k must be in [1, 8], got 0"));
    CHECK_THROWS_NAMING(RegretMeter(d, 9, {"a"}), InvalidParameter, Contains("k must be in [1, 8], got 9"));
    CHECK_THROWS_NAMING(RegretMeter(d, k, {}), InvalidParameter, Contains("at least one learner"));
    CHECK_THROWS_NAMING(RegretMeter(d, k, {"fpl", ""}), InvalidParameter, Contains("non-empty"));
    CHECK_THROWS_NAMING(RegretMeter(d, k, {"fpl", "ftl", "fpl"}), InvalidParameter,
                        Contains("'fpl' appears twice"));
  }
  SECTION("unknown learner name or index") {
    RegretMeter meter(d, k, {"fpl", "ftl"});
    CHECK_THROWS_NAMING(meter.learner("nope"), InvalidParameter, Contains("no learner named 'nope'"));
    CHECK_THROWS_NAMING(meter.score(2, rows, basis), InvalidParameter, Contains("learner index 2 out of range"));
    CHECK_THROWS_NAMING(meter.add_gains(7, VectorXd::Zero(5)), InvalidParameter, Contains("learner index 7"));
    CHECK_THROWS_NAMING(meter.gain(2), InvalidParameter, Contains("out of range"));
  }
  SECTION("wrong basis or row shape") {
    RegretMeter meter(d, k, {"fpl"});
    CHECK_THROWS_NAMING(meter.score(0, rows, random_basis(d, k + 1, gen)), InvalidParameter,
                        Contains("basis must be 8 x 3") && Contains("8 x 4 basis"));
    CHECK_THROWS_NAMING(meter.score(0, rows, random_basis(d - 1, k, gen)), InvalidParameter, Contains("7 x 3 basis"));
    CHECK_THROWS_NAMING(meter.score(0, gaussian(5, d + 1, gen), basis), InvalidParameter, Contains("rows with 9 columns"));
    CHECK_THROWS_NAMING(meter.observe(gaussian(5, d - 1, gen)), InvalidParameter, Contains("rows have 7 columns"));
    CHECK(meter.gain(0) == 0.0);  // nothing was scored
    meter.score(0, rows, basis);  // the protocol goes on
    meter.observe(rows);
    CHECK(meter.rows() == 5);
  }
  SECTION("bad gains and bad rows") {
    RegretMeter meter(d, k, {"fpl"});
    VectorXd gains = VectorXd::Constant(5, 0.5);
    gains(3) = -0.1;
    CHECK_THROWS_NAMING(meter.add_gains(0, gains), InvalidParameter, Contains("gain of row 3") && Contains("'fpl'"));
    gains(3) = std::nan("");
    CHECK_THROWS_NAMING(meter.add_gains(0, gains), InvalidParameter, Contains("not a finite non-negative"));
    meter.score(0, rows, basis);
    MatrixXd bad = rows;
    bad(2, 4) = std::numeric_limits<double>::infinity();
    CHECK_THROWS_NAMING(meter.observe(bad), InvalidParameter, Contains("NaN or infinite"));
    CHECK(meter.rows() == 0);
    meter.observe(rows);
    CHECK(meter.rows() == 5);
  }
  SECTION("observe before every learner was scored: std::logic_error naming the learner") {
    RegretMeter meter(d, k, {"fpl", "ftl"});
    check_protocol_error([&] { meter.observe(rows); }, "'fpl'");  // nobody scored
    meter.score(0, rows, basis);
    check_protocol_error([&] { meter.observe(rows); }, "'ftl'");
    CHECK(meter.rows() == 0);  // refused observations change nothing
    // Scored on fewer rows than observed.
    meter.add_gains(1, VectorXd::Constant(4, 0.1));
    check_protocol_error([&] { meter.observe(rows); }, "'ftl' was scored on 4 rows");
    CHECK(meter.rows() == 0);
  }
  SECTION("scoring a learner twice on the same rows: std::logic_error naming the learner") {
    RegretMeter meter(d, k, {"fpl", "ftl"});
    meter.score(1, rows, basis);
    check_protocol_error([&] { meter.score(1, rows, basis); }, "'ftl' was already scored");
    check_protocol_error([&] { meter.add_gains(1, VectorXd::Zero(5)); }, "'ftl'");
    CHECK(meter.gain(1) == Approx(direct_gain(rows, basis)).epsilon(1e-12));  // the refused score added nothing
    meter.score(0, rows, basis);
    meter.observe(rows);  // now consistent
    CHECK(meter.rows() == 5);
    meter.score(1, rows, basis);  // the next rows are open again
    CHECK(meter.gain(1) == Approx(2 * direct_gain(rows, basis)).epsilon(1e-12));
  }
}

}  // namespace test_regret
