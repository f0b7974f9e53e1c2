// Checkpoints written before the base layer and the restore rules still load, through the restore
// rules, and continue bit for bit as that build continued them (compat_fixtures.hpp).
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "compat_fixtures.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/stream/continual_sum.hpp"

namespace test_checkpoint_compat {

using namespace dpstream;
using privacy::EpsDelta;
using privacy::PrivacyAccountant;

namespace {

std::string bytes_of(const char* hex) {
  std::string out;
  for (const char* p = hex; p[0] != '\0' && p[1] != '\0'; p += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(p, 2), nullptr, 16)));
  return out;
}

}  // namespace

TEST_CASE("a ContinualCovariance checkpoint and ledger of the earlier build load and continue bit for bit",
          "[restore][compat]") {
  stream::ContinualSumOptions o;  // as the fixture's stream was built (compat_fixtures.hpp)
  o.horizon = 8;
  o.block_rows = 2;
  o.privacy.target = EpsDelta(1.0, 1e-6);
  o.privacy.noise.seed = 11;
  o.strategy = stream::parse_noise_strategy("tree");   // the Python package's defaults
  o.shape = privacy::SymmetricNoiseShape::goe;
  const std::string checkpoint = bytes_of(compat_fixtures::kContinualCovarianceCheckpoint);
  const std::string ledger = bytes_of(compat_fixtures::kLedger);

  // The ledger alone, and as the checkpoint carries it: a fresh accountant adopts it.
  const PrivacyAccountant saved = PrivacyAccountant::load(ledger);
  REQUIRE(saved.ledger().size() == 1);
  PrivacyAccountant fresh(EpsDelta(4.0, 1e-6));
  stream::ContinualCovariance restored = stream::ContinualCovariance::load(checkpoint, 3, o, fresh);
  CHECK(fresh.save() == saved.save());
  CHECK(restored.steps() == 2);
  CHECK(restored.rows() == 5);

  // The earlier build's next releases, from the same rows: the same values, bit for bit.
  const double rows[3][3] = {{0.1, -0.2, 0.3}, {0.0, 0.4, 0.4}, {0.6, 0.0, -0.1}};
  for (const auto& r : rows) restored.update(Eigen::Map<const Eigen::VectorXd>(r, 3));
  REQUIRE(restored.steps() == 4);
  const Eigen::MatrixXd& release = restored.noisy_prefix();
  for (int i = 0; i < 9; ++i) CHECK(release(i % 3, i / 3) == compat_fixtures::kReleaseAfterRestore[i]);
}

}  // namespace test_checkpoint_compat
