// StreamingPrivateOja's adaptive last minibatch (take_rest_next, pca/streaming_oja_plan.hpp) and the
// clip's quantile edge: the rule's arithmetic on given readings; a pass over a strongly spiked stream
// with a declared horizon takes the rest in one minibatch once it settles and still ends exactly at
// the horizon; a stream that never settles, and a pass without a horizon, keep the geometric sizes
// bit for bit; a checkpoint inside the rest's minibatch continues bit for bit, one written before
// the rule still loads, and an inconsistent one is refused naming the field; the clip's edge depends
// only on the bins above it.
#include <cmath>
#include <cstdint>
#include <vector>

#include <Eigen/Dense>
#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/pca/streaming_oja_plan.hpp"
#include "dpstream/pca/streaming_private_oja.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "random_matrices.hpp"
#include "streaming_oja.pb.h"
#include "unaccounted.hpp"

namespace test_streaming_oja_rest {

using namespace dpstream;
using namespace dpstream::pca;
using Eigen::Index;
using Eigen::MatrixXd;
using dpstream::testing::spiked_rows;
using Eigen::VectorXd;
using Catch::Matchers::Contains;

namespace {

// The stream positions at which each step was released.
std::vector<std::uint64_t> step_positions(Index d, const StreamingPrivateOjaOptions& o, const MatrixXd& rows) {
  StreamingPrivateOja oja(d, o, test_budget::unaccounted());
  std::vector<std::uint64_t> at;
  oja.subscribe([&](const StreamingPrivateOja::Release& r) { at.push_back(r.rows); });
  oja.update_block(rows);
  oja.flush();
  return at;
}

// A reading of a k = 1 pass, p = 5, σ = 1: Ritz values 0.5, then 0.03 … 0.02, moved by 0.01.
StepReading settled_reading() {
  StepReading r;
  r.ritz = (VectorXd(5) << 0.5, 0.03, 0.025, 0.022, 0.02).finished();
  r.sigma = r.previous_sigma = 1.0;
  r.change = 0.01;
  return r;
}

}  // namespace

TEST_CASE("streaming oja rest: the rule takes the rest at the predicted best step only when settled",
          "[streaming_oja]") {
  // Horizon 1,023,000 from B₁ = 1000: ten minibatches 1000·2^{t−1}.
  const OjaBatchPlan plan(1000, 2.0, 1023000);
  REQUIRE(plan.planned_steps() == 10);
  StepReading r = settled_reading();
  auto at = [&](std::uint64_t step) {
    r.rows = plan.rows_of(step);
    r.previous_rows = plan.rows_of(step - 1);
    return take_rest_next(plan, step, 1, 64, r);
  };
  // c = (0.02 + ν)/(0.5 − ν) ≈ 0.04. In units of τ_t, E(s) = c·B_t/B_s + B_t/(n − n_s): from step 7,
  // E(7) = 0.111, E(8) = 0.103, E(9) = 0.135 (the plan); from step 8, E(8) = 0.207 < E(9) = 0.27.
  // So steps 2 … 7 wait, step 8 takes the rest, and step 9's successor is the planned last anyway.
  CHECK_FALSE(at(2));  // settled: floors (√64 + √5)·σ/(B·ĝ) = 0.011 + 0.022 ≥ the change 0.01
  r.change = 0.0;
  for (std::uint64_t step = 3; step <= 7; ++step) CHECK_FALSE(at(step));
  CHECK(at(8));
  CHECK_FALSE(at(9));
  SECTION("a slow contraction (c ≥ 1/6) never beats the plan") {
    r.ritz(4) = 0.1;
    for (std::uint64_t step = 2; step <= 9; ++step) CHECK_FALSE(at(step));
  }
  SECTION("an estimate still moving by more than both floors is not settled") {
    r.change = 0.5;
    CHECK_FALSE(at(8));
  }
  SECTION("a k-th gap within the Ritz noise is not settled") {
    r.sigma = r.previous_sigma = 1.0e5;  // ν = √10·σ/B_8 ≈ 2.5 > the Ritz gap 0.47
    CHECK_FALSE(at(8));
  }
  SECTION("no horizon, no θ_{k+1}, or a first step: the plan") {
    r.rows = plan.rows_of(8);
    r.previous_rows = plan.rows_of(7);
    CHECK_FALSE(take_rest_next(OjaBatchPlan(1000, 2.0, 0), 8, 1, 64, r));
    CHECK_FALSE(take_rest_next(plan, 8, 5, 64, r));  // p = k
    CHECK_FALSE(take_rest_next(plan, 1, 1, 64, r));
  }
}

TEST_CASE("streaming oja rest: a settled pass takes the rest in one minibatch and ends at the horizon",
          "[streaming_oja]") {
  // d = 16, spike 0.6 over an isotropic 0.3: c = λ₆/λ₁ ≈ 0.02/0.62 (estimated ≈ 0.05 with the noise
  // margins); B₁ = ⌈σ₁·4⌉ = 17, n = 20,000: ten planned minibatches, the last ≈ 10,000 rows. The floors
  // fall below 1/2 from step 5 on and the estimate then moves by its noise only; with c ≈ 0.05 a jump
  // beats the plan from y = B_t/B_T = 1/8 (c < y/(2(1 − y))) and E(s) is least at s = T − 2 = 8, so
  // the last minibatch holds n − n_8 ≈ 3n/4 rows (the bound below leaves room for one step earlier).
  const Index d = 16;
  const std::uint64_t n = 20000;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    StreamingPrivateOjaOptions o;
    o.horizon = n;
    o.privacy.noise.seed = seed;
    const MatrixXd rows = spiked_rows(Index(n), d, 0.6, 0.3, 300 + seed);
    const std::vector<std::uint64_t> at = step_positions(d, o, rows);
    const OjaBatchPlan plan(StreamingPrivateOja(d, o, test_budget::unaccounted()).first_batch(), 2.0, n);
    INFO("seed " << seed << ": " << at.size() << " steps, the last from row " << at[at.size() - 2]);
    REQUIRE(at.size() >= 2);
    CHECK(at.back() == n);                                     // ends exactly at the horizon
    CHECK(at.size() < plan.planned_steps());                   // fewer steps than the plan
    CHECK(n - at[at.size() - 2] >= n / 2 + n / 8);             // the last minibatch ≥ 5/8 n, the plan's n/2
    for (std::size_t s = 0; s + 1 < at.size(); ++s) CHECK(at[s] == plan.rows_through(s + 1));  // the plan until then
  }
}

