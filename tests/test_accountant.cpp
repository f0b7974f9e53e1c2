// Privacy accountant: composition (basic vs zCDP), refusals, and the protobuf ledger.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/calibration.hpp"

namespace test_accountant {

using namespace dpstream::privacy;
using dpstream::BudgetExhausted;
using dpstream::CorruptInput;
using dpstream::InvalidParameter;
using dpstream::base::format_value;
using Catch::Contains;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A minimal protobuf wire-format writer, independent of the generated code, to craft ledgers
// (valid and corrupt) byte by byte. Field numbers follow lib/proto/privacy_ledger.proto.
struct Wire {
  std::string out;
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  void key(int field, int wire_type) { varint(static_cast<std::uint64_t>(field << 3 | wire_type)); }
  void u(int field, std::uint64_t v) { key(field, 0); varint(v); }
  void d(int field, double v) {
    key(field, 1);
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  }
  void bytes(int field, const std::string& s) { key(field, 2); varint(s.size()); out += s; }
};

struct RawCharge {
  std::string label = "c";
  bool has_rho = true;
  double rho = 0.01;
  double epsilon = kInf;
  double delta = 0.0;
  bool gaussian = false;
};

std::string ledger_bytes(std::uint32_t version, double budget_eps, double budget_delta, int conversion,
                         const std::vector<RawCharge>& charges) {
  Wire w;
  w.u(1, version);
  w.d(2, budget_eps);
  w.d(3, budget_delta);
  w.u(4, static_cast<std::uint64_t>(conversion));
  for (const RawCharge& c : charges) {
    Wire m;
    m.bytes(1, c.label);
    m.u(2, c.has_rho ? 1 : 0);
    m.d(3, c.rho);
    m.d(4, c.epsilon);
    m.d(5, c.delta);
    if (c.gaussian) m.u(6, 1);
    w.bytes(5, m.out);
  }
  return dpstream::base::seal_message(w.out);  // sealed as save() does, so the checks behind the seal run
}

bool same_ledger(const PrivacyAccountant& a, const PrivacyAccountant& b) {
  if (a.budget().epsilon() != b.budget().epsilon() || a.budget().delta() != b.budget().delta()) return false;
  if (a.conversion() != b.conversion() || a.ledger().size() != b.ledger().size()) return false;
  for (std::size_t i = 0; i < a.ledger().size(); ++i) {
    const Charge &x = a.ledger()[i], &y = b.ledger()[i];
    if (x.label != y.label || x.rho != y.rho || x.epsilon != y.epsilon || x.delta != y.delta) return false;
  }
  return true;
}
}  // namespace

TEST_CASE("empty ledger spends nothing", "[accountant]") {
  const PrivacyAccountant acc(EpsDelta(1.0, 1e-6));
  const Spent s = acc.spent();
  CHECK(s.epsilon == 0.0);
  CHECK(s.delta == 0.0);
  CHECK(s.rho == 0.0);
  CHECK(acc.remaining_epsilon() == 1.0);
  CHECK(acc.conversion() == ZcdpConversion::cks2020);
}

TEST_CASE("k Gaussian charges at the composed sigma spend exactly the budget", "[accountant][gaussian]") {
  const EpsDelta budget(1.0, 1e-6);
  for (long k : {1L, 10L, 64L}) {
    PrivacyAccountant acc(budget);
    const double sigma = gaussian_sigma_for_composition(1.0, budget, k, Calibration::tight);
    for (long i = 0; i < k; ++i) acc.charge_gaussian("node " + std::to_string(i), 1.0, sigma);
    // Every charge is Gaussian: the GDP bound, μ = √k/σ = the target's exact μ (σ bisected to 1e-12
    // relative, the profile's ε then within ~1e-11): spent ε is the budget within 1e-6, the contract.
    const Spent s = acc.spent();
    INFO("k=" << k);
    CHECK(s.epsilon == Approx(1.0).epsilon(1e-6));
    CHECK(s.delta == 1e-6);
    CHECK(s.basic_epsilon == kInf);  // charges without a single-release guarantee count only through ρ
    CHECK(s.gdp_epsilon == s.epsilon);
    CHECK(s.zcdp_epsilon > s.epsilon);  // CKS bounds every ρ-zCDP mechanism: looser for Gaussians
    CHECK(std::sqrt(2 * s.rho) == Approx(gdp_mu_for_budget(budget)).epsilon(1e-12));
    CHECK(acc.remaining_epsilon() < 1e-6);

    // One more is refused, names the label, the ε it would reach and the budget; the ledger is unchanged.
    const std::string before = acc.save();
    Charge extra{"x", gaussian_rho(1.0, sigma), kInf, 0.0};
    extra.gaussian = true;
    REQUIRE_THROWS_AS(acc.charge_gaussian("one too many", 1.0, sigma), BudgetExhausted);
    REQUIRE_THROWS_WITH(acc.charge_gaussian("one too many", 1.0, sigma),
                        Contains("one too many") && Contains("(epsilon=1, delta=1e-06)") &&
                            Contains(format_value(acc.spent_with(extra).epsilon)) && Contains("GDP"));
    CHECK(acc.ledger().size() == static_cast<std::size_t>(k));
    CHECK(acc.save() == before);
    CHECK(acc.spent().epsilon == s.epsilon);
  }
}

