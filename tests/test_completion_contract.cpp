// The completion estimators fit the estimator contract (dpstream/estimator.hpp) through their
// adapters (completion/estimator_adapters.hpp): the trainers as one-shot estimators, whose release
// is their train() (the same charge, the same draws); the two streams as fed streams, whose
// subscribers see every release, in order, as it is made.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "dpstream/completion/dpam_als.hpp"
#include "dpstream/completion/estimator_adapters.hpp"
#include "dpstream/completion/private_als.hpp"
#include "dpstream/completion/private_baseline.hpp"
#include "dpstream/completion/private_frank_wolfe.hpp"
#include "dpstream/estimator.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "random_ratings.hpp"

namespace test_completion_contract {

using namespace dpstream;
using namespace dpstream::completion;

static_assert(OneShotEstimator<OneShot<PrivateAls>, RatingsMatrix>);
static_assert(OneShotEstimator<OneShot<DpamAls>, RatingsMatrix>);
static_assert(OneShotEstimator<OneShot<PrivateFrankWolfe>, RatingsMatrix>);
static_assert(OneShotEstimator<OneShot<PrivateBaseline>, RatingsMatrix>);
static_assert(!OneShotEstimator<PrivateAls, RatingsMatrix>);  // its own shape is train()
static_assert(FedStream<UserStream<StreamingCompletion>, UserRows>);
static_assert(FedStream<UserStream<Recommender>, UserRows>);
static_assert(!FedStream<Recommender, UserRows>);  // its own shape is add() / flush()

namespace {

RatingsMatrix matrix(const UserRows& rows, Eigen::Index items) {
  std::vector<Rating> ratings;
  for (std::size_t u = 0; u < rows.size(); ++u)
    for (const auto& [item, value] : rows[u]) ratings.push_back({static_cast<Eigen::Index>(u), item, value});
  return RatingsMatrix(static_cast<Eigen::Index>(rows.size()), items, ratings);
}

}  // namespace

TEST_CASE("a trainer's release through OneShot is its train(): one charge, the same draws") {
  const RatingsMatrix data = matrix(testing::random_rating_rows(40, 6, 0.4, 3), 6);
  const privacy::EpsDelta target(1.0, 1e-6);
  privacy::PrivacyAccountant direct_budget(target), adapted_budget(target);
  PrivateBaseline direct(BaselineOptions{}, target, 0.25, 7);
  OneShot<PrivateBaseline> adapted(BaselineOptions{}, target, 0.25, 7);
  const BaselineRelease a = direct.train(data, direct_budget);
  const BaselineRelease b = adapted.release(data, adapted_budget);
  CHECK(a.released.global == b.released.global);
  CHECK(a.released.items == b.released.items);
  REQUIRE(adapted_budget.ledger().size() == 1);
  CHECK(adapted_budget.spent().epsilon == direct_budget.spent().epsilon);
  CHECK(adapted_budget.spent().epsilon > 0);
}

TEST_CASE("UserStream<StreamingCompletion> publishes each refresh as the users complete it") {
  StreamingCompletionOptions o;
  o.items = 4;
  o.refresh_every = 3;
  o.planned_refreshes = 3;
  std::vector<Eigen::Index> pools;
  UserStream<StreamingCompletion> s(
      o, [&pools](const RatingsMatrix& pool, const RefreshBudget& share, privacy::PrivacyAccountant& accountant) {
        accountant.charge_gaussian("refresh", 1.0, privacy::analytic_gaussian_sigma(1.0, share.gaussian_share),
                                   share.gaussian_share);
        pools.push_back(pool.users());
        const double users = static_cast<double>(pool.users());
        return RatingPredictor([users](Eigen::Index, Eigen::Index) { return users; });
      });
  std::vector<long> steps;
  std::vector<double> served;
  s.subscribe([&](const UserStream<StreamingCompletion>::Release& r) {
    steps.push_back(r.step);
    served.push_back(r.model(0, 0));
  });
  s.update_block(testing::random_rating_rows(7, 4, 0.5, 1));
  CHECK(steps == std::vector<long>{1, 2});
  CHECK(served == std::vector<double>{3, 6});
  s.flush();  // the seventh user
  CHECK(steps == std::vector<long>{1, 2, 3});
  CHECK(pools == std::vector<Eigen::Index>{3, 6, 7});
  CHECK(s.stream().accountant().ledger().size() == 3);
}

TEST_CASE("UserStream<Recommender> publishes each release of the item sum, as a direct Recommender makes them") {
  RecommenderOptions o;
  o.items = 6;
  o.release_every = 4;
  const UserRows users = testing::random_rating_rows(10, 6, 0.4, 2);
  privacy::PrivacyAccountant budget(privacy::EpsDelta(1.0, 1e-6));
  UserStream<Recommender> s(o, privacy::Budget(budget));
  std::vector<std::uint64_t> steps;
  std::vector<Eigen::VectorXd> released;
  s.subscribe([&](const UserStream<Recommender>::Release& r) {
    steps.push_back(r.step);
    released.push_back(r.released);
    CHECK(&r.model == &s.stream().model());
  });
  s.update_block(UserRows(users.begin(), users.begin() + 5));
  s.update_block(UserRows(users.begin() + 5, users.end()));
  CHECK(steps == std::vector<std::uint64_t>{1, 2});
  s.flush();  // users 9 and 10
  REQUIRE(steps == std::vector<std::uint64_t>{1, 2, 3});
  CHECK(released.back() == s.stream().released());
  CHECK(budget.ledger().size() == 1);  // the one charge, at construction
  // A Recommender fed the same users directly releases as often.
  privacy::PrivacyAccountant other(privacy::EpsDelta(1.0, 1e-6));
  Recommender direct(o, other);
  for (const auto& user : users) direct.add(user);
  direct.flush();
  CHECK(direct.releases() == 3);
}

}  // namespace test_completion_contract
