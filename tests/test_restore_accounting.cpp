// Restoring a checkpoint never lowers what an accountant has spent (PrivacyAccountant::restore, the
// one rule every restore path goes through: ContinualSum::load, the replay, Python).
#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "unaccounted.hpp"

namespace test_restore_accounting {

using namespace dpstream;
using namespace dpstream::stream;
using privacy::EpsDelta;
using privacy::PrivacyAccountant;

namespace {

ContinualSumOptions unit_stream() {
  ContinualSumOptions o;
  o.horizon = 16;
  o.block_rows = 1;
  o.privacy.target = EpsDelta(1.0, 1e-6);
  o.privacy.noise.seed = 5;
  return o;
}

// A further ε = 1 release on `accountant`: a Gaussian mechanism calibrated to (1, 1e-6), charged as
// the stream charges itself (sensitivity μ, σ = 1).
void release_epsilon_one(PrivacyAccountant& accountant, double mu) {
  accountant.charge_gaussian("another mechanism", mu, 1.0, EpsDelta(1.0, 1e-6));
}

bool same_ledger(const PrivacyAccountant& a, const PrivacyAccountant& b) {
  return a.save() == b.save();
}

}  // namespace

TEST_CASE("restoring a stream onto its shared accountant keeps what others spent since", "[restore][privacy]") {
  const Eigen::Index d = 3;
  PrivacyAccountant shared(EpsDelta(2.0, 1e-6));
  ContinualCovariance sum(d, unit_stream(), shared);
  sum.update(Eigen::VectorXd::Constant(d, 0.5));
  const std::string checkpoint = sum.save();
  const double mu = sum.mu();
  const double one = shared.spent().epsilon;
  CHECK(one == Approx(1.0).epsilon(1e-6));  // the stream's target

  release_epsilon_one(shared, mu);  // another mechanism: 1.455 by the GDP bound (1.565 by zCDP's)
  const double two = shared.spent().epsilon;
  CHECK(two > 1.4);
  ContinualCovariance restored = ContinualCovariance::load(checkpoint, d, unit_stream(), shared);
  CHECK(shared.spent().epsilon >= two);  // before the rule: reset to the checkpoint's 1.0
  CHECK(shared.ledger().size() == 2);

  // Four ε = 1 releases in all are over (2, 1e-6): the third is accepted, the fourth refused.
  release_epsilon_one(shared, mu);
  CHECK(shared.spent().epsilon <= 2.0);
  const std::string before = shared.save();
  CHECK_THROWS_AS(release_epsilon_one(shared, mu), BudgetExhausted);
  CHECK(shared.save() == before);
}

TEST_CASE("a fresh accountant adopts the checkpoint's ledger; a restore twice charges nothing more", "[restore][privacy]") {
  const Eigen::Index d = 3;
  PrivacyAccountant first(EpsDelta(2.0, 1e-6));
  ContinualCovariance sum(d, unit_stream(), first);
  const std::string checkpoint = sum.save();
  PrivacyAccountant fresh(EpsDelta(2.0, 1e-6));
  ContinualCovariance again = ContinualCovariance::load(checkpoint, d, unit_stream(), fresh);
  CHECK(same_ledger(fresh, first));
  ContinualCovariance twice = ContinualCovariance::load(checkpoint, d, unit_stream(), fresh);
  CHECK(same_ledger(fresh, first));
}

TEST_CASE("divergent ledgers: the common prefix, then both suffixes stay charged", "[restore][privacy]") {
  PrivacyAccountant a(EpsDelta(3.0, 1e-6));
  a.charge_pure("common", 0.25);
  const std::string common_only = a.save();
  PrivacyAccountant b = PrivacyAccountant::load(common_only);
  a.charge_pure("since the checkpoint", 0.5);
  b.charge_pure("in the checkpoint only", 0.75);
  a.restore(b.save());
  REQUIRE(a.ledger().size() == 3);
  CHECK(a.ledger()[0].label == "common");
  CHECK(a.ledger()[1].label == "since the checkpoint");
  CHECK(a.ledger()[2].label == "in the checkpoint only");
  CHECK(a.spent().basic_epsilon == Approx(1.5));

  // The checkpoint's ledger extends this one: adopted as it is.
  PrivacyAccountant c = PrivacyAccountant::load(common_only);
  c.restore(b.save());
  CHECK(same_ledger(c, b));

  // This one extends the checkpoint's: unchanged.
  const std::string a_before = a.save();
  a.restore(common_only);
  CHECK(a.save() == a_before);

  // The same charge made on two accountants is two releases, whatever its place: both count.
  PrivacyAccountant left(EpsDelta(3.0, 1e-6)), right(EpsDelta(3.0, 1e-6));
  left.charge_pure("alike", 0.25);
  right.charge_pure("alike", 0.25);
  right.restore(left.save());
  CHECK(right.ledger().size() == 2);
  CHECK(right.spent().basic_epsilon == Approx(0.5));

  // Two alike charges after a divergence are two releases: both count.
  PrivacyAccountant x(EpsDelta(3.0, 1e-6)), y(EpsDelta(3.0, 1e-6));
  x.charge_pure("first", 0.5);
  x.charge_pure("same", 0.25);
  y.charge_pure("same", 0.25);
  y.restore(x.save());
  CHECK(y.ledger().size() == 3);
}

TEST_CASE("a restore is refused, with nothing changed, for another budget or a merged ledger over it", "[restore][privacy]") {
  PrivacyAccountant a(EpsDelta(1.0, 1e-6));
  a.charge_pure("here", 0.75);
  const std::string before = a.save();

  PrivacyAccountant other_budget(EpsDelta(2.0, 1e-6));
  CHECK_THROWS_NAMING(a.restore(other_budget.save()), CorruptInput, Catch::Contains("another accounting"));
  PrivacyAccountant other_conversion(EpsDelta(1.0, 1e-6), privacy::ZcdpConversion::standard);
  CHECK_THROWS_AS(a.restore(other_conversion.save()), CorruptInput);
  CHECK_THROWS_AS(a.restore("not a ledger"), CorruptInput);

  PrivacyAccountant elsewhere(EpsDelta(1.0, 1e-6));
  elsewhere.charge_pure("there", 0.75);  // 1.5 together, over 1
  CHECK_THROWS_NAMING(a.restore(elsewhere.save()), BudgetExhausted, Catch::Contains("nothing was restored"));
  CHECK(a.save() == before);

  // Through a stream: the stream is not built, the accountant unchanged.
  const Eigen::Index d = 2;
  ContinualSumOptions o = unit_stream();
  PrivacyAccountant stream_side(EpsDelta(2.0, 1e-6));
  const std::string checkpoint = ContinualCovariance(d, o, stream_side).save();
  PrivacyAccountant full(EpsDelta(2.0, 1e-6));
  full.charge_pure("most of it", 1.9);
  const std::string full_before = full.save();
  CHECK_THROWS_AS(ContinualCovariance::load(checkpoint, d, o, full), BudgetExhausted);
  CHECK(full.save() == full_before);
}

TEST_CASE("a checkpoint saved without an accountant charges the one given at restore", "[restore][privacy]") {
  const Eigen::Index d = 2;
  const std::string checkpoint = ContinualCovariance(d, unit_stream(), test_budget::unaccounted()).save();
  PrivacyAccountant given(EpsDelta(2.0, 1e-6));
  ContinualCovariance restored = ContinualCovariance::load(checkpoint, d, unit_stream(), given);
  REQUIRE(given.ledger().size() == 1);
  CHECK(given.spent().epsilon == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("a stream rebuilt beside its own restored checkpoint counts twice", "[restore][privacy]") {
  // Two equal streams on one budget are two mechanisms: their charges have the same label and
  // parameters, and only the charge's id tells them apart when the checkpoint is restored.
  const Eigen::Index d = 2;
  PrivacyAccountant first(EpsDelta(3.0, 1e-6));
  const std::string checkpoint = ContinualCovariance(d, unit_stream(), first).save();
  PrivacyAccountant second(EpsDelta(3.0, 1e-6));
  ContinualCovariance rebuilt(d, unit_stream(), second);
  const double one = second.spent().epsilon;
  ContinualCovariance restored = ContinualCovariance::load(checkpoint, d, unit_stream(), second);
  CHECK(second.ledger().size() == 2);
  CHECK(second.spent().epsilon > one);
}

}  // namespace test_restore_accounting