TEST_CASE("GDP bound: only when every charge is Gaussian; it survives a round trip", "[accountant][gaussian]") {
  const EpsDelta budget(1.0, 1e-6);
  const double mu = gdp_mu_for_budget(budget);
  // Two Gaussian halves of μ²: accepted under GDP, where the same ρ as zCDP-only charges is refused.
  PrivacyAccountant gdp(budget);
  const double sigma = std::sqrt(2.0) / mu;  // each μ_i = μ/√2
  gdp.charge_gaussian("a", 1.0, sigma);
  gdp.charge_gaussian("b", 1.0, sigma);
  CHECK(gdp.spent().epsilon <= 1.0 * (1 + 1e-9));
  CHECK(gdp.spent().epsilon >= 1.0 - 1e-6);
  PrivacyAccountant zcdp(budget);
  zcdp.charge_zcdp("a", gaussian_rho(1.0, sigma));
  CHECK_THROWS_AS(zcdp.charge_zcdp("b", gaussian_rho(1.0, sigma)), BudgetExhausted);
  CHECK(std::isinf(zcdp.spent().gdp_epsilon));  // a zCDP-only charge is not known to be Gaussian
  // A pure charge switches the GDP bound off: then the zCDP bound decides.
  PrivacyAccountant mixed(EpsDelta(3.0, 1e-6));
  mixed.charge_gaussian("g", 1.0, sigma);
  CHECK(std::isfinite(mixed.spent().gdp_epsilon));
  mixed.charge_pure("p", 0.1);
  CHECK(std::isinf(mixed.spent().gdp_epsilon));
  CHECK(mixed.spent().epsilon == std::min(mixed.spent().basic_epsilon, mixed.spent().zcdp_epsilon));
  // The flag travels in the ledger: the restored accountant still composes under GDP.
  const PrivacyAccountant back = PrivacyAccountant::load(gdp.save());
  CHECK(back.ledger()[0].gaussian);
  CHECK(back.spent().epsilon == gdp.spent().epsilon);
}

