// StreamingCompletion: refresh schedule, the budget split across refreshes, nothing lost on refusal.
#include <catch2/catch.hpp>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/completion/streaming_completion.hpp"
#include "dpstream/privacy/calibration.hpp"

namespace test_streaming_completion {

using namespace dpstream;
using namespace dpstream::completion;

namespace {

// A stand-in model: one Gaussian release (sensitivity 1) calibrated to the refresh's share, as a
// private trainer would; predicts the pool's size so the test can see which refresh is in service.
struct RecordingTrainer {
  std::vector<Eigen::Index> pool_sizes;
  RatingPredictor operator()(const RatingsMatrix& pool, const RefreshBudget& budget,
                             privacy::PrivacyAccountant& accountant) {
    accountant.charge_gaussian("refresh " + std::to_string(budget.refresh), 1.0,
                               privacy::analytic_gaussian_sigma(1.0, budget.gaussian_share), budget.gaussian_share);
    pool_sizes.push_back(pool.users());
    const double users = static_cast<double>(pool.users());
    return [users](Eigen::Index, Eigen::Index) { return users; };
  }
};

std::vector<std::pair<Eigen::Index, double>> one_rating(Eigen::Index item) { return {{item, 1.0}}; }

}  // namespace

TEST_CASE("streaming completion refreshes every B users on all users so far", "[streaming]") {
  auto recorder = std::make_shared<RecordingTrainer>();
  StreamingCompletionOptions o;
  o.items = 5;
  o.refresh_every = 3;
  o.planned_refreshes = 4;
  o.budget = privacy::EpsDelta(1.0, 1e-6);
  StreamingCompletion stream(o, [recorder](const RatingsMatrix& m, const RefreshBudget& b, privacy::PrivacyAccountant& a) {
    return (*recorder)(m, b, a);
  });
  CHECK_FALSE(stream.has_model());
  CHECK_THROWS_NAMING(stream.model(), InvalidParameter, Catch::Contains("no model before the first refresh"));
  for (Eigen::Index u = 0; u < 12; ++u) REQUIRE(stream.add_user(one_rating(u % 5)) == u);
  CHECK(recorder->pool_sizes == std::vector<Eigen::Index>{3, 6, 9, 12});
  CHECK(stream.refreshes() == 4);
  CHECK(stream.model()(0, 0) == 12.0);
  // Four shares composed: within the budget, and most of it used (the split wastes nothing).
  const auto spent = stream.accountant().spent();
  CHECK(spent.epsilon <= 1.0 * (1 + 1e-9));
  CHECK(spent.epsilon >= 0.999);

  // The fifth refresh is refused; the users who arrive are kept and the last model stays.
  REQUIRE_NOTHROW(stream.add_user(one_rating(1)));
  REQUIRE_NOTHROW(stream.add_user(one_rating(2)));
  // Called once (CHECK_THROWS_NAMING would add the user twice).
  try {
    stream.add_user(one_rating(3));
    FAIL("the fifth refresh was not refused");
  } catch (const BudgetExhausted& e) {
    CHECK_THAT(e.what(), Catch::Contains("refresh 5 refused"));
  }
  CHECK(stream.users() == 15);
  CHECK(stream.ratings().size() == 15u);
  CHECK(stream.pending_users() == 3);
  CHECK(stream.model()(0, 0) == 12.0);
  CHECK(recorder->pool_sizes.size() == 4u);
}

TEST_CASE("streaming completion: pure-epsilon shares sum to the budget", "[streaming]") {
  StreamingCompletionOptions o;
  o.items = 2;
  o.refresh_every = 1;
  o.planned_refreshes = 5;
  o.budget = privacy::EpsDelta(2.0, 1e-6);
  StreamingCompletion stream(o, [](const RatingsMatrix&, const RefreshBudget& b, privacy::PrivacyAccountant& a) {
    a.charge_pure("laplace refresh", b.pure_share_epsilon);
    return RatingPredictor([](Eigen::Index, Eigen::Index) { return 0.0; });
  });
  CHECK(stream.share().pure_share_epsilon == 0.4);
  for (int u = 0; u < 5; ++u) stream.add_user(one_rating(0));
  CHECK(stream.accountant().spent().basic_epsilon == Approx(2.0).epsilon(1e-12));
  CHECK_THROWS_AS(stream.refresh(), BudgetExhausted);
}

TEST_CASE("streaming completion refuses bad users and options, naming them", "[streaming][errors]") {
  StreamingCompletionOptions o;
  o.items = 3;
  o.refresh_every = 10;
  const auto never = [](const RatingsMatrix&, const RefreshBudget&, privacy::PrivacyAccountant&) {
    return RatingPredictor([](Eigen::Index, Eigen::Index) { return 0.0; });
  };
  StreamingCompletion stream(o, never);
  CHECK_THROWS_NAMING(stream.add_user({{3, 1.0}}), InvalidParameter, Catch::Contains("user 0, item 3: item outside [0, 3)"));
  CHECK_THROWS_NAMING(stream.add_user({{1, 1.0}, {1, 2.0}}), InvalidParameter, Catch::Contains("user 0, item 1: rated twice"));
  CHECK_THROWS_NAMING(stream.add_user({{2, std::nan("")}}), InvalidParameter, Catch::Contains("rating is not finite"));
  CHECK(stream.users() == 0);  // nothing half-added
  CHECK(stream.add_user({{0, 4.0}, {2, 1.0}}) == 0);
  o.refresh_every = 0;
  CHECK_THROWS_NAMING(StreamingCompletion(o, never), InvalidParameter, Catch::Contains("refresh_every"));
  o.refresh_every = 1;
  o.planned_refreshes = 0;
  CHECK_THROWS_NAMING(StreamingCompletion(o, never), InvalidParameter, Catch::Contains("planned_refreshes"));
  o.planned_refreshes = 1;
  CHECK_THROWS_NAMING(StreamingCompletion(o, RefreshTrainer{}), InvalidParameter, Catch::Contains("trainer"));
}

}  // namespace test_streaming_completion
