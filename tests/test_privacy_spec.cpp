// privacy::PrivacySpec: the checks every estimator shares and the one way its noise source is made
// (privacy_spec.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "check_throws.hpp"
#include "dpstream/base/errors.hpp"
#include "dpstream/pca/find_and_project.hpp"
#include "dpstream/pca/input_perturbation.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/pca/private_pca_method.hpp"
#include "dpstream/pca/private_oja.hpp"
#include "dpstream/privacy/privacy_spec.hpp"
#include "dpstream/stream/continual_sum.hpp"

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

TEST_CASE("PrivacySpec: a stream's default relation is zero_out_row; its L is checked by name", "[privacy_spec]") {
  dpstream::stream::ContinualSumOptions o;
  CHECK(o.privacy.relation == Neighbours::zero_out_row);
  o.privacy.row_norm_bound = 0.0;
  CHECK_THROWS_NAMING(dpstream::stream::ContinualCovariance(3, o, Budget::unaccounted("a refused build")),
                      InvalidParameter, Contains("continual sum: row_norm_bound must be finite and > 0, got 0"));
}

TEST_CASE("PrivacySpec: a method's spec must state the relation its release holds for", "[privacy_spec]") {
  using dpstream::pca::PrivatePcaMethod;
  dpstream::pca::PrivatePcaMethodOptions o;
  o.k = 2;
  o.method = "streaming-oja";  // a stream over minibatch slots: zero_out_row, not the default
  CHECK_THROWS_NAMING(PrivatePcaMethod(o, 4), InvalidParameter,
                      Contains("private PCA: streaming-oja's guarantee is for relation zero_out_row"));
  o.privacy.relation = dpstream::pca::private_pca_relation(o.method);
  CHECK(PrivatePcaMethod(o, 4).relation() == Neighbours::zero_out_row);
  o.method = "gauss";
  CHECK_THROWS_NAMING(PrivatePcaMethod(o, 4), InvalidParameter,
                      Contains("gauss's guarantee is for relation add_remove_row"));
}

TEST_CASE("PrivacySpec: HR12's estimators read L from the spec; its relation must match, its seed be unset",
          "[privacy_spec]") {
  using dpstream::pca::MatrixNeighbours;
  dpstream::pca::InputPerturbationOptions rr;
  rr.relation = MatrixNeighbours::replace_row;  // Δ = 2L, stated in the spec as replace_row
  CHECK_THROWS_NAMING(dpstream::pca::InputPerturbation{rr}, InvalidParameter,
                      Contains("InputPerturbation: privacy.relation must be replace_row for relation replace_row, "
                               "got add_remove_row"));
  rr.privacy.relation = Neighbours::replace_row;
  rr.privacy.row_norm_bound = 3.0;
  CHECK(dpstream::pca::InputPerturbation{rr}.sensitivity() == 6.0);
  dpstream::pca::RangeFinderOptions range;
  range.privacy.noise.seed = 1;  // the noise is release()'s source: a seed here would be silently unused
  CHECK_THROWS_NAMING(dpstream::pca::PrivateRangeFinder{range}, InvalidParameter,
                      Contains("PrivateRangeFinder: privacy.noise.seed must be unset"));
  dpstream::pca::FindAndProjectOptions pfp;
  pfp.relation = MatrixNeighbours::row_change;  // HR12's unit: one row changed by at most L
  pfp.privacy.relation = Neighbours::replace_row;
  pfp.privacy.row_norm_bound = 2.0;
  CHECK(dpstream::pca::PrivateFindAndProject{pfp}.projection().row_change() == 2.0);
}

TEST_CASE("NoiseSpec: a seed gives the seeded source, none the secure one", "[privacy_spec]") {
  NoiseSpec seeded{7};
  const auto a = seeded.make_source(), b = seeded.make_source();
  CHECK_FALSE(a->is_secure());
  CHECK(a->next_word() == b->next_word());  // reproducible
  CHECK(NoiseSpec{}.make_source()->is_secure());
}

}  // namespace test_privacy_spec