TEST_CASE("Gaussian charges with a single-release guarantee use the better bound", "[accountant][gaussian]") {
  // One analytic Gaussian release calibrated exactly to (0.5, 1e-7).
  const EpsDelta single(0.5, 1e-7);
  const double sigma = analytic_gaussian_sigma(1.0, single);
  const double rho = gaussian_rho(1.0, sigma);
  {
    // Budget δ = 1e-7: zCDP converts at the same δ, and CKS (valid for every ρ-zCDP mechanism) is weaker
    // than the exact profile of this Gaussian, so ε_CKS > 0.5: basic (0.5, 1e-7) is chosen.
    PrivacyAccountant acc(EpsDelta(1.0, 1e-7));
    acc.charge_gaussian("g", 1.0, sigma, single);
    const Spent s = acc.spent();
    CHECK(s.basic_epsilon == 0.5);
    CHECK(s.basic_delta == 1e-7);
    CHECK(s.zcdp_epsilon == Approx(epsilon_from_rho_cks(rho, 1e-7)).epsilon(1e-15));
    CHECK(s.zcdp_epsilon > 0.5);
    CHECK(s.epsilon == 0.5);
    CHECK(s.delta == 1e-7);
  }
  {
    // Budget δ = 1e-6: zCDP may convert at the larger δ and then beats basic (≈ 0.48 < 0.5); the GDP
    // bound reads the same Gaussian's exact profile at that δ (≈ 0.44) and beats both. The spent δ is
    // then the budget's.
    PrivacyAccountant acc(EpsDelta(1.0, 1e-6));
    acc.charge_gaussian("g", 1.0, sigma, single);
    const Spent s = acc.spent();
    CHECK(s.zcdp_epsilon == Approx(epsilon_from_rho_cks(rho, 1e-6)).epsilon(1e-15));
    CHECK(s.zcdp_epsilon < 0.5);
    CHECK(s.gdp_epsilon == epsilon_from_gdp(1.0 / sigma, 1e-6));
    CHECK(s.gdp_epsilon < s.zcdp_epsilon);
    CHECK(s.epsilon == s.gdp_epsilon);
    CHECK(s.delta == 1e-6);
  }

  // A claimed guarantee that σ does not give is refused: the classical σ at ε = 10 is not (10, 1e-5)-DP.
  PrivacyAccountant acc2(EpsDelta(100.0, 1e-3));
  const double classical = paper_gaussian_multiplier(EpsDelta(10.0, 1e-5));
  REQUIRE_THROWS_AS(acc2.charge_gaussian("bad claim", 1.0, classical, EpsDelta(10.0, 1e-5)), InvalidParameter);
  CHECK(acc2.ledger().empty());
}

TEST_CASE("pure charges: basic wins for few large charges", "[accountant][pure]") {
  // 2 × ε = 0.5: basic Σε = 1; zCDP ρ = 2·0.125 = 0.25 → ε_CKS(0.25, 1e-6) ≈ 3.5 > 1.
  PrivacyAccountant acc(EpsDelta(10.0, 1e-6));
  acc.charge_pure("a", 0.5);
  acc.charge_pure("b", 0.5);
  const Spent s = acc.spent();
  CHECK(s.basic_epsilon == 1.0);
  CHECK(s.basic_delta == 0.0);
  CHECK(s.rho == 0.25);
  CHECK(s.zcdp_epsilon == Approx(epsilon_from_rho_cks(0.25, 1e-6)).epsilon(1e-15));
  CHECK(s.zcdp_epsilon > s.basic_epsilon);
  CHECK(s.epsilon == 1.0);
  CHECK(s.delta == 0.0);
  CHECK(acc.remaining_epsilon() == 9.0);
}

TEST_CASE("pure charges: zCDP wins for many small charges", "[accountant][pure]") {
  // 400 × ε = 0.01: basic Σε = 4 (up to summation round-off); ρ = 400·5e-5 = 0.02 →
  // ε_CKS(0.02, 1e-6) ≈ 0.9 < 4.
  PrivacyAccountant acc(EpsDelta(10.0, 1e-6));
  for (int i = 0; i < 400; ++i) acc.charge_pure("count", 0.01);
  const Spent s = acc.spent();
  CHECK(s.basic_epsilon == Approx(4.0).epsilon(1e-13));
  CHECK(s.rho == Approx(0.02).epsilon(1e-13));
  CHECK(s.zcdp_epsilon == Approx(epsilon_from_rho_cks(s.rho, 1e-6)).epsilon(1e-15));
  CHECK(s.zcdp_epsilon < 1.0);
  CHECK(s.epsilon == s.zcdp_epsilon);
  CHECK(s.delta == 1e-6);

  // Under a pure budget (δ = 0) no zCDP conversion exists: basic composition is the only bound.
  PrivacyAccountant pure(EpsDelta(10.0, 0.0));
  for (int i = 0; i < 400; ++i) pure.charge_pure("count", 0.01);
  CHECK(pure.spent().zcdp_epsilon == kInf);
  CHECK(pure.spent().epsilon == Approx(4.0).epsilon(1e-13));
  CHECK(pure.spent().delta == 0.0);
}

