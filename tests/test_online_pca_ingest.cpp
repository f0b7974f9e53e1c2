// The online-PCA session fed by ingest() (rows in chunks of any size, on the caller's thread: the
// driver of Python's OnlinePCA): whole blocks at once give the block path's (run()) results bit for
// bit on every mechanism and under nonnegative; chunks that cut blocks keep the private protocol
// (each row scored with the subspace of the releases before its block); the caller's budget is the
// one charged; the evaluation can be left out (and then pre-summed blocks come in); and the calls that
// mix the two feeds, or save an ingesting session, are refused before anything changes.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/session/online_pca_session.hpp"
#include "dpstream/stream/block_aggregate.hpp"

namespace test_online_pca_ingest {

using namespace dpstream;
using session::OnlinePcaOptions;
using session::OnlinePcaSession;
using Evaluation = OnlinePcaOptions::Evaluation;

constexpr Eigen::Index kDim = 8;
constexpr Eigen::Index kRows = 500;  // 15 full blocks of 32 and a partial one (finish() releases it)

Eigen::MatrixXd rows(bool nonnegative) {
  std::mt19937_64 gen(23);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd x(kRows, kDim);
  for (Eigen::Index i = 0; i < kRows; ++i)
    for (Eigen::Index j = 0; j < kDim; ++j) x(i, j) = (j < 2 ? 3.0 : 1.0) * normal(gen);
  if (nonnegative) x = x.cwiseAbs();
  x.rowwise().normalize();
  x *= 1.0 - 1e-12;  // under the bound 1 after the division's rounding
  return x;
}

OnlinePcaOptions options(const std::string& mechanism) {
  OnlinePcaOptions o;
  o.k = 2;
  o.block = 32;
  o.known_rows = kRows;
  o.threaded = false;
  o.stream.strategy = stream::parse_noise_strategy(mechanism);
  o.stream.privacy.target = privacy::EpsDelta(1.0, 1e-6);
  o.stream.privacy.noise.seed = 5;
  return o;
}

struct Outcome {
  double opt, private_gain, ftl_gain;
  Eigen::MatrixXd private_basis, ftl_basis;
  std::uint64_t releases, refreshes;
  bool operator==(const Outcome&) const = default;
};

Outcome outcome(const OnlinePcaSession& s) {
  const eval::RegretMeter& m = s.meter();
  return {m.opt(), m.gain(s.private_index()), m.gain(s.ftl_index()), s.private_learner()->basis(),
          s.follow_the_leader().basis(), s.sum()->steps(), s.private_learner()->refreshes()};
}

TEST_CASE("ingest() of whole blocks gives run()'s results bit for bit") {
  for (const std::string mechanism : {"tree", "blt", "separable"}) {
    for (const bool nonnegative : {false, true}) {
      INFO(mechanism << (nonnegative ? " nonnegative" : ""));
      OnlinePcaOptions o = options(mechanism);
      o.nonnegative = nonnegative;
      const Eigen::MatrixXd x = rows(nonnegative);
      OnlinePcaSession blocks(kDim, o), ingested(kDim, o);
      blocks.run(x);
      ingested.ingest(x);  // cut into blocks of 32 by the session
      CHECK(ingested.rows_pending() == static_cast<std::uint64_t>(kRows % 32));
      ingested.finish();
      const Outcome a = outcome(blocks), b = outcome(ingested);
      CHECK(a == b);
      CHECK(b.releases == 16);  // 15 full blocks and the partial one
      CHECK(b.private_gain > 0);
    }
  }
}

TEST_CASE("ingest() in chunks that cut blocks keeps the protocol: rows scored before their block's release") {
  const Eigen::MatrixXd x = rows(false);
  OnlinePcaOptions o = options("tree");
  o.evaluation = Evaluation::meter_only;
  OnlinePcaSession chunks(kDim, o);
  std::vector<Eigen::MatrixXd> bases;  // the private subspace before each chunk
  for (Eigen::Index first = 0; first < kRows; first += 45) {
    const Eigen::Index n = std::min<Eigen::Index>(45, kRows - first);
    const std::uint64_t pending = chunks.rows_pending();
    const std::uint64_t releases = chunks.sum()->steps();
    chunks.ingest(x.middleRows(first, n));
    // Every block the chunk completed was released and followed at once.
    CHECK(chunks.sum()->steps() == releases + (pending + static_cast<std::uint64_t>(n)) / 32);
    CHECK(chunks.private_learner()->refreshes() == chunks.sum()->steps());
  }
  chunks.finish();
  CHECK_FALSE(chunks.has_follow_the_leader());
  CHECK(chunks.meter().learners().size() == 1);
  // The same noise on the same rows as whole blocks; only the order of the exact sums' additions
  // differs (a block summed in two pieces), ~1e-16 relative in each release, which the subspace
  // moves by at most that over the relative eigengap (here above 0.1: the first two coordinates
  // have 9 times the variance of the rest) and the gains (500 terms in [0, 1]) by ~1e-13 relative:
  // 1e-10 and 1e-12 leave orders of magnitude of margin.
  OnlinePcaSession blocks(kDim, options("tree"));
  blocks.run(x);
  CHECK(chunks.private_learner()->basis().isApprox(blocks.private_learner()->basis(), 1e-10));
  CHECK(chunks.meter().gain(0) == Approx(blocks.meter().gain(blocks.private_index())).epsilon(1e-12));
}

// The stream checks each piece before the learners score it or the meter sees it (the meter then
// takes the stream's exact sum, not the piece's Gram a second time).
TEST_CASE("a piece the stream refuses leaves the whole session as it was, the meter included") {
  const Eigen::MatrixXd x = rows(false);
  for (const std::string mechanism : {"tree", "blt"}) {
    INFO(mechanism);
    const OnlinePcaOptions o = options(mechanism);
    OnlinePcaSession s(kDim, o), clean(kDim, o);
    s.ingest(x.topRows(40));
    clean.ingest(x.topRows(40));
    Eigen::MatrixXd bad = x.middleRows(40, 10);
    bad.row(6) *= 2.0;  // norm 2, over the bound 1
    CHECK_THROWS_AS(s.ingest(bad), InvalidRow);
    CHECK(s.sum()->rows() == 40);
    CHECK(s.meter().rows() == 40);
    // Nothing of the refused piece is left: the rest of the stream gives the clean session's bits.
    for (OnlinePcaSession* t : {&s, &clean}) {
      t->ingest(x.bottomRows(kRows - 40));
      CHECK(t->meter().hindsight_covariance() == t->sum()->exact_sum().matrix());
    }
    // Past the horizon (16 releases of 32 rows: 12 more rows fit): the piece that would exceed it is
    // refused before the meter sees it; the one before it is in.
    CHECK_THROWS_AS(s.ingest(x.topRows(20)), BudgetExhausted);
    CHECK(s.sum()->rows() == 512);
    CHECK(s.meter().rows() == 512);
    clean.ingest(x.topRows(12));
    s.finish();
    clean.finish();
    CHECK(outcome(s) == outcome(clean));
  }
}

TEST_CASE("an ingesting session charges the caller's budget, and may leave the evaluation out") {
  privacy::PrivacyAccountant caller(privacy::EpsDelta(2.0, 1e-5));
  caller.charge_pure("an earlier release", 0.5);
  OnlinePcaOptions o = options("blt");
  o.evaluation = Evaluation::none;
  OnlinePcaSession s(kDim, o, caller);
  REQUIRE(s.accountant() == &caller);
  CHECK(caller.ledger().size() == 2);  // the stream's one charge, at construction
  CHECK_FALSE(s.has_meter());
  // Pre-summed blocks (as dpstream.dask's workers send) are released and followed.
  const Eigen::MatrixXd x = rows(false);
  stream::RowGuardOptions g;
  g.dimension = kDim;
  for (const stream::BlockAggregate& part : stream::aggregate_rows("covariance", x.topRows(96), 0, 32, g))
    s.add_aggregate(part);
  CHECK(s.sum()->steps() == 3);
  CHECK(s.private_learner()->refreshes() == 3);
  CHECK(s.learner_figures().empty());
}

TEST_CASE("mixing the feeds, or saving an ingesting session, is refused before anything changes") {
  const Eigen::MatrixXd x = rows(false);
  {
    OnlinePcaOptions o = options("tree");
    o.threaded = true;
    OnlinePcaSession threaded(kDim, o);
    CHECK_THROWS_AS(threaded.ingest(x.topRows(10)), InvalidParameter);
    threaded.run(x);
  }
  OnlinePcaSession s(kDim, options("tree"));
  s.ingest(x.topRows(40));
  CHECK_THROWS_AS(s.next_slot(32), InvalidParameter);
  CHECK_THROWS_AS(s.save(), InvalidParameter);
  CHECK_THROWS_WITH(s.add_aggregate(stream::BlockAggregate{}), Catch::Contains("needs the rows"));
  CHECK(s.rows_pending() == 8);
  OnlinePcaOptions bad = options("tree");
  bad.evaluation = Evaluation::none;
  bad.learners = {"fpl", "oja"};
  CHECK_THROWS_WITH(OnlinePcaSession(kDim, bad), Catch::Contains("scored by the meter"));
  bad = options("tree");
  bad.nonprivate = true;
  bad.evaluation = Evaluation::meter_only;
  CHECK_THROWS_WITH(OnlinePcaSession(kDim, bad), Catch::Contains("follow-the-leader alone"));
}

}  // namespace test_online_pca_ingest
