// The memory limit: every component whose state grows as d² (or T·d²) refuses, naming what, the
// bytes and the limit, before it allocates — instead of std::bad_alloc after seconds at gigabytes
// (a CSV of 20,000 columns; an IDX header declaring d = 30,000).
#include <string>

#include <catch2/catch.hpp>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/memory_limit.hpp"
#include "dpstream/pca/gaussian_pca.hpp"
#include "dpstream/pca/noisy_power_method.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/stream/accumulators.hpp"
#include "dpstream/stream/continual_sum.hpp"
#include "unaccounted.hpp"

namespace test_memory_limit {

using namespace dpstream;
using Catch::Matchers::Contains;

// Restores the machine's default when a case ends, whatever it threw.
struct LimitScope {
  explicit LimitScope(std::uint64_t bytes) { set_memory_limit(bytes); }
  ~LimitScope() { set_memory_limit(0); }
};

TEST_CASE("the default limit is the machine's, and set_memory_limit(0) restores it") {
  CHECK(machine_memory_limit() >= (std::uint64_t{1} << 28));
  {
    LimitScope scope(12345);
    CHECK(memory_limit() == 12345);
  }
  CHECK(memory_limit() == machine_memory_limit());
  CHECK(bytes_text(1.5 * 1024 * 1024 * 1024) == "1.50 GiB");
  CHECK(bytes_text(512) == "512 bytes");
}

TEST_CASE("d² components refuse over the limit before allocating, naming d, the bytes and the limit") {
  LimitScope scope(64u << 20);  // 64 MiB: d = 1,000 needs 8 MB a d × d matrix, d = 20,000 3.2 GB
  using Covariance = stream::ContinualSum<stream::CovarianceAccumulator>;
  stream::ContinualSumOptions options;
  options.horizon = 100;
  options.privacy.noise.seed = 1;
  privacy::PrivacyAccountant accountant(privacy::EpsDelta{1.0, 1e-6});
  CHECK_THROWS_MATCHES(Covariance(20000, options, accountant), ResourceLimit,
                       Catch::Matchers::Predicate<ResourceLimit>([](const ResourceLimit& e) {
                         const std::string m = e.what();
                         return m.find("dimension 20000") != std::string::npos &&
                                m.find("GiB") != std::string::npos && m.find("limit of 64.00 MiB") != std::string::npos;
                       }));
  CHECK(accountant.spent().epsilon == 0);  // refused before the charge
  CHECK_THROWS_AS(stream::CovarianceAccumulator(20000), ResourceLimit);
  pca::GaussianPcaOptions gauss;
  gauss.k = 2;
  gauss.mechanism.privacy.noise.seed = 1;
  CHECK_THROWS_WITH(pca::GaussianPca(20000, gauss), Contains("Gaussian PCA of dimension 20000"));
  pca::NoisyPowerMethodOptions power;
  power.k = 2;
  power.privacy.noise.seed = 1;
  CHECK_THROWS_AS(pca::NoisyPowerMethod(20000, power), ResourceLimit);
  // What fits is built: d = 100 needs well under 1 MiB.
  CHECK_NOTHROW(Covariance(100, options, accountant));
  CHECK_NOTHROW(pca::GaussianPca(100, gauss));
}

TEST_CASE("a horizon that makes a strategy's state grow as T is refused at a size that fits per step") {
  LimitScope scope(64u << 20);
  // The square-root Toeplitz reference keeps every past draw: 10⁶ releases of a 10 × 10 covariance
  // (55 packed entries) are 440 MB of draws, though one step's state is a few kB.
  using Covariance = stream::ContinualSum<stream::CovarianceAccumulator>;
  stream::ContinualSumOptions options;
  options.privacy.noise.seed = 1;
  options.strategy = stream::NoiseStrategy::sqrt_toeplitz;
  options.horizon = 1000000;
  CHECK_THROWS_WITH(Covariance(10, options, test_budget::unaccounted()), Contains("sqrt_toeplitz, 1000000 releases") && Contains("memory limit"));
  options.strategy = stream::NoiseStrategy::separable;  // α of every step: 8 bytes × 4 × 10⁸ = 3.2 GB
  options.horizon = 100000000;
  CHECK_THROWS_AS(Covariance(10, options, test_budget::unaccounted()), ResourceLimit);
}

}  // namespace test_memory_limit