TEST_CASE("the zCDP bound lets pure charges run past the basic budget", "[accountant][pure]") {
  // Budget ε = 1: basic alone would stop at 100 charges of 0.01, zCDP allows ρ up to rho_for_budget.
  // Each charge adds ρ = 5e-5, so exactly floor(rho_for_budget/5e-5) charges fit (checked away from a
  // boundary: the quotient's fractional part is not within 1e-6 of an integer).
  const EpsDelta budget(1.0, 1e-6);
  const double q = rho_for_budget(budget) / 5e-5;
  REQUIRE(std::abs(q - std::round(q)) > 1e-3);
  PrivacyAccountant acc(budget);
  long n = 0;
  try {
    for (;; ++n) acc.charge_pure("c", 0.01);
  } catch (const BudgetExhausted&) {
  }
  CHECK(n == static_cast<long>(std::floor(q)));
  CHECK(n > 100);
  CHECK(acc.spent().epsilon <= 1.0);
}

TEST_CASE("mixed approximate and zCDP charges", "[accountant][mixed]") {
  PrivacyAccountant acc(EpsDelta(2.0, 1e-5));
  acc.charge_approx("sparse vector", EpsDelta(0.5, 4e-6));
  acc.charge_zcdp("gaussian sum", 0.02);
  const Spent s = acc.spent();
  // Basic: 0.5 + ∞ (the zCDP charge has no single-release guarantee). zCDP: the approx charge takes its
  // (0.5, 4e-6) and the rest of δ converts ρ: 0.5 + ε_CKS(0.02, 1e-5 − 4e-6).
  CHECK(s.basic_epsilon == kInf);
  CHECK(s.basic_delta == 4e-6);
  CHECK(s.rho == 0.02);
  CHECK(s.zcdp_epsilon == Approx(0.5 + epsilon_from_rho_cks(0.02, 1e-5 - 4e-6)).epsilon(1e-15));
  CHECK(s.epsilon == s.zcdp_epsilon);
  CHECK(s.delta == 1e-5);

  // spent_with previews and does not change the ledger.
  const Spent p = acc.spent_with(Charge{"preview", 0.01, kInf, 0.0});
  CHECK(p.rho == Approx(0.03).epsilon(1e-15));
  CHECK(acc.ledger().size() == 2);
  CHECK(acc.spent().rho == 0.02);

  // The standard conversion, when configured, is used instead (and is larger).
  PrivacyAccountant std_acc(EpsDelta(2.0, 1e-5), ZcdpConversion::standard);
  std_acc.charge_approx("sparse vector", EpsDelta(0.5, 4e-6));
  std_acc.charge_zcdp("gaussian sum", 0.02);
  CHECK(std_acc.spent().zcdp_epsilon == Approx(0.5 + epsilon_from_rho_standard(0.02, 6e-6)).epsilon(1e-15));
  CHECK(std_acc.spent().epsilon > s.epsilon);
}

TEST_CASE("approximate charges that use up delta leave nothing for zCDP", "[accountant][mixed]") {
  PrivacyAccountant acc(EpsDelta(2.0, 1e-5));
  // δ past the budget: refused, ledger unchanged.
  REQUIRE_THROWS_AS(acc.charge_approx("too much delta", EpsDelta(0.1, 2e-5)), BudgetExhausted);
  CHECK(acc.ledger().empty());
  acc.charge_approx("all delta", EpsDelta(0.5, 1e-5));
  CHECK(acc.spent().epsilon == 0.5);
  CHECK(acc.spent().delta == 1e-5);
  // Now δ − Σδ_i = 0: the zCDP bound is +∞ and basic is +∞ too: refused with the label and +inf.
  REQUIRE_THROWS_WITH(acc.charge_zcdp("late gaussian", 1e-6), Contains("late gaussian") && Contains("inf"));
  // A pure charge still fits in the basic bound.
  acc.charge_pure("laplace", 0.5);
  CHECK(acc.spent().epsilon == 1.0);
  CHECK(acc.spent().delta == 1e-5);
  CHECK(acc.ledger().size() == 2);
}

