// privacy::Budget: an accountant, or a stated reason why a release is not accounted; never a silent
// null (budget.hpp).
#include <catch2/catch.hpp>

#include <cstddef>
#include <type_traits>

#include <Eigen/Core>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/gaussian_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace test_budget_handle {

using namespace dpstream::privacy;
using Catch::Matchers::Contains;

// A null accountant does not convert to a budget, neither as nullptr nor as a pointer: the caller
// that does not account must call unaccounted(why).
static_assert(!std::is_constructible_v<Budget, std::nullptr_t>);
static_assert(!std::is_convertible_v<PrivacyAccountant*, Budget>);
static_assert(std::is_convertible_v<PrivacyAccountant&, Budget>);

TEST_CASE("Budget: an accountant is charged, an unaccounted budget keeps its reason", "[budget]") {
  PrivacyAccountant accountant(EpsDelta(1.0, 1e-6));
  const Budget accounted = accountant;
  CHECK(accounted.accounted());
  CHECK(accounted.accountant() == &accountant);
  CHECK(accounted.reason().empty());
  CHECK(accounted.describe() == "accounted against (epsilon=1, delta=1e-06)");

  const Budget none = Budget::unaccounted("the tool's --nonprivate baseline");
  CHECK_FALSE(none.accounted());
  CHECK(none.accountant() == nullptr);
  CHECK(none.reason() == "the tool's --nonprivate baseline");
  CHECK(none.describe() == "not accounted: the tool's --nonprivate baseline");

  CHECK_THROWS_NAMING(Budget::unaccounted(""), dpstream::InvalidParameter, Contains("the reason must be stated"));
  CHECK(Budget::either(&accountant, "unused").accountant() == &accountant);
  CHECK(Budget::either(nullptr, "no accountant here").describe() == "not accounted: no accountant here");
  CHECK_THROWS_AS(Budget::either(nullptr, ""), dpstream::InvalidParameter);
}

TEST_CASE("Budget: a release charges the accountant only through an accounted budget", "[budget]") {
  PrivacyAccountant accountant(EpsDelta(1.0, 1e-6));
  const GaussianMechanism mechanism(1.0, EpsDelta(0.5, 1e-7));
  SeededNoiseSource noise(3);
  Eigen::VectorXd value = Eigen::VectorXd::Zero(4);
  mechanism.add_noise(value, noise, Budget::unaccounted("a test of the noise"));
  CHECK(accountant.ledger().empty());
  mechanism.add_noise(value, noise, accountant, "charged");
  REQUIRE(accountant.ledger().size() == 1);
  CHECK(accountant.ledger()[0].label == "charged");
}

}  // namespace test_budget_handle