TEST_CASE("streaming oja rest: a stream that never settles, and no horizon, keep the geometric sizes",
          "[streaming_oja]") {
  const Index d = 16;
  const std::uint64_t n = 20000;
  StreamingPrivateOjaOptions o;
  o.horizon = n;
  o.privacy.noise.seed = 3;
  const OjaBatchPlan plan(StreamingPrivateOja(d, o, test_budget::unaccounted()).first_batch(), 2.0, n);
  // Isotropic rows: no gap to settle on (the Ritz gap stays within its noise).
  const std::vector<std::uint64_t> flat = step_positions(d, o, spiked_rows(Index(n), d, 0.0, 0.9, 7));
  REQUIRE(flat.size() == plan.planned_steps());
  for (std::size_t s = 0; s < flat.size(); ++s) CHECK(flat[s] == plan.rows_through(s + 1));
  // No horizon: B₁·2^{t−1} whatever the rows (the strongly spiked stream above settles).
  o.horizon = 0;
  const std::vector<std::uint64_t> open = step_positions(d, o, spiked_rows(Index(n), d, 0.6, 0.3, 301));
  const OjaBatchPlan geometric(StreamingPrivateOja(d, o, test_budget::unaccounted()).first_batch(), 2.0, 0);
  for (std::size_t s = 0; s < open.size(); ++s) CHECK(open[s] == geometric.rows_through(s + 1));
}

TEST_CASE("streaming oja rest: checkpoints inside the rest's minibatch continue; old ones load", "[streaming_oja]") {
  const Index d = 16;
  const std::uint64_t n = 20000;
  StreamingPrivateOjaOptions o;
  o.horizon = n;
  o.privacy.noise.seed = 1;
  const MatrixXd rows = spiked_rows(Index(n), d, 0.6, 0.3, 301);
  StreamingPrivateOja whole(d, o, test_budget::unaccounted());
  whole.update_block(rows);
  REQUIRE(whole.final_step() != 0);
  StreamingPrivateOja first(d, o, test_budget::unaccounted());
  Index cut = 0;  // a row inside the rest's minibatch
  first.subscribe([&](const StreamingPrivateOja::Release& r) {
    if (cut == 0 && first.final_step() == r.step + 1) cut = Index(r.rows) + 100;
  });
  for (Index i = 0; i < Index(n) && (cut == 0 || i < cut); ++i) first.update(rows.row(i).transpose());
  REQUIRE(first.final_step() == first.steps() + 1);
  const std::string saved = first.save();
  StreamingPrivateOja resumed = StreamingPrivateOja::load(saved, d, o);
  CHECK(resumed.planned_rows(resumed.steps() + 1) == first.planned_rows(first.steps() + 1));
  resumed.update_block(rows.bottomRows(Index(n) - cut));
  CHECK(resumed.steps() == whole.steps());
  CHECK(resumed.basis() == whole.basis());
  proto::StreamingOjaCheckpoint msg;
  REQUIRE(msg.ParseFromString(saved));
  msg.clear_crc32();
  SECTION("written before the rule: the plan's sizes, no decision at the next step") {
    msg.clear_final_step();
    msg.clear_final_rows();
    msg.clear_last_clip();
    StreamingPrivateOja old = StreamingPrivateOja::load(base::seal_message(msg.SerializeAsString()), d, o);
    CHECK(old.final_step() == 0);
    CHECK(old.rows() == first.rows());
  }
  SECTION("a rest decided past the next step is refused, naming it") {
    msg.set_final_step(msg.steps() + 2);
    CHECK_THROWS_NAMING(StreamingPrivateOja::load(base::seal_message(msg.SerializeAsString()), d, o),
                        CorruptInput, Contains("final step"));
  }
}

TEST_CASE("streaming oja rest: the clip's quantile edge depends only on the bins above it", "[streaming_oja]") {
  // 100 rows: 5 in bin 1, 10 in bin 2, 85 in bin 3; γ = 0.9 allows 10 above the edge: L²·2^-2.
  VectorXd h = VectorXd::Zero(StreamingPrivateOja::kScaleBins);
  h(1) = 5, h(2) = 10, h(3) = 85;
  CHECK(StreamingPrivateOja::quantile_edge(h, 0.9, 100.0, 1.0) == 0.25);
  // Noise in the (empty) bins far below moves nothing: counted from below, +30 there would have put
  // 0.9·B at or below L²·2^-3 and clipped 15 rows' updates.
  h(40) = 30.0, h(47) = -12.0;
  CHECK(StreamingPrivateOja::quantile_edge(h, 0.9, 100.0, 1.0) == 0.25);
  h(0) = 11.0;  // more than (1 − γ)·B above L²/2 already: the edge stays at L²
  CHECK(StreamingPrivateOja::quantile_edge(h, 0.9, 100.0, 4.0) == 4.0);
}

}  // namespace test_streaming_oja_rest
