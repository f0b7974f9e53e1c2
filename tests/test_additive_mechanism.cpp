// The release protocol the Gaussian, Laplace and Huber mechanisms share (additive_mechanism.hpp),
// checked through the base, once for each: finite values first, pre-charge checks, the charge, then
// the draw; the default ledger label is the mechanism's short name.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/additive_mechanism.hpp"
#include "dpstream/privacy/gaussian_mechanism.hpp"
#include "dpstream/privacy/huber.hpp"
#include "dpstream/privacy/laplace_mechanism.hpp"
#include "dpstream/privacy/noise_source.hpp"
#include "unaccounted.hpp"

namespace test_additive_mechanism {

using namespace dpstream::privacy;
using dpstream::BudgetExhausted;
using dpstream::InvalidParameter;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Named {
  const AdditiveMechanism& mechanism;
  std::string name;   // heads the errors
  std::string label;  // the default ledger label
};

}  // namespace

TEST_CASE("every additive mechanism follows the one release protocol", "[additive]") {
  const GaussianMechanism gauss(1.0, EpsDelta(0.5, 1e-6));
  const LaplaceMechanism laplace(1.0, 0.5);
  const HuberMechanism huber = HuberMechanism::for_epsilon(1.0, 0.5);
  const std::vector<Named> all = {{gauss, "gaussian mechanism", "gaussian"},
                                  {laplace, "laplace mechanism", "laplace"},
                                  {huber, "huber mechanism", "huber"}};
  for (const Named& m : all) {
    INFO(m.name);
    // A non-finite entry: refused with the mechanism and the index named, nothing charged or drawn.
    // Room for one release at (0.5, 1e-6), not two: two cost ε = 1 by basic composition and ≈ √2·0.5
    // in Gaussian DP (ε grows about linearly in μ at this δ, and μ adds in quadrature).
    PrivacyAccountant accountant(EpsDelta(0.6, 1e-6));
    SeededNoiseSource noise(31), twin(31);
    Eigen::VectorXd bad = Eigen::VectorXd::Zero(3);
    bad[1] = kNaN;
    REQUIRE_THROWS_WITH(m.mechanism.add_noise(bad, noise, accountant),
                        m.name + ": value[1] is not finite, got nan");
    REQUIRE(accountant.ledger().empty());
    REQUIRE(noise.next_word() == twin.next_word());

    // One release: charged once under the default label; a second is past the budget and neither
    // changes the value nor draws.
    Eigen::VectorXd v = Eigen::VectorXd::Constant(3, 2.0);
    m.mechanism.add_noise(v, noise, accountant);
    REQUIRE(accountant.ledger().size() == 1);
    REQUIRE(accountant.ledger()[0].label == m.label);
    REQUIRE(v != Eigen::VectorXd::Constant(3, 2.0));
    // The same release on a second stream of the same seed: the stream's state past the first release.
    SeededNoiseSource after(31);
    after.next_word();  // the word the first check above read from `noise`
    Eigen::VectorXd unaccounted = Eigen::VectorXd::Constant(3, 2.0);
    m.mechanism.add_noise(unaccounted, after, test_budget::unaccounted());
    REQUIRE(unaccounted == v);  // the charge draws nothing: same noise with or without an accountant
    const Eigen::VectorXd before = v;
    REQUIRE_THROWS_AS(m.mechanism.add_noise(v, noise, accountant, "second"), BudgetExhausted);
    REQUIRE_THROWS_AS(m.mechanism.release(1.0, noise, accountant), BudgetExhausted);
    REQUIRE(v == before);
    REQUIRE(accountant.ledger().size() == 1);
    REQUIRE(noise.next_word() == after.next_word());

    // The vector and scalar releases draw the same noise as add_noise on the same stream.
    SeededNoiseSource a(7), b(7), c(7);
    Eigen::VectorXd x(1);
    x[0] = 0.25;
    const Eigen::VectorXd released = m.mechanism.release(x, a, test_budget::unaccounted());
    m.mechanism.add_noise(x, b, test_budget::unaccounted());
    REQUIRE(released == x);
    REQUIRE(m.mechanism.release(0.25, c, test_budget::unaccounted()) == x[0]);
  }
}

TEST_CASE("the Laplace size check refuses before the charge", "[additive]") {
  // ε this small with a large vector needs a noise scale over 2^62 grid steps: refused, nothing charged.
  const LaplaceMechanism laplace(1.0, 1e-300);
  PrivacyAccountant accountant(EpsDelta(1.0, 0.0));
  SeededNoiseSource noise(3);
  Eigen::VectorXd v = Eigen::VectorXd::Zero(4);
  REQUIRE_THROWS_AS(laplace.add_noise(v, noise, accountant), InvalidParameter);
  REQUIRE(accountant.ledger().empty());
}

}  // namespace test_additive_mechanism
