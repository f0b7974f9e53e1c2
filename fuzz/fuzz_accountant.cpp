// libFuzzer target: privacy::PrivacyAccountant::load (include/dpstream/privacy/accountant.hpp).
//
// Documented errors: CorruptInput only. When it succeeds:
//  * the ledger is in the documented domain (ρ finite > 0 when present, ε not NaN and ≥ 0, ε = +inf
//    only with ρ, δ in [0, 1)), and spent() is within the budget (load refuses the rest);
//  * save → load gives an identical ledger (budget, conversion, every charge's label,
//    ρ, ε, δ), and serializing that again gives the same bytes.
// spent() and remaining_epsilon() must not throw on a ledger load accepted.
#include <cmath>
#include <cstdint>
#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "fuzz_common.hpp"

using dpstream::CorruptInput;
using dpstream::privacy::PrivacyAccountant;

namespace {

// Same value: == for numbers (so -0.0 matches 0.0: proto3 may drop a -0.0 default), and NaN never
// passes the domain check, so it cannot be in a ledger.
bool same_ledger(const PrivacyAccountant& a, const PrivacyAccountant& b) {
  if (a.budget().epsilon() != b.budget().epsilon() || a.budget().delta() != b.budget().delta()) return false;
  if (a.conversion() != b.conversion()) return false;
  if (a.ledger().size() != b.ledger().size()) return false;
  for (std::size_t i = 0; i < a.ledger().size(); ++i) {
    const auto& x = a.ledger()[i];
    const auto& y = b.ledger()[i];
    if (x.label != y.label || x.rho.has_value() != y.rho.has_value()) return false;
    if (x.rho && *x.rho != *y.rho) return false;
    if (x.epsilon != y.epsilon || x.delta != y.delta) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const PrivacyAccountant acc = PrivacyAccountant::load(bytes);
    for (const auto& c : acc.ledger()) {
      if (c.rho) FUZZ_CHECK(std::isfinite(*c.rho) && *c.rho > 0);
      FUZZ_CHECK(!std::isnan(c.epsilon) && c.epsilon >= 0);
      if (std::isinf(c.epsilon)) FUZZ_CHECK(c.rho.has_value());
      FUZZ_CHECK(c.delta >= 0 && c.delta < 1);
    }
    const auto spent = acc.spent();
    FUZZ_CHECK(!std::isnan(spent.epsilon));
    (void)acc.remaining_epsilon();

    const std::string once = acc.save();
    PrivacyAccountant back = [&] {
      try {
        return PrivacyAccountant::load(once);
      } catch (const CorruptInput& e) {
        std::fprintf(stderr, "re-load failed: %s\n", e.what());
        dpstream_fuzz::fuzz_fail("a ledger load accepted does not read back after save");
      }
    }();
    if (!same_ledger(acc, back)) dpstream_fuzz::fuzz_fail("save -> load changed the ledger");
    if (back.save() != once) dpstream_fuzz::fuzz_fail("save is not stable across a round trip");
  } catch (const CorruptInput&) {
  }
  return 0;
}