TEST_CASE("refusal allows only float round-off past the budget", "[accountant]") {
  // Σε exactly at the budget passes; 1e-6 relative over it is refused (slack is 1e-9).
  PrivacyAccountant acc(EpsDelta(1.0, 0.0));
  for (int i = 0; i < 10; ++i) acc.charge_pure("tenth", 0.1);  // sums to 0.9999999999999999
  CHECK(acc.spent().epsilon == Approx(1.0).epsilon(1e-15));
  REQUIRE_THROWS_AS(acc.charge_pure("tiny", 1e-6), BudgetExhausted);
  CHECK(acc.ledger().size() == 10);
}

TEST_CASE("accountant rejects bad parameters naming them", "[accountant][errors]") {
  PrivacyAccountant acc(EpsDelta(1.0, 1e-6));
  for (double bad : {0.0, -1.0, kNaN, kInf}) {
    REQUIRE_THROWS_WITH(acc.charge_pure("p", bad), Contains("epsilon"));
    REQUIRE_THROWS_WITH(acc.charge_zcdp("z", bad), Contains("rho"));
    REQUIRE_THROWS_WITH(acc.charge_gaussian("g", bad, 1.0), Contains("l2_sensitivity"));
    REQUIRE_THROWS_WITH(acc.charge_gaussian("g", 1.0, bad), Contains("sigma"));
    REQUIRE_THROWS_AS(acc.charge_pure("p", bad), InvalidParameter);
  }
  REQUIRE_THROWS_WITH(acc.spent_with(Charge{"x", -1.0, 0.1, 0.0}), Contains("rho"));
  REQUIRE_THROWS_WITH(acc.spent_with(Charge{"x", std::nullopt, kNaN, 0.0}), Contains("epsilon"));
  REQUIRE_THROWS_WITH(acc.spent_with(Charge{"x", std::nullopt, 0.1, 1.0}), Contains("delta"));
  CHECK(acc.ledger().empty());
}

TEST_CASE("ledger serialization round trip", "[accountant][serialize]") {
  PrivacyAccountant acc(EpsDelta(5.0, 1e-5), ZcdpConversion::standard);
  acc.charge_gaussian("covariance tree node", 1.0, 20.0);
  acc.charge_gaussian("with target", 1.0, analytic_gaussian_sigma(1.0, EpsDelta(0.3, 1e-7)), EpsDelta(0.3, 1e-7));
  acc.charge_pure("laplace \xCE\xB5", 0.25);  // UTF-8 label
  acc.charge_approx("svt", EpsDelta(0.1, 1e-6));
  acc.charge_zcdp("", 0.001);
  const std::string bytes = acc.save();
  const PrivacyAccountant back = PrivacyAccountant::load(bytes);
  CHECK(same_ledger(acc, back));
  CHECK(back.ledger()[0].epsilon == kInf);
  CHECK_FALSE(back.ledger()[3].rho.has_value());
  CHECK(back.spent().epsilon == acc.spent().epsilon);
  CHECK(back.spent().rho == acc.spent().rho);
  CHECK(back.save() == bytes);

  // An empty ledger and the default conversion round-trip too.
  const PrivacyAccountant empty(EpsDelta(1.0, 0.0));
  CHECK(same_ledger(empty, PrivacyAccountant::load(empty.save())));

  // The independent wire writer agrees with the library's format.
  const std::string crafted = ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", true, 0.01, kInf, 0.0}});
  const PrivacyAccountant parsed = PrivacyAccountant::load(crafted);
  REQUIRE(parsed.ledger().size() == 1);
  CHECK(parsed.ledger()[0].rho == 0.01);
  CHECK(parsed.budget().delta() == 1e-6);
  CHECK(parsed.conversion() == ZcdpConversion::cks2020);

  // A resumed ledger keeps refusing at the same point.
  PrivacyAccountant resumed = PrivacyAccountant::load(bytes);
  REQUIRE_THROWS_AS(resumed.charge_pure("big", 5.0), BudgetExhausted);
}

