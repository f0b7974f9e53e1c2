// privacy::PrivacySpec: the checks every estimator shares and the one way its noise source is made
// (privacy_spec.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/privacy/privacy_spec.hpp"

namespace test_privacy_spec {

using namespace dpstream::privacy;
using Catch::Matchers::Contains;
using dpstream::InvalidParameter;

TEST_CASE("PrivacySpec: validate names the estimator and the field", "[privacy_spec]") {
  PrivacySpec spec;
  spec.validate("X");  // the defaults are valid
  spec.row_norm_bound = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_NAMING(spec.validate("X"), InvalidParameter, Contains("X row_norm_bound must be finite and > 0, got nan"));
  spec.row_norm_bound = 1.0;
  spec.target = EpsDelta(1.0, 0.0);
  spec.validate("X");  // pure DP is a valid target for a Laplace estimator
  CHECK_THROWS_NAMING(spec.validate_gaussian("X"), InvalidParameter,
                      Contains("X: target.delta must be > 0 (Gaussian noise is never pure DP), got 0"));
}

TEST_CASE("PrivacySpec: the estimators refuse a bad spec before any noise", "[privacy_spec]") {
  dpstream::pca::NoisyPowerMethodOptions npm;
  npm.privacy.row_norm_bound = -1.0;
  CHECK_THROWS_NAMING(dpstream::pca::NoisyPowerMethod(4, npm), InvalidParameter,
                      Contains("NoisyPowerMethod row_norm_bound must be finite and > 0, got -1"));
  dpstream::pca::PrivateOjaOptions oja;
  oja.privacy.target = EpsDelta(1.0, 0.0);
  CHECK_THROWS_NAMING(dpstream::pca::PrivateOja{oja}, InvalidParameter,
                      Contains("PrivateOja: target.delta must be > 0 (Gaussian noise is never pure DP)"));
}

TEST_CASE("NoiseSpec: a seed gives the seeded source, none the secure one", "[privacy_spec]") {
  NoiseSpec seeded{7};
  const auto a = seeded.make_source(), b = seeded.make_source();
  CHECK_FALSE(a->is_secure());
  CHECK(a->next_word() == b->next_word());  // reproducible
  CHECK(NoiseSpec{}.make_source()->is_secure());
}

}  // namespace test_privacy_spec