TEST_CASE("charge ids: drawn per charge, kept by a round trip; ledgers without them match on fields", "[accountant][serialize]") {
  PrivacyAccountant acc(EpsDelta(3.0, 1e-6));
  acc.charge_pure("a", 0.25);
  acc.charge_pure("a", 0.25);
  REQUIRE(acc.ledger().size() == 2);
  CHECK(acc.ledger()[0].id != 0);
  CHECK(acc.ledger()[0].id != acc.ledger()[1].id);  // 2^-64 to collide by chance
  const PrivacyAccountant back = PrivacyAccountant::load(acc.save());
  CHECK(back.ledger()[0].id == acc.ledger()[0].id);
  CHECK(back.ledger()[1].id == acc.ledger()[1].id);

  // A ledger written before ids (the wire writer writes none): its entries read as id 0, and a
  // restore of it onto an accountant resumed from it finds the common prefix by the fields alone.
  const std::string old = ledger_bytes(1, 3.0, 1e-6, 0, {RawCharge{"old", true, 0.01, kInf, 0.0}});
  PrivacyAccountant resumed = PrivacyAccountant::load(old);
  CHECK(resumed.ledger()[0].id == 0);
  resumed.charge_pure("new", 0.5);
  resumed.restore(old);
  CHECK(resumed.ledger().size() == 2);
}

TEST_CASE("load rejects corrupt ledgers with CorruptInput", "[accountant][serialize]") {
  const auto bad = [](const std::string& bytes) {
    REQUIRE_THROWS_AS(PrivacyAccountant::load(bytes), CorruptInput);
  };
  SECTION("unparsable bytes") {
    bad(std::string("\xFF\xFF\xFF\xFF\xFF", 5));  // an unterminated varint tag
    PrivacyAccountant acc(EpsDelta(1.0, 1e-6));
    acc.charge_pure("x", 0.1);
    const std::string good = acc.save();
    bad(good.substr(0, good.size() - 3));  // truncated inside the seal
  }
  SECTION("cut at any byte, or one bit flipped: the seal refuses it") {
    // Before the seal, a ledger cut after a charge parsed as a shorter valid ledger (spent budget lost).
    PrivacyAccountant acc(EpsDelta(1.0, 1e-6));
    for (int i = 0; i < 3; ++i) acc.charge_pure("c" + std::to_string(i), 0.1);
    const std::string good = acc.save();
    for (std::size_t n = 0; n < good.size(); ++n) {
      INFO("cut to " << n << " of " << good.size() << " bytes");
      REQUIRE_THROWS_AS(PrivacyAccountant::load(good.substr(0, n)), CorruptInput);
    }
    for (std::size_t bit = 0; bit < 8 * good.size(); ++bit) {
      std::string flipped = good;
      flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
      INFO("bit " << bit << " flipped");
      REQUIRE_THROWS_AS(PrivacyAccountant::load(flipped), CorruptInput);  // CRC-32 catches every 1-bit error
    }
    REQUIRE_THROWS_WITH(PrivacyAccountant::load(good.substr(0, good.size() - 6)), Contains("CRC-32 trailer"));
  }
  SECTION("wrong format_version") {
    bad(ledger_bytes(0, 1.0, 1e-6, 0, {}));
    bad(ledger_bytes(2, 1.0, 1e-6, 0, {}));
    bad(std::string());  // all defaults: version 0
    REQUIRE_THROWS_WITH(PrivacyAccountant::load(ledger_bytes(2, 1.0, 1e-6, 0, {})),
                        Contains("format_version 2"));
  }
  SECTION("bad budget or conversion") {
    bad(ledger_bytes(1, 0.0, 1e-6, 0, {}));
    bad(ledger_bytes(1, -1.0, 1e-6, 0, {}));
    bad(ledger_bytes(1, kInf, 1e-6, 0, {}));
    bad(ledger_bytes(1, kNaN, 1e-6, 0, {}));
    bad(ledger_bytes(1, 1.0, 1.0, 0, {}));
    bad(ledger_bytes(1, 1.0, -1e-6, 0, {}));
    bad(ledger_bytes(1, 1.0, kNaN, 0, {}));
    bad(ledger_bytes(1, 1.0, 1e-6, 7, {}));
  }
  SECTION("out-of-domain charges") {
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", true, 0.01, kNaN, 0.0}}));
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", true, 0.01, -0.1, 0.0}}));
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", true, 0.01, kInf, -1e-9}}));
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", true, 0.01, kInf, kNaN}}));
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", true, 0.01, kInf, 1.0}}));
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", true, -0.01, kInf, 0.0}}));
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", true, kNaN, kInf, 0.0}}));
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", true, kInf, kInf, 0.0}}));
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", true, 0.0, kInf, 0.0}}));
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", false, 0.01, 0.1, 0.0}}));  // rho without has_rho
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"c", false, 0.0, kInf, 0.0}}));  // unbounded, no rho
    REQUIRE_THROWS_WITH(
        PrivacyAccountant::load(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"named", true, 0.01, kNaN, 0.0}})),
        Contains("named") && Contains("epsilon"));
  }
  SECTION("ledger over its own budget") {
    // Control: within budget parses.
    REQUIRE_NOTHROW(PrivacyAccountant::load(
        ledger_bytes(1, 1.0, 0.0, 0, {RawCharge{"a", true, 0.125, 0.5, 0.0}, RawCharge{"b", true, 0.125, 0.5, 0.0}})));
    bad(ledger_bytes(1, 1.0, 0.0, 0,
                     {RawCharge{"a", true, 0.125, 0.5, 0.0}, RawCharge{"b", true, 0.125, 0.5, 0.0},
                      RawCharge{"c", true, 0.125, 0.5, 0.0}}));
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"z", true, 1.0, kInf, 0.0}}));  // ρ = 1 ⇒ ε ≈ 7.8 > 1
    bad(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"d", false, 0.0, 0.1, 2e-6}}));  // δ over budget
    REQUIRE_THROWS_WITH(
        PrivacyAccountant::load(ledger_bytes(1, 1.0, 1e-6, 0, {RawCharge{"z", true, 1.0, kInf, 0.0}})),
        Contains("budget"));
  }
}

// A Gaussian's privacy profile has δ(ε) > 0 at every finite ε, so under a pure budget (δ = 0) the
// GDP bound is +inf, as the zCDP one is. It was the GDP-to-(ε, δ) conversion's InvalidParameter
// ("delta must be in (0, 1)"): a charge refused with the wrong type, and a ledger's bytes refused
// as a bad argument (found by fuzz_accountant; reproducer in fuzz/regressions/fuzz_accountant/).
TEST_CASE("a pure budget and Gaussian charges: no GDP bound, never InvalidParameter", "[accountant][gaussian]") {
  SECTION("charging: exhausted, nothing charged") {
    PrivacyAccountant acc(EpsDelta(1.0, 0.0));
    REQUIRE_THROWS_AS(acc.charge_gaussian("g", 1.0, 100.0), BudgetExhausted);
    REQUIRE_THROWS_AS(acc.charge_gaussian("g", 1.0, 100.0, EpsDelta(0.5, 1e-9)), BudgetExhausted);
    CHECK(acc.ledger().empty());
    CHECK(acc.spent().epsilon == 0.0);
  }
  SECTION("a ledger's bytes: CorruptInput (its Gaussian charges spend ε = +inf of a pure budget)") {
    RawCharge g{"g", true, 0.01, kInf, 0.0, true};
    REQUIRE_THROWS_AS(PrivacyAccountant::load(ledger_bytes(1, 1.0, 0.0, 0, {g})), CorruptInput);
    REQUIRE_THROWS_WITH(PrivacyAccountant::load(ledger_bytes(1, 1.0, 0.0, 1, {g, g})),
                        Contains("more than its own budget"));
    // Control: the same charge under a budget with δ > 0 reads, and its GDP bound is finite.
    const PrivacyAccountant ok = PrivacyAccountant::load(ledger_bytes(1, 1.0, 1e-6, 0, {g}));
    CHECK(std::isfinite(ok.spent().gdp_epsilon));
  }
}

TEST_CASE("parse_zcdp_conversion: the inverse of to_string; other names refused") {
  for (const ZcdpConversion c : {ZcdpConversion::cks2020, ZcdpConversion::standard})
    CHECK(parse_zcdp_conversion(to_string(c)) == c);
  CHECK(std::string(to_string(ZcdpConversion::cks2020)) == "cks2020");
  CHECK_THROWS_AS(parse_zcdp_conversion("cks"), InvalidParameter);
  CHECK_THROWS_WITH(parse_zcdp_conversion("cks"), Contains("zCDP conversion 'cks': expected cks2020 or standard"));
}

}  // namespace test_accountant
